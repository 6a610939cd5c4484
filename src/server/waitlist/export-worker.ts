import { parentPort, workerData } from 'node:worker_threads';
import { SpecCsvWriter, writeFramedRows } from './export-bytes.js';
import { frameBatch } from './export-frames.js';

/**
 * The worker thread of a SQLite export (export-sqlite.ts): splits each batch it is sent into its
 * cells, checks it (export-frames.ts), writes it as CSV and sends the chunks back (their memory
 * moved, not copied), or null for a batch that failed the check, in the order the batches came. The
 * main thread meanwhile reads the next batch from SQLite: reading and writing take about as long as
 * each other, and this way they overlap.
 */
export interface ExportWorkerData {
  timeZone: string;
}

export interface ExportWorkerBatch {
  cells: Uint8Array;
  n: number;
}

if (!parentPort) throw new Error('export-worker runs as a worker thread');
const port = parentPort;
const writer = new SpecCsvWriter((workerData as ExportWorkerData).timeZone);

port.on('message', (batch: ExportWorkerBatch) => {
  // Structured cloning hands over Uint8Arrays; the writer reads a Buffer.
  const framed = frameBatch(Buffer.from(batch.cells.buffer, batch.cells.byteOffset, batch.cells.byteLength), batch.n, true);
  if (!framed) {
    port.postMessage(null);
    return;
  }
  writeFramedRows(writer, framed);
  const chunks = writer.finish();
  port.postMessage(
    chunks,
    [...new Set(chunks.map((chunk) => chunk.buffer))].filter((buffer): buffer is ArrayBuffer => buffer instanceof ArrayBuffer),
  );
});
