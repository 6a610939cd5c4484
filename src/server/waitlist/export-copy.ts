import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import { postgresPoolOf } from '../db/database.js';
import { ReusedBufferSocket } from '../db/pg-socket.js';
import type { Database } from '../db/schema.js';
import { copyExportQuery } from './admin-repository.js';
import { CELL, CELLS, SpecCsvWriter } from './export-bytes.js';
import type { WaitlistFilter } from '../../shared/admin/waitlist-filter.js';

/**
 * The spec's four-column export on PostgreSQL, at the speed of the database's own COPY: the rows
 * come from one `COPY (SELECT email, created_at, ip_address, city, region, country …) TO STDOUT
 * (FORMAT binary)` (admin-repository.ts copyExportQuery), where text is its UTF-8 bytes and a
 * timestamp eight bytes, and SpecCsvWriter (export-bytes.ts) writes the CSV from those bytes.
 * COPY reads one snapshot, so the file is consistent even while signups arrive.
 *
 * The COPY's protocol messages are read here straight off the connection's socket (CopyCsvQuery):
 * a row is parsed where it lies in the socket's buffer, with no Buffer made per row and no copy of
 * the stream before the CSV. (pg-copy-streams, used before, sliced every CopyData message into a
 * Buffer of its own and joined each read's messages into a new one: ~0.4 s of the event loop and
 * ~180 MB of short-lived memory per million rows, as much as the CSV writing itself; decision 012.)
 */

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** The binary COPY header: signature, flags, header extension length. */
const HEADER_BYTES = SIGNATURE.length + 8;
/** PostgreSQL's epoch (2000-01-01 UTC), which a binary timestamp counts microseconds from, in milliseconds since 1970. */
const PG_EPOCH_MS = Date.UTC(2000, 0, 1);

/** Backend messages of the COPY OUT sub-protocol (and those that may come between them). */
const COPY_DATA = 0x64; // 'd'
const COPY_DONE = 0x63; // 'c'
const ERROR_RESPONSE = 0x45; // 'E'
const INTERSPERSED = new Set([0x48 /* 'H' CopyOutResponse */, 0x4e /* 'N' notice */, 0x53 /* 'S' parameter */, 0x41 /* 'A' notification */]);

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
 * The binary COPY format (signature and header, rows of CELLS cells, the -1 trailer) read from the
 * pieces it arrives in, each row handed to the writer where it lies. A row cut by the end of a piece
 * is gathered in `carry`, only its own bytes, and read from there.
 */
export class BinaryCopyRows {
  private readonly start = new Int32Array(CELLS);
  private readonly end = new Int32Array(CELLS);
  private carry = Buffer.allocUnsafe(1024);
  private carried = 0;
  private headerRead = false;
  private trailerRead = false;

  constructor(private readonly writer: SpecCsvWriter) {}

  /** Whether the trailer has been read: every row is in. */
  get complete(): boolean {
    return this.trailerRead;
  }

  /** Reads buf[from, to): the next bytes of the COPY. */
  feed(buf: Buffer, from: number, to: number): void {
    let pos = from;
    while (this.carried > 0) {
      // The unit begun in the carry: read it once whole, else add what it still needs (as far as
      // its lengths tell so far).
      const known = this.unitLength(this.carry, 0, this.carried);
      if (known > 0 && known <= this.carried) {
        if (this.unit(this.carry, 0, this.carried) !== this.carried) throw new Error('COPY sent a malformed row');
        this.carried = 0;
        break;
      }
      if (pos === to) return;
      const n = Math.min(Math.abs(known) - this.carried, to - pos);
      this.stash(buf, pos, pos + n);
      pos += n;
    }
    while (pos < to) {
      const next = this.unit(buf, pos, to);
      if (next === -1) {
        this.stash(buf, pos, to);
        return;
      }
      pos = next;
    }
  }

