import { lend } from '../http/returned-buffers.js';
import { CSV_BOM, csvField } from '../../shared/csv.js';
import { dateJoinedBlock, formatDateJoinedAt } from '../../shared/waitlist/display.js';
import { waitlistCsvHeader, waitlistCsvRecord } from '../../shared/waitlist/csv.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';

/**
 * The spec's four CSV columns (Email, Date Joined, IP Address, Location) written from the bytes a
 * database hands over, for the exports of a million rows (export-copy.ts on PostgreSQL,
 * export-sqlite.ts on SQLite). Reading a row as six JavaScript strings and an object costs more than
 * the database takes to produce it, and formatting it from strings as much again; here each row's
 * cells are positions in a buffer of UTF-8, and:
 *
 * - a cell is copied as it is when csvField would leave it so and it is visibly not blank: no
 *   byte below 0x20, no quote, no comma (but between location parts), no formula start, and at
 *   least one character that is surely not white space (so String#trim() cannot empty it);
 * - Date Joined is the shared formatter's text for the row's 15-minute block, its minute filled in;
 * - any other row (an address with a comma, a city of only non-ASCII spaces, a blank IP) is decoded
 *   and written by waitlistCsvRecord itself.
 *
 * The file is therefore byte for byte what waitlistCsvChunks writes from the same rows
 * (tests/server/export-bytes.test.ts compares them on adversarial rows, on both databases).
 */

/** Output chunk size: large enough that the response stream sees few writes. */
const CHUNK_BYTES = 256 * 1024;
/** Chunks given back and kept for reuse (http/returned-buffers.ts); more are simply allocated. */
const SPARE_CHUNKS = 4;
/** Bytes of a row outside its cells: separators, the location's quotes and ", " joins, CRLF, "N/A", "Unknown". */
const ROW_OVERHEAD = 32;
/** Room a Date Joined cell may take (the en-US text is ~25 bytes; quotes and U+202F included). */
const DATE_CELL_MAX = 96;

/** The cells of a row, by position in `start`/`end`; a cell whose end is -1 or equals its start has no value (NULL or ''). */
export const CELL = { email: 0, createdAt: 1, ip: 2, city: 3, region: 4, country: 5 } as const;
export const CELLS = 6;

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

/** What a byte says about its cell (a cell's classes: the OR over its bytes). */
export const BYTE_BAD = 1; // a control character or a quote: csvField would change the cell
export const BYTE_COMMA = 2;
export const BYTE_VISIBLE = 4; // surely not white space to String#trim()

/** BYTE_* per byte value; 0x80–0xBF (UTF-8 continuation bytes) and spaces say nothing. */
export const BYTE_CLASS = new Uint8Array(256).map((_, b) =>
  b < SPACE || b === QUOTE ? BYTE_BAD : b === COMMA ? BYTE_COMMA | BYTE_VISIBLE : (b > SPACE && b < 0x80) || (b >= 0xc0 && !mayBeSpace(b)) ? BYTE_VISIBLE : 0,
);

const NOT_PLAIN = 0;
const PLAIN = 1;
const PLAIN_WITH_COMMA = 2;

/**
 * Whether the cell whose bytes say `flags` (its classes) and begin with `firstByte` is text csvField
 * leaves as it is (PLAIN) and trim() leaves non-empty: no control byte, no quote, no formula start
 * when `first`, and a character that is surely not white space. A comma makes it PLAIN_WITH_COMMA
 * where `commaAllowed` (a location part, which is quoted then), NOT_PLAIN elsewhere. Bytes of 0x80
 * and above (UTF-8 of other characters) are fine.
 */
function plain(flags: number, firstByte: number, first: boolean, commaAllowed: boolean): number {
  if (flags & BYTE_BAD || !(flags & BYTE_VISIBLE)) return NOT_PLAIN;
  if (first && isFormulaStart(firstByte)) return NOT_PLAIN;
  if (flags & BYTE_COMMA) return commaAllowed ? PLAIN_WITH_COMMA : NOT_PLAIN;
  return PLAIN;
}

/** Copies src[from, to) into target at `at`, returning the end: a plain loop beats Buffer#copy for the few bytes of a cell. */
function put(target: Buffer, at: number, src: Buffer, from: number, to: number): number {
  for (let i = from; i < to; i++) target[at++] = src[i]!;
  return at;
}

/** What plain() said of the cell writeCell() wrote last. */
let cellKind = NOT_PLAIN;

/**
 * Copies src[from, to) (a cell, not empty) into target at `at` and returns the end, setting cellKind
 * to plain()'s verdict on it. Its classes are `known` when the caller worked them out already,
 * else (-1) they are worked out from the bytes as they are copied: one pass over the cell, not two.
 */
