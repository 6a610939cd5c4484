import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what the last full collection found alive, in
 * percent. V8 picks the factor itself (up to 4x when collections are cheap, which they are in
 * this server); under a stream of signups that let garbage pile up to about three times the live
 * heap between full collections, some 60-80 MB of RSS that held nothing. 15% keeps the heap near
 * its live size, for more frequent but short (incremental, mostly concurrent) full collections.
 * Decision record 013.
 */
export const HEAP_GROWING_PERCENT = 15;

/** Applied once at start-up by the server's entry (not by tests or the CLI). */
export function keepHeapNearLiveSize(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
