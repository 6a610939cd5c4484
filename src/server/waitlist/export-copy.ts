import type { Kysely } from 'kysely';
import type pg from 'pg';
import type * as pgCopyStreams from 'pg-copy-streams';
import { optionalModule } from '../runtime/optional-module.js';
import { postgresPoolOf } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { copyExportQuery } from './admin-repository.js';
import { CELL, CELLS, SpecCsvWriter } from './export-bytes.js';
import type { WaitlistFilter } from '../../shared/admin/waitlist-filter.js';

/** pg-copy-streams, loaded with the first PostgreSQL export. */
const loadCopyStreams = optionalModule<typeof pgCopyStreams>('pg-copy-streams');

/**
 * The spec's four-column export on PostgreSQL, at the speed of the database's own COPY: the rows
 * come from one `COPY (SELECT email, created_at, ip_address, city, region, country …) TO STDOUT
 * (FORMAT binary)` (admin-repository.ts copyExportQuery), where text is its UTF-8 bytes and a
 * timestamp eight bytes, and SpecCsvWriter (export-bytes.ts) writes the CSV from those bytes.
 * COPY reads one snapshot, so the file is consistent even while signups arrive.
 */

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** PostgreSQL's epoch (2000-01-01 UTC), which a binary timestamp counts microseconds from, in milliseconds since 1970. */
const PG_EPOCH_MS = Date.UTC(2000, 0, 1);

/** Signed 32-bit big-endian integer at buf[at]. */
function int32(buf: Buffer, at: number): number {
  return (buf[at]! << 24) | (buf[at + 1]! << 16) | (buf[at + 2]! << 8) | buf[at + 3]!;
}

export interface CopyExportOptions {
  filter: WaitlistFilter;
  timeZone: string;
  /** Told how many rows each chunk written holds (the audit record's count). */
  onRows?: (rows: number) => void;
}

/**
 * A pooled client for the copy export, or null when it cannot serve `db`: only PostgreSQL whose text
 * is UTF-8 can (binary COPY sends text in the server's encoding, unconverted).
 */
async function withCopyClient(db: Kysely<Database>): Promise<pg.PoolClient | null> {
  const pool = postgresPoolOf(db);
  if (!pool) return null;
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ server_encoding: string }>('SHOW server_encoding');
    if (rows[0]?.server_encoding.toUpperCase() === 'UTF8') return client;
    client.release();
    return null;
  } catch (err) {
    client.release(true);
    throw err;
  }
}

/**
 * The export as chunks of bytes (BOM and header first), or null when the database cannot COPY
 * (SQLite, or a PostgreSQL database not in UTF-8): the caller then writes it from entries. The COPY
 * has started and its first bytes arrived before this resolves, so a database failure at the start
 * rejects here rather than cutting a download short. Closing the generator early (the client went
 * away) ends the COPY by closing its connection.
 */
export async function copyWaitlistCsv(db: Kysely<Database>, options: CopyExportOptions): Promise<AsyncIterableIterator<Buffer> | null> {
  const client = await withCopyClient(db);
  if (!client) return null;
  let stream: ReturnType<typeof pgCopyStreams.to>;
  let iterator: AsyncIterator<Buffer>;
  let first: IteratorResult<Buffer>;
  try {
    stream = client.query(loadCopyStreams().to(`COPY (${copyExportQuery(db, options.filter)}) TO STDOUT (FORMAT binary)`));
    iterator = (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    first = await iterator.next();
  } catch (err) {
    client.release(true);
    throw err;
  }
  let released = false;
  const release = (complete: boolean) => {
    if (released) return;
    released = true;
    if (complete) {
      client.release();
    } else {
      // Stopped mid-COPY: the connection is in the middle of the protocol, so it is closed, not reused.
      stream.destroy();
      client.release(true);
    }
  };
  const chunks = (async function* () {
    if (!first.done) yield first.value;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  })();
  const csv = (async function* () {
    let complete = false;
    try {
      yield* writeCsv(chunks, options);
      complete = true;
    } finally {
      release(complete);
    }
  })();
  // A generator closed before its first next() never runs its finally: this return() also lets go
  // of the connection then (the response closed before the stream was read).
  const handle: AsyncIterableIterator<Buffer> = {
    next: () => csv.next(),
    return: async () => {
      const result = await csv.return(undefined);
      release(false);
      return result;
    },
    [Symbol.asyncIterator]: () => handle,
  };
  return handle;
}

/** The CSV from the binary COPY's chunks (exported for the tests, which feed it split at every byte). */
export async function* writeCsv(input: AsyncIterable<Buffer> | Iterable<Buffer>, options: Omit<CopyExportOptions, 'filter'>): AsyncGenerator<Buffer> {
  const writer = new SpecCsvWriter(options.timeZone, options.onRows);
  yield writer.header();
  const start = new Int32Array(CELLS);
  const end = new Int32Array(CELLS);
  let pending: Buffer | null = null;
  let headerRead = false;
  let finished = false;

  for await (const chunk of input) {
    if (finished) {
      if (chunk.length > 0) throw new Error('COPY sent data after its trailer');
      continue;
    }
    const buf: Buffer = pending ? Buffer.concat([pending, chunk]) : chunk;
    pending = null;
    let pos = 0;
    if (!headerRead) {
      if (buf.length < 19) {
        pending = buf;
        continue;
      }
      if (!buf.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('COPY did not send binary format');
      const extension = int32(buf, 15);
      if (extension < 0) throw new Error('COPY sent a malformed header');
      if (buf.length < 19 + extension) {
        pending = buf;
        continue;
      }
      pos = 19 + extension;
      headerRead = true;
    }
    for (;;) {
      if (pos + 2 > buf.length) break;
      const count = ((buf[pos]! << 24) | (buf[pos + 1]! << 16)) >> 16;
      if (count === -1) {
        finished = true;
        pos += 2;
        break;
      }
      if (count !== CELLS) throw new Error(`COPY sent a row of ${count} columns, not ${CELLS}`);
      // The whole row must be here before any of it is written.
      let p = pos + 2;
      let complete = true;
      for (let i = 0; i < CELLS; i++) {
        if (p + 4 > buf.length) {
          complete = false;
          break;
        }
        const length = int32(buf, p);
        p += 4;
        start[i] = p;
        if (length === -1) {
          end[i] = -1;
          continue;
        }
        if (length < 0 || p + length > buf.length) {
          if (length < -1) throw new Error('COPY sent a malformed row');
          complete = false;
          break;
        }
        end[i] = p + length;
        p += length;
      }
      if (!complete) break;
      pos = p;

      // created_at: microseconds since 2000-01-01 as a signed 64-bit integer, to whole milliseconds
      // without losing any (2^32 µs = 4,294,967 ms + 296 µs).
      if (end[CELL.createdAt]! - start[CELL.createdAt]! !== 8) throw new Error('COPY sent created_at in an unexpected form');
      const high = int32(buf, start[CELL.createdAt]!);
      const low = int32(buf, start[CELL.createdAt]! + 4) >>> 0;
      const ms = PG_EPOCH_MS + high * 4_294_967 + Math.floor((high * 296 + low) / 1000);

      writer.row(buf, start, end, ms);
    }
    yield* writer.take();
    if (pos < buf.length) pending = buf.subarray(pos);
  }
  if (!finished) throw new Error('COPY ended without its trailer');
  yield* writer.finish();
}
