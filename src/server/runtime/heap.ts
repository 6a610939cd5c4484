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
 * - The young generation is held at (at most) two 4 MB semi-spaces, YOUNG_GENERATION_BYTES, instead
 *   of V8's up to 2 x 16 MB (on a machine with 8 GiB or more): a signup's garbage dies young either
 *   way, and the larger space only took RSS. Smaller costs throughput: at 2 x 1 MB, signups/s fell by
 *   about 30% (more scavenges, more objects promoted to the old generation).
 *
 * V8 fixes the young generation's maximum when the process starts (`--max-semi-space-size`, a
 * command-line flag), but grows it only at a collection and only by `--semi-space-growth-factor`,
 * which it reads as it runs: after each collection the factor is 2 while doubling stays within the
 * size, and 1 otherwise. V8 shrinks the space when the server is idle, to sizes that are not always
 * powers of two, so it may settle a little under the size (7 MB, say).
 *
 * While the server's modules load (configureHeap() until heapLoaded(), main.ts) the factor is 1: the
 * production server is bundled (scripts/bundle-server.ts), and evaluating a bundle is one long
 * synchronous stretch in which the observer below never runs, so V8 would double the space at every
 * collection (to 2 x 8 MB, where it stayed).
 *
 * Where this does not hold:
 * - V8 puts the growth factor back to 2 whenever it sets up a heap, as it does for every worker
 *   thread. The factor is set again after every collection that finds the space too large to
 *   double, and every worker the server starts goes through `startModuleWorker`
 *   (module-worker.ts), which applies the settings again once the thread is online; still, a
 *   collection between the reset and then can double the space once.
 * - The observer hears of collections only between turns of the event loop: a long synchronous
 *   stretch that allocates a lot (a large import) can double the space more than once.
 * In both cases the space stays larger until V8 shrinks it when the server is idle. The factor is
 * the whole process's: a worker thread's young generation does not grow either while it is 1 (the
 * password-estimate thread loads its dictionaries about 80 ms slower).
 */
export const HEAP_GROWING_PERCENT = 15;
/** Both semi-spaces of the young generation together, as V8 reports its `new_space` size. */
export const YOUNG_GENERATION_BYTES = 8 * 1024 * 1024;
/**
 * The young generation's size while bulk work runs (an export: allowLargeYoungGeneration). A
 * million rows of an export are ~1 GB of short-lived strings and objects: at 2 x 4 MB V8 scavenged
 * ~370 times per export, each time copying the batch in hand, and promoted enough of them to run
 * ~6 full collections; at 2 x 32 MB (V8's own maximum on a machine of 8 GiB or more) what a
 * scavenge finds alive is the same batch, eight times less often, and it dies before the next one.
 * Decision 047.
 */
export const BULK_YOUNG_GENERATION_BYTES = 64 * 1024 * 1024;
export const BULK_HEAP_GROWING_PERCENT = 100;

let configured = false;
/** Between configureHeap() and heapLoaded(): the young generation keeps the size it has. */
let loading = false;
let growthFactor = 2;
/** How many bulk jobs (allowLargeYoungGeneration) are running. */
let bulkJobs = 0;

/** The young generation's size now, as V8 reports it (both semi-spaces). */
export function youngGenerationBytes(): number {
  return v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}

function holdYoungGeneration(): void {
  const size = bulkJobs > 0 ? BULK_YOUNG_GENERATION_BYTES : YOUNG_GENERATION_BYTES;
  const factor = loading || 2 * youngGenerationBytes() > size ? 1 : 2;
  // 1 is set again after every such collection, not only on a change: V8 raises the factor back to
  // 2 whenever it sets up a heap, and a worker thread (Node's own module loader thread included) has
  // one of its own.
  if (factor === growthFactor && factor === 2) return;
  growthFactor = factor;
  v8.setFlagsFromString(`--semi-space-growth-factor=${factor}`);
}

/**
 * Applied by the server's entry (main.ts) before the server's modules load, so that loading them
 * does not already grow the young generation; not by tests or the CLI. Until heapLoaded() the young
 * generation does not grow at all.
 */
export function configureHeap(): void {
  if (configured) return;
  configured = true;
  loading = true;
  applyHeapFlags();
  new PerformanceObserver(holdYoungGeneration).observe({ type: 'gc' });
}

/** The server's modules have loaded (main.ts): the young generation may grow to its size again. */
export function heapLoaded(): void {
  if (!loading) return;
  loading = false;
  holdYoungGeneration();
}

/** Applies the settings again if configureHeap() has run (a worker thread has just started). */
export function applyHeapFlags(): void {
  if (!configured) return;
  v8.setFlagsFromString(`--heap-growing-percent=${bulkJobs > 0 ? BULK_HEAP_GROWING_PERCENT : HEAP_GROWING_PERCENT}`);
  holdYoungGeneration();
}

/**
 * Lets the young generation grow to BULK_YOUNG_GENERATION_BYTES (V8 grows it at scavenges, as it
 * sees objects survive) until the returned function is called, by every caller that asked. After
 * that it is held again: it stops growing, and V8 shrinks it back when the server is idle. Nothing
 * happens where configureHeap() has not run (tests, the CLI: V8's own settings).
 */
export function allowLargeYoungGeneration(): () => void {
  if (!configured) return () => {};
  bulkJobs++;
  applyHeapFlags();
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    bulkJobs--;
    applyHeapFlags();
  };
}
