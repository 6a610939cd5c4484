import { spawn, type ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { projectRoot } from '../../src/server/config.js';
import type { CliIo } from '../../src/server/cli/program.js';

/**
 * Real server processes for tests that need more than `app.inject` (several instances, signals),
 * command-line tools run as processes, and the same tools run in-process.
 */

/** Preloaded into the server processes: reports the port the server listens on (report-port.mjs). */
const REPORT_PORT = fileURLToPath(new URL('./report-port.mjs', import.meta.url));
/** The child's file descriptor the port is reported on: its fourth stdio entry. */
const REPORT_PORT_FD = 3;

export interface Instance {
  name: string;
  /** The server's origin, http://127.0.0.1:PORT: known once it listens (after waitHealthy). */
  readonly base: string;
  child: ChildProcess;
  output: () => string;
  /** The port the server listens on, once it does. */
  port: Promise<number>;
}

/**
 * A server process on a port of the kernel's choosing (PORT=0), reported by the server itself once it
 * listens: from the TypeScript sources, or with `build` the production build as `npm start` runs it
 * (`node dist/server/main.js`, the bundled server; `npm run build` first).
 */
export function startInstance(name: string, env: Record<string, string>, options: { build?: boolean } = {}): Instance {
  // `node --import tsx` rather than the tsx binary: one process, so SIGTERM reaches the server itself.
  const entry = options.build ? ['dist/server/main.js'] : ['--import', 'tsx', 'src/server/main.ts'];
  const child = spawn(process.execPath, ['--import', pathToFileURL(REPORT_PORT).href, ...entry], {
    cwd: projectRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      LOG_LEVEL: 'warn',
      // No test depends on the network's DNS: the MX check's own tests run a DNS server (support/dns.ts).
      SIGNUP_CHECK_MX: 'off',
      ...env,
      PORT: '0',
      HOST: '127.0.0.1',
      REPORT_PORT_FD: String(REPORT_PORT_FD),
    },
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  let known: number | null = null;
  const port = new Promise<number>((resolve, reject) => {
    let text = '';
    const reported = child.stdio[REPORT_PORT_FD] as Readable;
    reported.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('\n')) resolve((known = Number(text.trim())));
    });
    reported.on('error', () => undefined);
    child.once('exit', (code, signal) => reject(new Error(`${name} exited (${code ?? signal}) before listening:\n${output}`)));
  });
  port.catch(() => undefined);
  return {
    name,
    get base() {
      if (known === null) throw new Error(`${name} is not listening yet: await waitHealthy(instance) first`);
      return `http://127.0.0.1:${known}`;
    },
    child,
    output: () => output,
    port,
  };
}

export async function waitHealthy(instance: Instance, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${instance.name} not listening after ${timeoutMs} ms:\n${instance.output()}`)), timeoutMs);
  });
  try {
    await Promise.race([instance.port, late]);
  } finally {
    clearTimeout(timer);
  }
  while (Date.now() < deadline) {
    if (instance.child.exitCode !== null) throw new Error(`${instance.name} exited (${instance.child.exitCode}):\n${instance.output()}`);
    try {
      const res = await fetch(`${instance.base}/healthz`);
      if (res.status === 200) return;
    } catch {
      // not answering yet
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
