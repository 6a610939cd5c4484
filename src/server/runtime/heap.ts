import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

/**
 * V8 settings of the production server, for a heap that stays near what it holds alive. Decision
 * record 013.
 *
 * - `--heap-growing-percent=15`: how far the old generation may grow past what the last full
 *   collection found alive. V8 picks up to 4x when collections are cheap, which they are in this
 *   server; under a stream of signups that let garbage pile up to about three times the live heap
 *   between full collections, some 60-80 MB of RSS that held nothing.
 * - The young generation is held at two 4 MB semi-spaces (YOUNG_GENERATION_BYTES) instead of V8's
 *   2 x 16 MB: a signup's garbage dies young either way, and the larger space only took RSS. Smaller
 *   costs throughput: at 2 x 1 MB, signups/s fell by about 30% (more scavenges, more objects
 *   promoted to the old generation).
 *
 * V8 fixes the young generation's maximum when the process starts (`--max-semi-space-size`), but
 * doubles it only at a collection and only by `--semi-space-growth-factor`, which it reads as it
 * runs: after each collection the factor is set to 1 once the space has reached its size, and back to
 * 2 if V8 has shrunk it (when the server is idle).
 *
 * V8 puts the growth factor back to 2 whenever it sets up a heap, as it does for every worker
 * thread: the factor is set again after every collection that finds the space at its size, and
 * every worker the server starts goes through `startModuleWorker` (module-worker.ts), which applies
 * the settings again once the thread is online. A worker that starts while the space is at its
 * size can still let one collection double it; V8 shrinks it back when the server is idle.
 */
export const HEAP_GROWING_PERCENT = 15;
/** Both semi-spaces of the young generation together, as V8 reports its `new_space` size. */
export const YOUNG_GENERATION_BYTES = 8 * 1024 * 1024;

let configured = false;
let growthFactor = 2;

function youngGenerationBytes(): number {
  return v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}

function holdYoungGeneration(): void {
  const factor = youngGenerationBytes() >= YOUNG_GENERATION_BYTES ? 1 : 2;
  // Set again after every collection at the size, not only on a change: V8 raises the factor back
  // to 2 whenever it sets up a heap, and a worker thread (Node's own module loader thread included)
  // has one of its own.
  if (factor === growthFactor && factor === 2) return;
  growthFactor = factor;
  v8.setFlagsFromString(`--semi-space-growth-factor=${factor}`);
}

/**
 * Applied by the server's entry (main.ts) before the server's modules load, so that compiling them
 * does not already grow the young generation past its size; not by tests or the CLI.
 */
export function configureHeap(): void {
  if (configured) return;
  configured = true;
  applyHeapFlags();
  new PerformanceObserver(holdYoungGeneration).observe({ type: 'gc' });
}

/** Applies the settings again if configureHeap() has run (a worker thread has just started). */
export function applyHeapFlags(): void {
  if (!configured) return;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  v8.setFlagsFromString(`--semi-space-growth-factor=${growthFactor}`);
  holdYoungGeneration();
}
