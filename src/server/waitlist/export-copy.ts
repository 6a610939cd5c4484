import type { Kysely } from 'kysely';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { postgresPoolOf } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { copyExportQuery } from './admin-repository.js';
import { CSV_BOM, csvField } from '../../shared/csv.js';
import type { WaitlistFilter } from '../../shared/admin/waitlist-filter.js';
import { dateJoinedBlock, formatDateJoinedAt } from '../../shared/waitlist/display.js';
import { waitlistCsvHeader, waitlistCsvRecord } from '../../shared/waitlist/csv.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';

/**
 * The spec's four-column export on PostgreSQL, at the speed of the database's own COPY.
 *
 * Reading a million rows through the driver costs ~3× what PostgreSQL takes to write them (a
 * message and six strings per row), and formatting each row from strings as much again. Here the
 * rows come from one `COPY (SELECT email, created_at, ip_address, city, region, country …) TO
 * STDOUT (FORMAT binary)` (admin-repository.ts copyExportQuery), where text is its UTF-8 bytes
 * and a timestamp eight bytes, and the CSV is written from those bytes directly:
 *
 * - a cell is copied as it is when csvField would leave it so and it is visibly not blank: no
 *   byte below 0x20, no quote, no comma (but between location parts), no formula start, and at
 *   least one visible ASCII character (so String#trim() cannot empty it);
 * - Date Joined is the shared formatter's text, formatted once per minute;
 * - any other row (an address with a comma, a city of only non-ASCII spaces, an IP that is blank)
 *   is decoded and written by waitlistCsvRecord itself.
 *
 * The file is therefore byte for byte what waitlistCsvChunks writes from the same rows
 * (tests/server/export-copy.test.ts compares them on adversarial rows). COPY reads one snapshot,
 * so the file is consistent even while signups arrive.
 */

/** Output chunk size: large enough that the response stream sees few writes. */
const CHUNK_BYTES = 256 * 1024;
/** Bytes of a row outside its cells: separators, the location's quotes and ", " joins, CRLF, "Unknown". */
const ROW_OVERHEAD = 32;

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** Microseconds from PostgreSQL's epoch (2000-01-01) split so the millisecond stays exact: 2^32 = 4294967 × 1000 + 296. */
const PG_EPOCH_MS = Date.UTC(2000, 0, 1);

const COMMA = 0x2c;
const QUOTE = 0x22;
const SPACE = 0x20;
const NA = Buffer.from('N/A');
const UNKNOWN = Buffer.from('Unknown');
const JOIN = Buffer.from(', ');

/** = + - @ (TAB and CR are below 0x20, which no plain cell has). */
function isFormulaStart(byte: number): boolean {
  return byte === 0x3d || byte === 0x2b || byte === 0x2d || byte === 0x40;
}

/** Lead bytes of the UTF-8 forms of the non-ASCII characters String#trim() removes (U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF). */
function mayBeSpace(lead: number): boolean {
  return lead === 0xc2 || lead === 0xe1 || lead === 0xe2 || lead === 0xe3 || lead === 0xef;
}

const NOT_PLAIN = 0;
const PLAIN = 1;
const PLAIN_WITH_COMMA = 2;

/**
 * Whether buf[start, end) is text csvField leaves as it is (PLAIN) and trim() leaves non-empty: no
 * control byte, no quote, no formula start when `first`, and a character that is surely not white
 * space. A comma makes it PLAIN_WITH_COMMA where `commaAllowed` (a location part, which is quoted
 * then), NOT_PLAIN elsewhere. Bytes of 0x80 and above (UTF-8 of other characters) are fine.
 */
function plain(buf: Buffer, start: number, end: number, first: boolean, commaAllowed: boolean): number {
  if (start === end) return NOT_PLAIN;
  if (first && isFormulaStart(buf[start]!)) return NOT_PLAIN;
  let visible = false;
  let comma = false;
  for (let i = start; i < end; i++) {
    const b = buf[i]!;
    if (b < SPACE || b === QUOTE) return NOT_PLAIN;
    if (b === COMMA) {
      if (!commaAllowed) return NOT_PLAIN;
      comma = true;
    }
    if ((b > SPACE && b < 0x80) || (b >= 0xc0 && !mayBeSpace(b))) visible = true;
  }
  if (!visible) return NOT_PLAIN;
  return comma ? PLAIN_WITH_COMMA : PLAIN;
}