  /**
   * The length of the unit (header, row or trailer) at buf[at, to): positive when the bytes there
   * tell all of it, else minus the least it can be (the bytes up to the next length word unread).
   */
  private unitLength(buf: Buffer, at: number, to: number): number {
    if (this.trailerRead) throw new Error('COPY sent data after its trailer');
    if (!this.headerRead) {
      // The signature is checked as far as it has arrived, so other data is told at once.
      const seen = Math.min(to - at, SIGNATURE.length);
      if (SIGNATURE.compare(buf, at, at + seen, 0, seen) !== 0) throw new Error('COPY did not send binary format');
      if (to - at < HEADER_BYTES) return -HEADER_BYTES;
      const extension = int32(buf, at + HEADER_BYTES - 4);
      if (extension < 0) throw new Error('COPY sent a malformed header');
      return HEADER_BYTES + extension;
    }
    if (to - at < 2) return -2;
    const count = ((buf[at]! << 24) | (buf[at + 1]! << 16)) >> 16;
    if (count === -1) return 2;
    if (count !== CELLS) throw new Error(`COPY sent a row of ${count} columns, not ${CELLS}`);
    let p = at + 2;
    for (let i = 0; i < CELLS; i++) {
      if (p + 4 > to) return -(p + 4 - at);
      const length = int32(buf, p);
      if (length < -1) throw new Error('COPY sent a malformed row');
      p += 4 + Math.max(length, 0);
    }
    return p - at;
  }

  /** Reads the unit at buf[at, to): where it ends, or -1 when it is not all there. */
  private unit(buf: Buffer, at: number, to: number): number {
    if (this.headerRead && !this.trailerRead && to - at >= 2) {
      // A row (the common case), its cells found as its lengths are read.
      const count = ((buf[at]! << 24) | (buf[at + 1]! << 16)) >> 16;
      if (count === CELLS) {
        const start = this.start;
        const end = this.end;
        let p = at + 2;
        for (let i = 0; i < CELLS; i++) {
          if (p + 4 > to) return -1;
          const length = int32(buf, p);
          p += 4;
          start[i] = p;
          if (length === -1) {
            end[i] = -1;
            continue;
          }
          if (length < 0) throw new Error('COPY sent a malformed row');
          if (p + length > to) return -1;
          end[i] = p + length;
          p += length;
        }
        // created_at: microseconds since 2000-01-01 as a signed 64-bit integer, to whole milliseconds
        // without losing any (2^32 µs = 4,294,967 ms + 296 µs).
        const at8 = start[CELL.createdAt]!;
        if (end[CELL.createdAt]! - at8 !== 8) throw new Error('COPY sent created_at in an unexpected form');
        const high = int32(buf, at8);
        const low = int32(buf, at8 + 4) >>> 0;
        const ms = PG_EPOCH_MS + high * 4_294_967 + Math.floor((high * 296 + low) / 1000);
        const minutes = Math.floor(ms / 60_000);
        this.writer.row(buf, start, end, minutes, ms - minutes * 60_000);
        return p;
      }
    }
    const length = this.unitLength(buf, at, to);
    if (length < 0 || at + length > to) return -1;
    if (this.headerRead) this.trailerRead = true;
    else this.headerRead = true;
    return at + length;
  }

  private stash(buf: Buffer, from: number, to: number): void {
    const size = this.carried + to - from;
    if (size > this.carry.length) {
      const larger = Buffer.allocUnsafe(Math.max(size, this.carry.length * 2));
      this.carry.copy(larger, 0, 0, this.carried);
      this.carry = larger;
    }
    this.carried += buf.copy(this.carry, this.carried, from, to);
  }
}

/**
 * The backend's messages during a COPY OUT, read from the socket's chunks: each CopyData body (or
 * the part of it in this chunk) goes to `data`. `write` answers null while the COPY goes on; at its
 * end (CopyDone) the bytes after it, and at an ErrorResponse the bytes from that message on, which
 * are the client library's to read (CommandComplete, ReadyForQuery, or the error).
 */
export class CopyOutMessages {
  private readonly header = Buffer.allocUnsafe(5);
  private headerHave = 0;
  private code = 0;
  private remaining = 0;
  /** An ErrorResponse is next: true once handed back. */
  failed = false;

  constructor(private readonly data: (buf: Buffer, from: number, to: number) => void) {}

