import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { Readable, Writable } from 'node:stream';
import { projectRoot } from '../../src/server/config.js';
import type { CliIo } from '../../src/server/cli/program.js';

/**
 * Real server processes for tests that need more than `app.inject` (several instances, signals),
 * command-line tools run as processes, and the same tools run in-process.
 */

/** Two distinct free ports (both held open while choosing, then released for the servers). */
export async function freePorts(): Promise<[number, number]> {
  const servers = [net.createServer(), net.createServer()];
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))));
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return [ports[0]!, ports[1]!];
}

export interface Instance {
  name: string;
  base: string;
  child: ChildProcess;
  output: () => string;
}

/**
 * A server process on `port`: from the TypeScript sources, or with `build` the production build as
 * `npm start` runs it (`node dist/server/main.js`, the bundled server; `npm run build` first).
 */
export function startInstance(name: string, port: number, env: Record<string, string>, options: { build?: boolean } = {}): Instance {
  // `node --import tsx` rather than the tsx binary: one process, so SIGTERM reaches the server itself.
  const args = options.build ? ['dist/server/main.js'] : ['--import', 'tsx', 'src/server/main.ts'];
  const child = spawn(process.execPath, args, {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  return { name, base: `http://127.0.0.1:${port}`, child, output: () => output };
}

export async function waitHealthy(instance: Instance, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (instance.child.exitCode !== null) throw new Error(`${instance.name} exited (${instance.child.exitCode}):\n${instance.output()}`);
    try {
      const res = await fetch(`${instance.base}/healthz`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${instance.name} not healthy after ${timeoutMs} ms:\n${instance.output()}`);
}

export async function stopInstance(instance: Instance): Promise<void> {
  if (instance.child.exitCode !== null || instance.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => instance.child.once('exit', () => resolve()));
  instance.child.kill('SIGTERM');
  const timer = setTimeout(() => instance.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}


export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion, feeding `stdin` (or nothing) and collecting both outputs. */
export function runProcess(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; stdin?: string } = {}): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? projectRoot, env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

export interface CliResult extends ProcessResult {
  code: number;
  /** stdout as written, chunk by chunk. */
  chunks: string[];
}

function sink(into: string[]): Writable {
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      into.push(chunk.toString());
      callback();
    },
  });
}

/**
 * Runs a CLI's `run(argv, io)` (src/server/cli/admin.ts, db.ts) in this process, feeding `stdin`
 * (a pipe, not a terminal) and collecting both outputs.
 */
export async function runCliInProcess(
  run: (argv: readonly string[], io: Partial<CliIo>) => Promise<number>,
  argv: string[],
  io: { env: NodeJS.ProcessEnv; cwd?: string; stdin?: string },
): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, { stdin: Readable.from([io.stdin ?? '']), stdout: sink(out), stderr: sink(err), env: io.env, cwd: io.cwd });
  return { code, stdout: out.join(''), stderr: err.join(''), chunks: out };
}