export interface CopyExportOptions {
  filter: WaitlistFilter;
  timeZone: string;
  /** Told how many rows each chunk written holds (the audit record's count). */
  onRows?: (rows: number) => void;
}

/**
 * Whether the copy export can serve `db`: PostgreSQL whose text is UTF-8 (binary COPY sends text in
 * the server's encoding, unconverted).
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
  let stream: ReturnType<typeof copyTo>;
  let iterator: AsyncIterator<Buffer>;
  let first: IteratorResult<Buffer>;
  try {
    stream = client.query(copyTo(`COPY (${copyExportQuery(db, options.filter)}) TO STDOUT (FORMAT binary)`));
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

/** Copies src[from, to) into target at `at`, returning the end: a plain loop beats Buffer#copy for the few bytes of a cell. */
function put(target: Buffer, at: number, src: Buffer, from: number, to: number): number {
  for (let i = from; i < to; i++) target[at++] = src[i]!;
  return at;
}

/** Signed 32-bit big-endian integer at buf[at]. */
function int32(buf: Buffer, at: number): number {
  return (buf[at]! << 24) | (buf[at + 1]! << 16) | (buf[at + 2]! << 8) | buf[at + 3]!;
}

/**
 * Date Joined as bytes for the rows of one 15-minute block of UTC time: the shared formatter's text
 * around the minute (dateJoinedBlock), with csvField's quotes, so a row's cell is three short copies.
 * Where the block cannot be written so, each row's time is formatted (and quoted) by itself.
 */
class DateCells {
  private index = Number.NaN;
  private start = 0;
  private minute = 0;
  private before: Buffer | null = null;
  private after: Buffer | null = null;

  constructor(private readonly timeZone: string) {}

  /** Writes the cell of `ms` into target at `at`; returns the end. Room for DATE_CELL_MAX bytes is assumed. */
  write(target: Buffer, at: number, ms: number): number {
    const index = Math.floor(ms / 900_000);
    if (index !== this.index) this.load(index, ms);
    if (this.before === null) return at + Buffer.from(csvField(formatDateJoinedAt(ms, this.timeZone))).copy(target, at);
    const minute = this.minute + Math.floor((ms - this.start) / 60_000);
    at = put(target, at, this.before, 0, this.before.length);
    target[at++] = 0x30 + Math.floor(minute / 10);
    target[at++] = 0x30 + (minute % 10);
    return put(target, at, this.after!, 0, this.after!.length);
  }

  private load(index: number, ms: number): void {
    this.index = index;
    this.before = this.after = null;
    const block = dateJoinedBlock(ms, this.timeZone);
    if (!block) return;
    // csvField quotes the text (it has commas) and changes nothing else; checked, not assumed.
    const text = block.before + String(block.minute).padStart(2, '0') + block.after;
    if (csvField(text) !== `"${text}"`) return;
    this.start = block.start;
    this.minute = block.minute;
    this.before = Buffer.from(`"${block.before}`);
    this.after = Buffer.from(`${block.after}"`);
  }
}

/** Room a Date Joined cell may take (the en-US text is ~25 bytes; quotes and U+202F included). */
const DATE_CELL_MAX = 96;