  write(chunk: Buffer): Buffer | null {
    let pos = 0;
    while (pos < chunk.length) {
      if (this.remaining === 0) {
        // A message's type and length; a header cut by the chunk's end is gathered first.
        let code: number;
        let length: number;
        if (this.headerHave === 0 && chunk.length - pos >= 5) {
          code = chunk[pos]!;
          length = int32(chunk, pos + 1);
          pos += 5;
        } else {
          const n = Math.min(5 - this.headerHave, chunk.length - pos);
          chunk.copy(this.header, this.headerHave, pos, pos + n);
          this.headerHave += n;
          pos += n;
          if (this.headerHave < 5) return null;
          this.headerHave = 0;
          code = this.header[0]!;
          length = int32(this.header, 1);
        }
        if (code === ERROR_RESPONSE) {
          this.failed = true;
          // From the message's first byte, wherever it lay.
          const at = pos - 5;
          return at >= 0 ? chunk.subarray(at) : Buffer.concat([this.header, chunk.subarray(pos)]);
        }
        if (length < 4 || (code === COPY_DONE && length !== 4)) throw new Error('COPY sent a malformed message');
        if (code === COPY_DONE) return chunk.subarray(pos);
        if (code !== COPY_DATA && !INTERSPERSED.has(code)) throw new Error(`COPY sent an unexpected message (${String.fromCharCode(code)})`);
        this.code = code;
        this.remaining = length - 4;
        continue;
      }
      const n = Math.min(this.remaining, chunk.length - pos);
      if (this.code === COPY_DATA) this.data(chunk, pos, pos + n);
      pos += n;
      this.remaining -= n;
    }
    return null;
  }
}

/** The parts of pg's connection a query that reads the socket itself uses (pg-copy-streams' approach). */
interface PgConnection {
  stream: Socket;
  query(text: string): void;
}

/**
 * A query for pg's `client.query()` that takes the connection's socket for the length of a COPY
 * OUT and reads its messages itself, as a Readable of CSV chunks with backpressure (the socket is
 * read only while the reader wants more). At CopyDone or an error it hands the socket back to pg,
 * with the bytes it has not read, for pg to finish the query as usual.
 *
 * The pool's sockets (db/pg-socket.ts) give their reads to the query where they lie, in the one
 * buffer each socket reuses. A socket under TLS (or any other) is read as a stream instead: pg's
 * listener taken off, the socket paused and read with `read()`.
 */
export class CopyCsvQuery extends Readable {
  private connection: PgConnection | null = null;
  /** The socket whose reads come here directly, while they do. */
  private direct: ReusedBufferSocket | null = null;
  private pgDataHandler: ((chunk: Buffer) => void) | null = null;
  private wanted = false;
  private forwarding = false;
  private readonly messages: CopyOutMessages;
  private readonly rows: BinaryCopyRows;
  private readonly onReadable = () => this.forward();

  constructor(
    private readonly text: string,
    private readonly writer: SpecCsvWriter,
  ) {
    super();
    this.rows = new BinaryCopyRows(writer);
    this.messages = new CopyOutMessages((buf, from, to) => this.rows.feed(buf, from, to));
  }

  /** Called by pg when the query's turn comes. */
  submit(connection: PgConnection): void {
    this.connection = connection;
    if (connection.stream instanceof ReusedBufferSocket) {
      this.direct = connection.stream;
      this.direct.takeReads((bytes) => this.consume(bytes));
      connection.query(this.text);
      return;
    }
    const listeners = connection.stream.listeners('data');
    if (listeners.length !== 1) throw new Error('the connection is not as pg leaves it (one data listener)');
    this.pgDataHandler = listeners[0] as (chunk: Buffer) => void;
    connection.stream.removeListener('data', this.pgDataHandler);
    connection.stream.pause();
    connection.stream.on('readable', this.onReadable);
    connection.query(this.text);
    this.forward();
  }

  handleError(err: Error): void {
    this.destroy(err);
  }

  handleCommandComplete(): void {}

  handleReadyForQuery(): void {}

  override _read(): void {
    if (this.direct !== null) {
      // Reading paused when the last read's CSV filled this stream; the reader wants more.
      this.direct.resume();
      return;
    }
    this.wanted = true;
    this.forward();
  }

  /** Reads the socket while the reader wants more and the COPY goes on. */
  private forward(): void {
    if (this.forwarding || !this.wanted || this.pgDataHandler === null) return;
    this.forwarding = true;
    const stream = this.connection!.stream;
    let chunk: Buffer | null;
    while (this.wanted && this.pgDataHandler !== null && (chunk = stream.read() as Buffer | null) !== null) this.wanted = this.consume(chunk);
    this.forwarding = false;
  }