function writeCell(target: Buffer, at: number, src: Buffer, from: number, to: number, known: number, first: boolean, commaAllowed: boolean): number {
  let classes = known;
  if (classes < 0) {
    const lead = src[from]!;
    let i = from;
    classes = 0;
    if (lead > SPACE && lead < 0x7f && to - from >= 8) {
      // Four bytes at a time (most cells are ASCII text that starts visibly): copied as a word, and
      // checked for a byte below 0x20, a quote or a comma with the usual word tricks, exact as to
      // whether one is there (bytes of 0x80 and above are none of them).
      const source = viewOf(src);
      const sink = sinkOf(target);
      let bad = 0;
      let comma = 0;
      for (; i + 4 <= to; i += 4, at += 4) {
        const word = source.getUint32(i, true);
        sink.setUint32(at, word, true);
        const quote = word ^ 0x22222222;
        const commas = word ^ 0x2c2c2c2c;
        bad |= ((word - 0x20202020) & ~word) | ((quote - 0x01010101) & ~quote);
        comma |= (commas - 0x01010101) & ~commas;
      }
      classes = BYTE_VISIBLE | (bad & 0x80808080 ? BYTE_BAD : 0) | (comma & 0x80808080 ? BYTE_COMMA : 0);
    }
    for (; i < to; i++) {
      const byte = src[i]!;
      classes |= BYTE_CLASS[byte]!;
      target[at++] = byte;
    }
  } else {
    at = put(target, at, src, from, to);
  }
  cellKind = plain(classes, src[from]!, first, commaAllowed);
  return at;
}

/** A DataView of the buffer it was asked for last, made once per buffer (a socket read holds hundreds of rows, a chunk thousands). */
function lastView(): (buf: Buffer) => DataView {
  let viewed: Buffer | null = null;
  let view: DataView = new DataView(new ArrayBuffer(0));
  return (buf) => {
    if (buf !== viewed) {
      viewed = buf;
      view = new DataView(buf.buffer, buf.byteOffset, buf.length);
    }
    return view;
  };
}
/** The views of the buffer read and of the buffer written. */
const viewOf = lastView();
const sinkOf = lastView();

/**
 * Date Joined as bytes for the rows of one 15-minute block of UTC time: the shared formatter's text
 * around the minute (dateJoinedBlock), with csvField's quotes, so a row's cell is three short copies.
 * Where the block cannot be written so, each row's time is formatted (and quoted) by itself.
 */
class DateCells {
  private index = Number.NaN;
  /** The block's first minute, in minutes since the epoch. */
  private start = 0;
  private minute = 0;
  private before: Buffer | null = null;
  private after: Buffer | null = null;
  private beforeText = '';
  private afterText = '';

  constructor(private readonly timeZone: string) {}

  /** Writes the cell of the time `minutes` * 60,000 + `milli` ms into target at `at`; returns the end. Room for DATE_CELL_MAX bytes is assumed. */
  write(target: Buffer, at: number, minutes: number, milli: number): number {
    const index = Math.floor(minutes / 15);
    if (index !== this.index) this.load(index, minutes * 60_000 + milli);
    if (this.before === null) return at + Buffer.from(csvField(formatDateJoinedAt(minutes * 60_000 + milli, this.timeZone))).copy(target, at);
    const minute = this.minute + (minutes - this.start);
    at = put(target, at, this.before, 0, this.before.length);
    target[at++] = 0x30 + Math.floor(minute / 10);
    target[at++] = 0x30 + (minute % 10);
    return put(target, at, this.after!, 0, this.after!.length);
  }

  private load(index: number, ms: number): void {
    this.index = index;
    const block = dateJoinedBlock(ms, this.timeZone);
    if (!block) {
      this.before = this.after = null;
      return;
    }
    this.start = block.index * 15;
    this.minute = block.minute;
    // Blocks of one local hour share their text around the minute: its bytes are made once.
    if (this.before !== null && block.before === this.beforeText && block.after === this.afterText) return;
    this.before = this.after = null;
    // csvField quotes the text (it has commas) and changes nothing else; checked, not assumed.
    const text = block.before + String(block.minute).padStart(2, '0') + block.after;
    if (csvField(text) !== `"${text}"`) return;
    this.beforeText = block.before;
    this.afterText = block.after;
    this.before = Buffer.from(`"${block.before}`);
    this.after = Buffer.from(`${block.after}"`);
  }
}

/**
 * Writes the export from rows given as cell positions: `header()` first, `row()` for each row in
 * order, `take()` for the chunks completed so far, `finish()` for the last one.
 */
export class SpecCsvWriter {
  private out: Buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  private used = 0;
  private rows = 0;
  private readonly ready: Buffer[] = [];
  /** Chunks given back by the download's consumer, to write into again. */
  private readonly spare: Buffer[] = [];
  private readonly dates: DateCells;

