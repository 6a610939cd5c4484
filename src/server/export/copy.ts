import type { Kysely } from 'kysely';
import type pg from 'pg';
import type * as pgCopyStreams from 'pg-copy-streams';
import { postgresPoolOf } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { optionalModule } from '../runtime/optional-module.js';
import { exportRowsQuery } from './queries.js';
import type { WaitlistFilter } from '../../shared/admin/waitlist-filter.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';
import type { RowBatch } from './csv.js';
import { inlinePostgresParameters } from './postgres-literals.js';

/**
 * The export's rows on PostgreSQL: one `COPY (SELECT email, created_at, ip_address, city, region,
 * country …) TO STDOUT (FORMAT binary)` read with pg-copy-streams on a connection checked out for
 * the export. COPY reads one snapshot, so the file is consistent while signups arrive, and it sends
 * each row at the database's own streaming speed: text as its UTF-8 bytes, created_at as 8 bytes
 * (no timestamp text to write and parse again).
 */

const loadCopyStreams = optionalModule<typeof pgCopyStreams>('pg-copy-streams');

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** The signature, the flags and the header extension's length. */
const HEADER_BYTES = SIGNATURE.length + 8;
const CELLS = 6;
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

/** The rows of a binary COPY of the export's six columns, read from the chunks it arrives in, however they are cut. */
class BinaryCopyRows {
  /**
   * What the last chunk left unread (the start of a row cut by its end), at its start, and then the
   * next chunk after it: one buffer, reused (a new one per chunk was ~90 MB outside V8's heap per
   * million rows, which V8 answers with full collections).
   */
  private carry = Buffer.alloc(0);
  private carried = 0;
  private headerRead = false;
  /** Whether the trailer has been read: every row is in. */
  complete = false;

  /** The rows made whole by `chunk`. */
  read(chunk: Buffer): RowBatch {
    const buf = this.carried > 0 ? this.join(chunk) : chunk;
    const entries: WaitlistEntry[] = [];
    const times: number[] = [];
    let at = 0;
    if (!this.headerRead) {
      const seen = Math.min(buf.length, SIGNATURE.length);
      if (SIGNATURE.compare(buf, 0, seen, 0, seen) !== 0) throw new Error('COPY did not send binary format');
      if (buf.length < HEADER_BYTES || buf.length < HEADER_BYTES + buf.readInt32BE(HEADER_BYTES - 4)) {
        this.keep(buf, 0);
        return { entries, times };
      }
      at = HEADER_BYTES + buf.readInt32BE(HEADER_BYTES - 4);
      this.headerRead = true;
    }
    const start = new Array<number>(CELLS);
    const end = new Array<number>(CELLS);
    for (;;) {
      if (this.complete && at < buf.length) throw new Error('COPY sent data after its trailer');
      if (this.complete || at + 2 > buf.length) break;
      const count = buf.readInt16BE(at);
      if (count === -1) {
        this.complete = true;
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
      // The spec's columns read only these fields (created_at comes as `times`).
      const row = buf.toString('latin1', at, p);
      entries.push({
        email: cellText(buf, row, at, start[0]!, end[0]!) ?? '',
        ip_address: cellText(buf, row, at, start[2]!, end[2]!),
        city: cellText(buf, row, at, start[3]!, end[3]!),
        region: cellText(buf, row, at, start[4]!, end[4]!),
        country: cellText(buf, row, at, start[5]!, end[5]!),
      } as WaitlistEntry);
      // created_at: microseconds since 2000 as a signed 64-bit integer, to whole milliseconds without
      // losing any (2^32 µs = 4,294,967 ms + 296 µs).
      if (end[1]! - start[1]! !== 8) throw new Error('COPY sent created_at in an unexpected form');
      const high = buf.readInt32BE(start[1]!);
      times.push(PG_EPOCH_MS + high * 4_294_967 + Math.floor((high * 296 + buf.readUInt32BE(start[1]! + 4)) / 1000));
      at = p;
    }
    this.keep(buf, at);
    return { entries, times };
  }

  /** The carried bytes followed by `chunk`, in the carry buffer. */
  private join(chunk: Buffer): Buffer {
    const size = this.carried + chunk.length;
    if (size > this.carry.length) {
      const larger = Buffer.allocUnsafe(Math.max(size, 2 * this.carry.length));
      this.carry.copy(larger, 0, 0, this.carried);
      this.carry = larger;
    }
    chunk.copy(this.carry, this.carried);
    return this.carry.subarray(0, size);
  }

  /** Carries buf[from, end) over to the next chunk (the rows' text was copied out of it already). */
  private keep(buf: Buffer, from: number): void {
    this.carried = buf.length - from;
    if (this.carried === 0) return;
    if (this.carried > this.carry.length) this.carry = Buffer.allocUnsafe(2 * this.carried);
    // copy() moves overlapping bytes correctly when buf is the carry buffer itself.
    buf.copy(this.carry, 0, from);
  }
}

/** The rows of a binary COPY's bytes, batch by batch, however they are cut; an error if they end before the trailer. */
export async function* copyRows(chunks: AsyncIterable<Buffer>): AsyncGenerator<RowBatch> {
  const rows = new BinaryCopyRows();
  for await (const chunk of chunks) {
    const batch = rows.read(chunk);
    if (batch.entries.length > 0) yield batch;
  }
  if (!rows.complete) throw new Error('COPY ended without its trailer');
}

/** The rows of a binary COPY of `sql` (a SELECT of the export's six columns) on `client`. */
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
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ server_encoding: string }>('SHOW server_encoding');
    if (rows[0]?.server_encoding.toUpperCase() !== 'UTF8') {
      client.release();
      return null;
    }
  } catch (err) {
    client.release(true);
    throw err;
  }
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
