import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/server/config.js';
import { YOUNG_GENERATION_BYTES } from '../../src/server/runtime/heap.js';

/**
 * The production server's V8 settings (runtime/heap.ts) hold while it runs: the young generation
 * stays at its size under a stream of allocations, also after worker threads have started (V8 resets
 * the growth factor as it sets up each one's heap). Each case runs in a process of its own (V8's
 * flags are per process).
 */
async function youngGeneration(mode: 'configured' | 'default'): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'tests/support/young-generation.ts', mode], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`young-generation ${mode} exited with ${code}:\n${err}${out}`);
  return (JSON.parse(out.trim().split('\n').at(-1)!) as { young: number }).young;
}

describe('the server heap settings', () => {
  it('hold the young generation at its size after a worker thread has started', async () => {
    const [configured, untouched] = await Promise.all([youngGeneration('configured'), youngGeneration('default')]);
    expect(configured).toBeGreaterThan(0);
    expect(configured).toBeLessThanOrEqual(YOUNG_GENERATION_BYTES);
    // The same allocations grow V8's default young generation past that size.
    expect(untouched).toBeGreaterThan(YOUNG_GENERATION_BYTES);
  }, 60_000);
});