  constructor(
    private readonly timeZone: string,
    private readonly onRows?: (rows: number) => void,
  ) {
    this.dates = new DateCells(timeZone);
  }

  header(): Buffer {
    return Buffer.from(CSV_BOM + waitlistCsvHeader());
  }

  /**
   * One row: its cells in buf (see CELL), created_at as whole minutes since the epoch and the
   * milliseconds after that minute (two small integers: a time in milliseconds is a double, which
   * V8 boxes, 16 bytes of garbage a row, when it is passed to a call it does not inline), and each
   * cell's classes when the caller has them already (else they are worked out as it is copied).
   */
  row(buf: Buffer, start: Int32Array, end: Int32Array, minutes: number, milli: number, flags?: Int32Array): void {
    let size = DATE_CELL_MAX + ROW_OVERHEAD;
    for (let i = 0; i < CELLS; i++) if (i !== CELL.createdAt && end[i]! > start[i]!) size += end[i]! - start[i]!;
    this.room(size);
    const written = this.plainRow(buf, start, end, minutes, milli, flags);
    if (written === -1) {
      const record = Buffer.from(waitlistCsvRecord(decodeRow(buf, start, end, minutes * 60_000 + milli), this.timeZone));
      this.room(record.length);
      this.used += record.copy(this.out, this.used);
    } else {
      this.used = written;
    }
    this.rows++;
    if (this.used >= CHUNK_BYTES - 1024) this.flush();
  }

  /** The chunks completed since the last call. */
  take(): Buffer[] {
    return this.ready.splice(0);
  }

  /** The last chunks (the rows not yet taken). */
  finish(): Buffer[] {
    if (this.used > 0 || this.rows > 0) this.flush();
    return this.take();
  }

  /** Makes room for `size` more bytes: the chunk so far is set aside when they would not fit. */
  private room(size: number): void {
    if (this.used + size <= this.out.length) return;
    if (this.used > 0) this.flush();
    if (size > this.out.length) this.out = Buffer.allocUnsafe(size);
  }

  private flush(): void {
    const whole = this.out;
    this.ready.push(
      whole.length === CHUNK_BYTES
        ? lend(whole.subarray(0, this.used), () => {
            if (this.spare.length < SPARE_CHUNKS) this.spare.push(whole);
          })
        : whole.subarray(0, this.used),
    );
    this.out = this.spare.pop() ?? Buffer.allocUnsafe(CHUNK_BYTES);
    this.used = 0;
    this.onRows?.(this.rows);
    this.rows = 0;
  }

  /**
   * The row written from its bytes at `used` when every cell is plain: the new end; -1 otherwise
   * (what was copied of it by then is left beyond `used`, to be written over).
   */
  private plainRow(buf: Buffer, start: Int32Array, end: Int32Array, minutes: number, milli: number, flags: Int32Array | undefined): number {
    const target = this.out;
    // Email: never NULL; plain or not at all.
    if (end[0]! <= start[0]!) return -1;
    let o = writeCell(target, this.used, buf, start[0]!, end[0]!, flags ? flags[0]! : -1, true, false);
    if (cellKind === NOT_PLAIN) return -1;
    target[o++] = COMMA;
    o = this.dates.write(target, o, minutes, milli);
    target[o++] = COMMA;
    // IP Address: none (NULL or '') is N/A; a value must be plain (a blank one is N/A too, left to the slow path).
    if (end[2]! === -1 || end[2] === start[2]) {
      o = put(target, o, NA, 0, NA.length);
    } else {
      o = writeCell(target, o, buf, start[2]!, end[2]!, flags ? flags[2]! : -1, true, false);
      if (cellKind === NOT_PLAIN) return -1;
    }
    target[o++] = COMMA;
    // Location: the non-blank parts of city, region, country joined with ", ", quoted when that
    // makes a comma (a byte is kept for the opening quote, and given back when none is needed). An
    // empty part is skipped as formatLocation does; a part that is not plain (blank after trim(),
    // a quote, a control character) leaves the row to the slow path.
    const open = o++;
    let parts = 0;
    let comma = false;
    for (let i = 3; i <= 5; i++) {
      if (end[i]! === -1 || end[i] === start[i]) continue;
      if (parts > 0) o = put(target, o, JOIN, 0, JOIN.length);
      o = writeCell(target, o, buf, start[i]!, end[i]!, flags ? flags[i]! : -1, parts === 0, true);
      if (cellKind === NOT_PLAIN) return -1;
      if (cellKind === PLAIN_WITH_COMMA) comma = true;
      parts++;
    }
    if (parts === 0) {
      o = put(target, open, UNKNOWN, 0, UNKNOWN.length);
    } else if (parts > 1 || comma) {
      target[open] = QUOTE;
      target[o++] = QUOTE;
    } else {
      target.copyWithin(open, open + 1, o);
      o--;
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
