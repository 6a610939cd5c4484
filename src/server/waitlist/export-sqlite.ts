import type SQLite from 'better-sqlite3';
import type { CompiledQuery, Kysely } from 'kysely';
import type { Worker } from 'node:worker_threads';
import { rawSqliteOf } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { startModuleWorker } from '../runtime/module-worker.js';
import { ID_CHUNK_SIZE, sqliteExportBatchQuery, sqliteExportRowsQuery, type WaitlistCursor } from './admin-repository.js';
import { CELL, CELLS, closingIterator, isoTime, SpecCsvWriter, writeFramedRows } from './export-bytes.js';
import { frameBatch, SQLITE_EXPORT_CELL_SEPARATOR } from './export-frames.js';
import type { ExportWorkerBatch, ExportWorkerData } from './export-worker.js';
import type { WaitlistFilter } from '../../shared/admin/waitlist-filter.js';

/**
 * The spec's four-column export on SQLite. Each batch of 5,000 rows comes back from SQLite as one
 * buffer (admin-repository.ts sqliteExportBatchQuery: the cells joined by control characters), and
 * SpecCsvWriter (export-bytes.ts) writes the CSV from its bytes: no JavaScript string or object per
 * row. When the first batch is full (more follow), a worker thread (export-worker.ts) splits, checks
 * and writes each batch while this thread reads the next one from SQLite.
 *
 * A batch that fails the check (export-frames.ts: its rows out of order, or a value holding a
 * separator) is read again over the same range of positions: in the order SQL promises, or, when a
 * value holds a separator, as rows of text written from their strings. The file is the same either
 * way (tests/server/export-bytes.test.ts).
 */

export interface SqliteExportOptions {
  filter: WaitlistFilter;
  timeZone: string;
  /** Told how many rows each chunk written holds (the audit record's count). */
  onRows?: (rows: number) => void;
}

interface BatchRow {
  cells: Buffer | null;
  n: number;
  last: string | null;
}

/** Where the worker's answer for a batch goes (answers come in the order the batches were sent). */
interface Pending {
  resolve: (chunks: Buffer[] | null) => void;
  reject: (error: Error) => void;
}

/** The ArrayBuffer behind `view` when the view is all of it (then it can be moved to a worker rather than copied). */
function ownBuffer(view: ArrayBufferView): ArrayBuffer | null {
  return view.buffer instanceof ArrayBuffer && view.byteOffset === 0 && view.byteLength === view.buffer.byteLength ? view.buffer : null;
}

/**
 * Writes batches in a worker thread (export-worker.ts), one after another: their chunks, or null for
 * a batch that failed the check. Null when the worker cannot start; the batches are then written on
 * the main thread.
 */
