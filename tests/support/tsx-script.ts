import { spawn } from 'node:child_process';
import { projectRoot } from '../../src/server/config.js';

/**
 * Runs a TypeScript script (through tsx) in a Node process of its own, from the project's root, with
 * only PATH, HOME and `env` in its environment, and returns the last line it printed, parsed as JSON.
 * For what only a separate process can show: the modules a server loads, V8's process-wide flags.
 * `nodeArgs` go before the script (V8 flags, say). Rejects with the script's output if it fails.
 */
export async function runTsxScript<T>(script: string, args: string[] = [], options: { env?: Record<string, string>; nodeArgs?: string[] } = {}): Promise<T> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', script, ...args], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`${script} ${args.join(' ')} exited with ${code}:\n${err}${out}`);
  return JSON.parse(out.trim().split('\n').at(-1)!) as T;
}