/** The CSV from the binary COPY's chunks (exported for the tests, which feed it split at every byte). */
export async function* writeCsv(input: AsyncIterable<Buffer> | Iterable<Buffer>, options: Omit<CopyExportOptions, 'filter'>): AsyncGenerator<Buffer> {
  const { timeZone, onRows } = options;
  yield Buffer.from(CSV_BOM + waitlistCsvHeader());

  let out = Buffer.allocUnsafe(CHUNK_BYTES);
  let used = 0;
  let rows = 0;
  const flush = (): Buffer => {
    const chunk = out.subarray(0, used);
    out = Buffer.allocUnsafe(CHUNK_BYTES);
    used = 0;
    onRows?.(rows);
    rows = 0;
    return chunk;
  };
  const dates = new DateCells(timeZone);
  const start = new Int32Array(6);
  const end = new Int32Array(6);
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
      if (count !== 6) throw new Error(`COPY sent a row of ${count} columns, not 6`);
      // The whole row must be here before any of it is written.
      let p = pos + 2;
      let complete = true;
      for (let i = 0; i < 6; i++) {
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
      if (end[1]! - start[1]! !== 8) throw new Error('COPY sent created_at in an unexpected form');
      const high = int32(buf, start[1]!);
      const low = int32(buf, start[1]! + 4) >>> 0;
      const ms = PG_EPOCH_MS + high * 4_294_967 + Math.floor((high * 296 + low) / 1000);

      let size = DATE_CELL_MAX + ROW_OVERHEAD;
      for (let i = 0; i < 6; i++) if (end[i]! !== -1 && i !== 1) size += end[i]! - start[i]!;
      if (used + size > out.length) {
        if (used > 0) yield flush();
        if (size > out.length) out = Buffer.allocUnsafe(size);
      }
      const written = writeRow(buf, start, end, ms);
      if (written === -1) {
        const record = Buffer.from(waitlistCsvRecord(decodeRow(buf, start, end, ms), timeZone));
        if (used + record.length > out.length) {
          if (used > 0) yield flush();
          if (record.length > out.length) out = Buffer.allocUnsafe(record.length);
        }
        used += record.copy(out, used);
      } else {
        used = written;
      }
      rows++;
      if (used >= CHUNK_BYTES - 1024) yield flush();
    }
    if (pos < buf.length) pending = buf.subarray(pos);
  }
  if (!finished) throw new Error('COPY ended without its trailer');
  if (used > 0 || rows > 0) yield flush();

  /** The row written from its bytes at `used` when every cell is plain: the new end; -1 (nothing written) otherwise. */
  function writeRow(buf: Buffer, start: Int32Array, end: Int32Array, ms: number): number {
    // Email: never NULL; plain or not at all.
    if (end[0]! === -1 || plain(buf, start[0]!, end[0]!, true, false) === NOT_PLAIN) return -1;
    // IP Address: NULL is N/A; a value must be plain (a blank one is N/A too, left to the slow path).
    const ipNull = end[2]! === -1;
    if (!ipNull && plain(buf, start[2]!, end[2]!, true, false) === NOT_PLAIN) return -1;
    // Location: the non-blank parts of city, region, country joined with ", ", quoted when that
    // makes a comma. An empty part is skipped as formatLocation does; a part that is not plain
    // (blank after trim(), a quote, a control character) leaves the row to the slow path.
    let parts = 0;
    let comma = false;
    for (let i = 3; i <= 5; i++) {
      if (end[i]! === -1 || end[i] === start[i]) continue;
      const kind = plain(buf, start[i]!, end[i]!, parts === 0, true);
      if (kind === NOT_PLAIN) return -1;
      if (kind === PLAIN_WITH_COMMA) comma = true;
      parts++;
    }
    const target = out;
    let o = put(target, used, buf, start[0]!, end[0]!);
    target[o++] = COMMA;
    o = dates.write(target, o, ms);
    target[o++] = COMMA;
    o = ipNull ? put(target, o, NA, 0, NA.length) : put(target, o, buf, start[2]!, end[2]!);
    target[o++] = COMMA;
    if (parts === 0) {
      o = put(target, o, UNKNOWN, 0, UNKNOWN.length);
    } else {
      const quoted = parts > 1 || comma;
      if (quoted) target[o++] = QUOTE;
      let written = 0;
      for (let i = 3; i <= 5; i++) {
        if (end[i]! === -1 || end[i] === start[i]) continue;
        if (written++ > 0) o = put(target, o, JOIN, 0, JOIN.length);
        o = put(target, o, buf, start[i]!, end[i]!);
      }
      if (quoted) target[o++] = QUOTE;
    }
    target[o++] = 0x0d;
    target[o++] = 0x0a;
    return o;
  }
}

/** The row as the entry the string writer takes (only the fields the spec's columns read). */
function decodeRow(buf: Buffer, start: Int32Array, end: Int32Array, ms: number): WaitlistEntry {
  const text = (i: number) => (end[i]! === -1 ? null : buf.toString('utf8', start[i]!, end[i]!));
  return {
    email: text(0) ?? '',
    created_at: new Date(ms).toISOString(),
    ip_address: text(2),
    city: text(3),
    region: text(4),
    country: text(5),
  } as WaitlistEntry;
}
