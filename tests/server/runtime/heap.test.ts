import { describe, expect, it } from 'vitest';
import { BULK_YOUNG_GENERATION_BYTES, YOUNG_GENERATION_BYTES } from '../../../src/server/runtime/heap.js';
import { runTsxScript } from '../../support/tsx-script.js';

/**
 * The production server's V8 settings (runtime/heap.ts) hold while it runs: the young generation
 * stays at its size under a stream of allocations, also after worker threads have started (V8 resets
 * the growth factor as it sets up each one's heap). Each case runs in a process of its own (V8's
 * flags are per process).
 */
interface YoungGeneration {
  /** Its size before the allocations. */
  before: number;
  /** Its size after them. */
  young: number;
  /** bulk: its size at the end of allowLargeYoungGeneration(). */
  bulk?: number;
}

function youngGenerationOf(mode: 'configured' | 'loading' | 'default' | 'bulk', stretch: 'turns' | 'sync' = 'turns'): Promise<YoungGeneration> {
  // V8's default maximum depends on the machine's memory (2 x 4 MB at 2 GiB or less): the default
  // and loading cases get the 2 x 16 MB it has on larger machines, so that growth is possible anywhere.
  // bulk gets the 2 x 32 MB it has on them (V8's flag counts one semi-space, in MB).
  const v8Flags = mode === 'configured' ? [] : [`--max-semi-space-size=${mode === 'bulk' ? BULK_YOUNG_GENERATION_BYTES / 2 / 2 ** 20 : 16}`];
  return runTsxScript<YoungGeneration>('tests/support/young-generation.ts', [mode, stretch], { nodeArgs: v8Flags });
}

async function youngGeneration(mode: 'configured' | 'default'): Promise<number> {
  return (await youngGenerationOf(mode)).young;
}

describe('the server heap settings', () => {
  it('hold the young generation at its size after a worker thread has started', async () => {
    const [configured, untouched] = await Promise.all([youngGeneration('configured'), youngGeneration('default')]);
    // At the size, or a little under it after V8 has shrunk it; not left at V8's initial 2 x 1 MB.
    expect(configured).toBeLessThanOrEqual(YOUNG_GENERATION_BYTES);
    expect(configured).toBeGreaterThan(YOUNG_GENERATION_BYTES / 2);
    // The same allocations grow V8's young generation past that size when it is left alone.
    expect(untouched).toBeGreaterThan(YOUNG_GENERATION_BYTES);
  }, 60_000);

  it('keep the young generation from growing while the server loads, even in one synchronous stretch', async () => {
    const [loading, untouched] = await Promise.all([youngGenerationOf('loading', 'sync'), youngGenerationOf('default', 'sync')]);
    // It could have grown (room to double at least once), and did not (V8 may shrink it).
    expect(loading.before * 2).toBeLessThanOrEqual(32 * 1024 * 1024);
    expect(loading.young).toBeLessThanOrEqual(loading.before);
    // Where the observer that holds it at its size never runs, V8 left alone doubles it at every collection.
    expect(untouched.young).toBeGreaterThan(YOUNG_GENERATION_BYTES);
  }, 60_000);

  it('let the young generation grow while bulk work asks for it, and hold it again after', async () => {
    const { bulk, young } = await youngGenerationOf('bulk');
    expect(bulk).toBeGreaterThan(YOUNG_GENERATION_BYTES);
    expect(bulk).toBeLessThanOrEqual(BULK_YOUNG_GENERATION_BYTES);
    // Held again: it did not grow any further (V8 may shrink it).
    expect(young).toBeLessThanOrEqual(bulk!);
  }, 60_000);
});
