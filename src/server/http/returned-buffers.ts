/**
 * Buffers a producer lends to the last consumer of a download, to be handed back once their bytes
 * have been used, so a long download reuses a few buffers instead of allocating one per chunk. (Each
 * allocation is memory outside V8's heap; ~90 MB of them per export of a million rows made V8 run a
 * full collection every ~150 ms of the export, ~0.5 s of CPU on its helper threads.)
 *
 * A lent chunk travels through generators and streams as the same Buffer object. A consumer that
 * has copied its bytes (bulk-download.ts's zstd compressor, synchronously) calls `giveBack`; one
 * that does not (a socket write, another compressor) simply drops it, and it is collected as
 * before. The producer never writes into a chunk before it is given back.
 */
const lenders = new WeakMap<Buffer, () => void>();

/** Marks `chunk` as lent: `giveBack(chunk)` calls `onReturn` once. */
export function lend(chunk: Buffer, onReturn: () => void): Buffer {
  lenders.set(chunk, onReturn);
  return chunk;
}

/** Hands `chunk` back to its lender, if it was lent and not given back already; its bytes are then no longer ours to read. */
export function giveBack(chunk: Buffer): void {
  const onReturn = lenders.get(chunk);
  if (onReturn === undefined) return;
  lenders.delete(chunk);
  onReturn();
}