function startFormatter(timeZone: string): { format(batch: ExportWorkerBatch): Promise<Buffer[] | null>; stop(): void } | null {
  let worker: Worker;
  try {
    worker = startModuleWorker(import.meta.url, 'export-worker', { workerData: { timeZone } satisfies ExportWorkerData });
  } catch {
    return null;
  }
  const pending: Pending[] = [];
  let failure: Error | null = null;
  const fail = (error: Error) => {
    failure ??= error;
    for (const p of pending.splice(0)) p.reject(failure);
  };
  worker.on('message', (chunks: Uint8Array[] | null) =>
    pending.shift()?.resolve(chunks && chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength))),
  );
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the export worker stopped (exit code ${code})`)));
  return {
    format(batch) {
      if (failure) return Promise.reject(failure);
      return new Promise<Buffer[] | null>((resolve, reject) => {
        pending.push({ resolve, reject });
        const own = ownBuffer(batch.cells);
        worker.postMessage(batch, own ? [own] : []);
      });
    },
    stop() {
      failure ??= new Error('the export stopped');
      void worker.terminate();
    },
  };
}

/** A batch as read: its rows (null at the end), how many, and the positions bounding it. */
interface ReadBatch {
  cells: Buffer | null;
  n: number;
  after: WaitlistCursor | null;
  last: WaitlistCursor | null;
}

/**
 * The export as chunks of bytes (BOM and header first), or null when `db` is not SQLite. The first
 * batch is read before this returns, so a database failure at the start rejects here rather than
 * cutting a download short.
 */
export async function sqliteWaitlistCsv(db: Kysely<Database>, options: SqliteExportOptions): Promise<AsyncIterableIterator<Buffer> | null> {
  const sqlite = rawSqliteOf(db);
  if (!sqlite) return null;
  const { filter, timeZone } = options;
  const statements = new Map<string, SQLite.Statement>();
  const prepared = (compiled: CompiledQuery) => {
    let statement = statements.get(compiled.sql);
    if (!statement) statements.set(compiled.sql, (statement = sqlite.prepare(compiled.sql)));
    return statement;
  };
  const batchRow = (compiled: CompiledQuery) => prepared(compiled).get(...(compiled.parameters as unknown[])) as BatchRow;
  // Writes on this thread: batches read again, and every batch when there is no worker.
  const writer = new SpecCsvWriter(timeZone);

  /** One row read as text: its cells as UTF-8, written like any other. */
  const start = new Int32Array(CELLS);
  const end = new Int32Array(CELLS);
  const writeTextRow = (values: Array<string | null>) => {
    const parts = values.map((v) => Buffer.from(v ?? ''));
    const buf = Buffer.concat(parts);
    let at = 0;
    for (let c = 0; c < CELLS; c++) {
      start[c] = at;
      at += parts[c]!.length;
      end[c] = at;
    }
    writer.row(buf, start, end, isoTime(buf, start[CELL.createdAt]!, end[CELL.createdAt]!));
  };

  /** Reads the batch after `after` (in the order the subquery gives, checked when it is written). */
  const readBatch = (after: WaitlistCursor | null) =>
    db.connection().execute(async (): Promise<ReadBatch> => {
      const row = batchRow(sqliteExportBatchQuery(db, filter, after, ID_CHUNK_SIZE, false));
      if (!row.n || !row.cells || row.last === null) return { cells: null, n: 0, after, last: null };
      const separator = row.last.indexOf(String.fromCharCode(SQLITE_EXPORT_CELL_SEPARATOR));
      return { cells: row.cells, n: row.n, after, last: { createdAt: row.last.slice(0, separator), id: row.last.slice(separator + 1) } };
    });

  /** Writes, on this thread, the rows between a batch's positions, read again: in SQL's order, or as text when a value holds a separator. */
  const rewrite = (batch: ReadBatch) =>
    db.connection().execute(async (): Promise<Buffer[]> => {
      const row = batchRow(sqliteExportBatchQuery(db, filter, batch.after, ID_CHUNK_SIZE, true, batch.last));
      const framed = row.n && row.cells ? frameBatch(row.cells, row.n, false) : null;
      if (framed) {
        writeFramedRows(writer, framed);
      } else {
        const compiled = sqliteExportRowsQuery(db, filter, batch.after, ID_CHUNK_SIZE, batch.last);
        for (const values of sqlite.prepare(compiled.sql).raw(true).all(...(compiled.parameters as unknown[])) as Array<Array<string | null>>) {
          writeTextRow(values);
        }
      }
      return writer.finish();
    });

  /** Writes a batch on this thread; null when it fails the check. */
  const writeHere = (batch: ReadBatch): Buffer[] | null => {
    const framed = frameBatch(batch.cells!, batch.n, true);
    if (!framed) return null;
    writeFramedRows(writer, framed);
    return writer.finish();
  };

  const first = await readBatch(null);
  // A worker only when there is more than one batch to write.
  const formatter = first.n === ID_CHUNK_SIZE ? startFormatter(timeZone) : null;
  const format = (batch: ReadBatch): Promise<Buffer[] | null> => {
    if (!batch.cells) return Promise.resolve([]);
    return formatter ? formatter.format({ cells: batch.cells, n: batch.n }) : Promise.resolve(writeHere(batch));
  };
  /** The batch's chunks, written again here when the check failed. */
  const written = async (batch: ReadBatch, chunks: Promise<Buffer[] | null>) => (await chunks) ?? (await rewrite(batch));

  const file = (async function* () {
    yield writer.header();
    // Batch k is written (by the worker) while batch k + 1 is read.
    let batch = first;
    let queued = { batch, chunks: format(batch) };
    // Never left unhandled if the reader stops early.
    queued.chunks.catch(() => undefined);
    while (batch.n === ID_CHUNK_SIZE) {
      batch = await readBatch(batch.last);
      const following = { batch, chunks: format(batch) };
      following.chunks.catch(() => undefined);
      yield* await written(queued.batch, queued.chunks);
      options.onRows?.(queued.batch.n);
      queued = following;
    }
    yield* await written(queued.batch, queued.chunks);
    options.onRows?.(queued.batch.n);
  })();
  return closingIterator(file, () => formatter?.stop());
}