  /** One chunk of the socket: false when the reader wants no more for now (or the COPY is over). */
  private consume(chunk: Buffer): boolean {
    // Stopped (the download went away): the connection is being closed; nothing more is read.
    if (this.destroyed) return false;
    let rest: Buffer | null;
    try {
      rest = this.messages.write(chunk);
    } catch (err) {
      // The stream is not what COPY sends: stop; the connection is closed by whoever holds it.
      this.destroy(err as Error);
      return false;
    }
    let more = true;
    for (const csv of this.writer.take()) more = this.push(csv);
    if (rest === null) return more;
    if (!this.messages.failed) {
      if (!this.rows.complete) {
        this.detach(rest);
        this.destroy(new Error('COPY ended without its trailer'));
        return false;
      }
      for (const csv of this.writer.finish()) this.push(csv);
      this.push(null);
    }
    // pg reads the rest: CommandComplete and ReadyForQuery, or the ErrorResponse (handleError).
    this.detach(rest);
    return false;
  }

  private detach(rest: Buffer): void {
    if (this.direct !== null) {
      const socket = this.direct;
      this.direct = null;
      socket.releaseReads(rest);
      return;
    }
    const stream = this.connection!.stream;
    const handler = this.pgDataHandler!;
    this.pgDataHandler = null;
    stream.removeListener('readable', this.onReadable);
    stream.on('data', handler);
    if (rest.length > 0) handler(rest);
    // Adding a data listener resumes a paused stream only on the next tick; make sure it flows.
    process.nextTick(() => stream.resume());
  }
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
 * has started and its first rows arrived before this resolves, so a database failure at the start
 * rejects here rather than cutting a download short. Closing the iterator early (the client went
 * away) ends the COPY by closing its connection.
 */
export async function copyWaitlistCsv(db: Kysely<Database>, options: CopyExportOptions): Promise<AsyncIterableIterator<Buffer> | null> {
  const client = await withCopyClient(db);
  if (!client) return null;
  const writer = new SpecCsvWriter(options.timeZone, options.onRows);
  const query = new CopyCsvQuery(`COPY (${copyExportQuery(db, options.filter)}) TO STDOUT (FORMAT binary)`, writer);
  let released = false;
  const release = (complete: boolean) => {
    if (released) return;
    released = true;
    if (complete) {
      client.release();
    } else {
      // Stopped mid-COPY: the connection is in the middle of the protocol, so it is closed, not reused.
      query.destroy();
      client.release(true);
    }
  };
  const iterator = (query as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  let first: IteratorResult<Buffer>;
  try {
    client.query(query as unknown as pg.Submittable);
    first = await iterator.next();
  } catch (err) {
    release(false);
    throw err;
  }
  const csv = (async function* () {
    let complete = false;
    try {
      yield writer.header();
      if (first.done) {
        // Nothing matched: the COPY ended cleanly, and the connection goes back to the pool.
        complete = true;
        return;
      }
      yield first.value;
      for (;;) {
        const next = await iterator.next();
        if (next.done) break;
        yield next.value;
      }
      complete = true;
    } finally {
      release(complete);
    }
  })();
  // Closed early (the response went away): the COPY stops and its connection is closed at once,
  // before the generator finishes, which may be waiting for rows a sparse filter has yet to find. A
  // generator closed before its first next() never runs its finally, so this lets go of the
  // connection then too.
  const handle: AsyncIterableIterator<Buffer> = {
    next: () => csv.next(),
    return: async () => {
      release(false);
      return csv.return(undefined);
    },
    [Symbol.asyncIterator]: () => handle,
  };
  return handle;
}

/** The CSV from a binary COPY's bytes, however they are split (for the tests). */
export function writeCsv(input: Iterable<Buffer>, options: Omit<CopyExportOptions, 'filter'>): Buffer {
  const writer = new SpecCsvWriter(options.timeZone, options.onRows);
  const rows = new BinaryCopyRows(writer);
  const out = [writer.header()];
  for (const chunk of input) {
    rows.feed(chunk, 0, chunk.length);
    out.push(...writer.take());
  }
  if (!rows.complete) throw new Error('COPY ended without its trailer');
  out.push(...writer.finish());
  return Buffer.concat(out);
}
