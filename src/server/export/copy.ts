import type { Kysely } from 'kysely';
import type pg from 'pg';
import type * as pgCopyStreams from 'pg-copy-streams';
import { postgresPoolOf } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { optionalModule } from '../runtime/optional-module.js';
import { exportRowsQuery, SPEC_EXPORT_COLUMNS } from './queries.js';
import type { WaitlistFilter } from '../../shared/admin/waitlist-filter.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';
import type { RowBatch } from './csv.js';
import { inlinePostgresParameters } from './postgres-literals.js';

/**
 * The export's rows on PostgreSQL: one `COPY (SELECT <SPEC_EXPORT_COLUMNS> …) TO STDOUT (FORMAT
 * binary)` read with pg-copy-streams on a connection checked out for the export. COPY reads one
 * snapshot, so the file is consistent while signups arrive, and it sends each row at the database's
 * own streaming speed: text as its UTF-8 bytes, created_at as 8 bytes (no timestamp text to parse).
 */

const loadCopyStreams = optionalModule<typeof pgCopyStreams>('pg-copy-streams');

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** The signature, the flags and the header extension's length. */
const HEADER_BYTES = SIGNATURE.length + 8;
const CELLS = SPEC_EXPORT_COLUMNS.length;
const TIME = SPEC_EXPORT_COLUMNS.indexOf('created_at');
/** PostgreSQL's epoch (2000-01-01 UTC), which a binary timestamp counts microseconds from, in milliseconds since 1970. */
const PG_EPOCH_MS = Date.UTC(2000, 0, 1);

/**
 * The text of the cell at buf[from, to) (null when `to` is -1: NULL), given its row's bytes from
 * `rowStart` as latin1 text: a cell of ASCII is a slice of that text (decoding each cell by itself
 * cost more than the rest of the row), any other is decoded from UTF-8. (A slice keeps its whole
 * text alive: the row's, not the chunk's, which would outlive the young generation.)
 */
function cellText(buf: Buffer, row: string, rowStart: number, from: number, to: number): string | null {
  if (to === -1) return null;
  for (let i = from; i < to; i++) if (buf[i]! >= 0x80) return buf.toString('utf8', from, to);
  return row.slice(from - rowStart, to - rowStart);
}

/** The header's length once `buf` holds all of it, else -1; an error if it does not start as a binary COPY's. */
function headerLength(buf: Buffer): number {
  const seen = Math.min(buf.length, SIGNATURE.length);
  if (SIGNATURE.compare(buf, 0, seen, 0, seen) !== 0) throw new Error('COPY did not send binary format');
  const length = buf.length < HEADER_BYTES ? Infinity : HEADER_BYTES + buf.readInt32BE(HEADER_BYTES - 4);
  return length <= buf.length ? length : -1;
}

/**
 * The rows of a binary COPY's bytes, a batch per chunk, however the chunks cut them; an error if
 * they end before the trailer. Each chunk is copied after what the last one left unread (a row it
 * cut) in one reused buffer: a new one per chunk was ~90 MB outside V8's heap per million rows,
 * which V8 answers with full collections. Cells are copied out as text, so the buffer is free again.
 */
export async function* copyRows(chunks: AsyncIterable<Buffer>): AsyncGenerator<RowBatch> {
  let carry = Buffer.alloc(0);
  let carried = 0;
  let headerRead = false;
  let complete = false;
  const start = new Array<number>(CELLS);
  const end = new Array<number>(CELLS);
  for await (const chunk of chunks) {
    if (carried + chunk.length > carry.length) {
      const larger = Buffer.allocUnsafe(Math.max(carried + chunk.length, 2 * carry.length));
      carry.copy(larger, 0, 0, carried);
      carry = larger;
    }
    chunk.copy(carry, carried);
    const buf = carry.subarray(0, carried + chunk.length);
    const entries: WaitlistEntry[] = [];
    const times: number[] = [];
    let at: number = headerRead ? 0 : headerLength(buf);
    headerRead = at !== -1;
    for (at = Math.max(at, 0); headerRead && !complete && at + 2 <= buf.length; ) {
      const count = buf.readInt16BE(at);
      if (count === -1) {
        complete = true;
        at += 2;
        continue;
      }
      if (count !== CELLS) throw new Error(`COPY sent a row of ${count} columns, not ${CELLS}`);
      // Each cell: its length (-1: NULL), then its bytes.
      let p = at + 2;
      for (let i = 0; i < CELLS && p !== -1; i++) {
        const length = p + 4 <= buf.length ? buf.readInt32BE(p) : -2;
        start[i] = p + 4;
        end[i] = length === -1 ? -1 : p + 4 + length;
        p = length < -1 || end[i]! > buf.length ? -1 : p + 4 + Math.max(length, 0);
      }
      if (p === -1) break;
      // The row as an entry of the columns' fields, but created_at: `times`, from microseconds since
      // 2000 (a signed 64-bit integer) to whole milliseconds without losing any (2^32 µs = 4,294,967 ms + 296 µs).
      const row = buf.toString('latin1', at, p);
      const entry: Record<string, string | null> = {};
      for (let i = 0; i < CELLS; i++) if (i !== TIME) entry[SPEC_EXPORT_COLUMNS[i]!] = cellText(buf, row, at, start[i]!, end[i]!);
      entries.push(entry as unknown as WaitlistEntry);
      if (end[TIME]! - start[TIME]! !== 8) throw new Error('COPY sent created_at in an unexpected form');
      const high = buf.readInt32BE(start[TIME]!);
      times.push(PG_EPOCH_MS + high * 4_294_967 + Math.floor((high * 296 + buf.readUInt32BE(start[TIME]! + 4)) / 1000));
      at = p;
    }
    if (complete && at < buf.length) throw new Error('COPY sent data after its trailer');
    // copy() moves overlapping bytes correctly (buf is the carry buffer itself).
    carried = buf.copy(carry, 0, at);
    if (entries.length > 0) yield { entries, times };
  }
  if (!complete) throw new Error('COPY ended without its trailer');
}

/** The rows of a binary COPY of `sql` (a SELECT of SPEC_EXPORT_COLUMNS) on `client`. */
export function copyBatches(client: pg.ClientBase, sql: string): AsyncGenerator<RowBatch> {
  return copyRows(client.query(loadCopyStreams().to(`COPY (${sql}) TO STDOUT (FORMAT binary)`)));
}

/**
 * The rows of everything matching `filter`, by COPY; null when `db` is not PostgreSQL, or its text
 * is not UTF-8 (binary COPY sends text unconverted): the caller then reads entries. The connection
 * checked out for it goes back to the pool when the COPY is done, and is closed when it stops part
 * way (an error, or return() once started). Start it at once (rows.ts `started`): a generator that
 * never started cannot let go of its connection.
 */
export async function copyExport(db: Kysely<Database>, filter: WaitlistFilter): Promise<AsyncGenerator<RowBatch> | null> {
  const pool = postgresPoolOf(db);
  if (!pool) return null;
  const { rows } = await pool.query<{ server_encoding: string }>('SHOW server_encoding');
  if (rows[0]?.server_encoding.toUpperCase() !== 'UTF8') return null;
  const client = await pool.connect();
  return (async function* () {
    let complete = false;
    try {
      yield* copyBatches(client, inlinePostgresParameters(exportRowsQuery(db, filter)));
      complete = true;
    } finally {
      client.release(!complete);
    }
  })();
}
