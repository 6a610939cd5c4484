import type SQLite from 'better-sqlite3';
import type { CompiledQuery, Kysely } from 'kysely';
import { rawSqliteOf } from '../db/database.js';
import type { Database } from '../db/schema.js';
import {
  ID_CHUNK_SIZE,
  SQLITE_EXPORT_CELL_SEPARATOR,
  SQLITE_EXPORT_ROW_SEPARATOR,
  sqliteExportBatchQuery,
  sqliteExportRowsQuery,
  type WaitlistCursor,
} from './admin-repository.js';
import { BYTE_CLASS, CELL, CELLS, SpecCsvWriter } from './export-bytes.js';
import type { WaitlistFilter } from '../../shared/admin/waitlist-filter.js';

/**
 * The spec's four-column export on SQLite. Each batch of 5,000 rows comes back from SQLite as one
 * buffer (admin-repository.ts sqliteExportBatchQuery: the cells joined by control characters), and
 * SpecCsvWriter (export-bytes.ts) writes the CSV from its bytes: no JavaScript string or object per
 * row. The rows come joined in the order the subquery reads them, which SQLite does not promise, so
 * each batch's order is checked (created_at, then the id's start) and a batch where it does not hold
 * or cannot be told (equal timestamps) is read again with string_agg … ORDER BY. A batch whose
 * values hold a separator (a control character, which no real address or place has) does not split
 * into its rows and cells as the count says; that batch is read again as rows and written from
 * their text instead, so the file is the same either way. Each row's created_at is read from its
 * text once per hour (CreatedAtReader; isoTime and it are exported for their tests).
 *
 * Each batch is one synchronous statement on the server's connection (as every SQLite query is), so
 * no write falls between a batch and its second reading; between batches other requests run.
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

/** Milliseconds since the epoch of the ISO text at buf[from, to): read directly in its canonical form (`YYYY-MM-DDTHH:MM:SS.sssZ`), else as Date.parse reads it. */
export function isoTime(buf: Buffer, from: number, to: number): number {
  if (to - from === 24 && buf[from + 10] === 0x54 && buf[from + 23] === 0x5a && buf[from + 4] === 0x2d && buf[from + 19] === 0x2e) {
    const d = (i: number) => buf[from + i]! - 48;
    const year = d(0) * 1000 + d(1) * 100 + d(2) * 10 + d(3);
    const month = d(5) * 10 + d(6);
    const day = d(8) * 10 + d(9);
    const hour = d(11) * 10 + d(12);
    const minute = d(14) * 10 + d(15);
    const second = d(17) * 10 + d(18);
    const millisecond = d(20) * 100 + d(21) * 10 + d(22);
    let digits = true;
    for (const i of DIGIT_AT) if (buf[from + i]! < 48 || buf[from + i]! > 57) digits = false;
    // Days past the 28th depend on the month, and years below 100 are read differently by Date.UTC: both left to Date.parse.
    if (digits && year >= 100 && month >= 1 && month <= 12 && day >= 1 && day <= 28 && hour <= 23 && minute <= 59 && second <= 59) {
      return Date.UTC(year, month - 1, day, hour, minute, second, millisecond);
    }
  }
  return Date.parse(buf.toString('utf8', from, to));
}

/** Where the canonical ISO text has digits. */
const DIGIT_AT = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22];
/** The ISO text's start that names its hour (`YYYY-MM-DDTHH`). */
const HOUR_PREFIX = 13;
const HOUR_DIGIT_AT = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12];

function isDigit(byte: number): boolean {
  return byte >= 48 && byte <= 57;
}

/**
 * The milliseconds within its hour (minute, second, millisecond) of the ISO text at buf[from, to)
 * when its part after the hour is canonical (`:MM:SS.sssZ`, 24 bytes in all, the minute and second
 * below 60); -1 otherwise.
 */
function withinHour(buf: Buffer, from: number, to: number): number {
  if (to - from !== 24 || buf[from + 13] !== 0x3a || buf[from + 16] !== 0x3a || buf[from + 19] !== 0x2e || buf[from + 23] !== 0x5a) return -1;
  const m1 = buf[from + 14]!;
  const m2 = buf[from + 15]!;
  const s1 = buf[from + 17]!;
  const s2 = buf[from + 18]!;
  const f1 = buf[from + 20]!;
  const f2 = buf[from + 21]!;
  const f3 = buf[from + 22]!;
  if (!isDigit(m1) || !isDigit(m2) || !isDigit(s1) || !isDigit(s2) || !isDigit(f1) || !isDigit(f2) || !isDigit(f3) || m1 > 0x35 || s1 > 0x35) return -1;
  return ((m1 - 48) * 10 + m2 - 48) * 60_000 + ((s1 - 48) * 10 + s2 - 48) * 1000 + (f1 - 48) * 100 + (f2 - 48) * 10 + f3 - 48;
}

/** Whether the ISO text at buf[from] starts with a canonical hour (`YYYY-MM-DDTHH`: digits, dashes, T; the hour below 24). */
function isCanonicalHour(buf: Buffer, from: number): boolean {
  for (let i = 0; i < HOUR_DIGIT_AT.length; i++) if (!isDigit(buf[from + HOUR_DIGIT_AT[i]!]!)) return false;
  const hour = (buf[from + 11]! - 48) * 10 + buf[from + 12]! - 48;
  return hour <= 23 && buf[from + 4] === 0x2d && buf[from + 7] === 0x2d && buf[from + 10] === 0x54;
}

/**
 * created_at as milliseconds, for rows read newest first. The rows of one hour share their text's
 * first 13 bytes (`YYYY-MM-DDTHH`), so the first row of an hour is read by isoTime (as Date.parse
 * would read it) and the rows after it add their minute, second and millisecond to that hour's
 * start: the same number, since for text in the canonical form Date.parse also just adds those up
 * (Date.UTC's integers, exactly). A text not in that form, and the first row of each hour, go to
 * isoTime itself. Two rows of one hour in the canonical form also sort as their milliseconds do,
 * which saves the order check a comparison of their text.
 */
export class CreatedAtReader {
  private readonly hour = Buffer.alloc(HOUR_PREFIX);
  private hourStart = Number.NaN;
  private previousCanonical = false;
  /** Whether the text last read and the one before are both canonical and of the same hour (so their order is their milliseconds'). */
  sameHourAsPrevious = false;

  read(buf: Buffer, from: number, to: number): number {
    const offset = withinHour(buf, from, to);
    if (offset !== -1 && this.isCachedHour(buf, from)) {
      // The cached hour is the previous row's when that row was canonical: it read or set it.
      this.sameHourAsPrevious = this.previousCanonical;
      this.previousCanonical = true;
      return this.hourStart + offset;
    }
    const ms = isoTime(buf, from, to);
    this.sameHourAsPrevious = false;
    this.previousCanonical = offset !== -1 && isCanonicalHour(buf, from) && Number.isFinite(ms);
    if (this.previousCanonical) {
      buf.copy(this.hour, 0, from, from + HOUR_PREFIX);
      this.hourStart = ms - offset;
    }
    return ms;
  }

  private isCachedHour(buf: Buffer, from: number): boolean {
    if (Number.isNaN(this.hourStart)) return false;
    const hour = this.hour;
    for (let i = HOUR_PREFIX - 1; i >= 0; i--) if (buf[from + i] !== hour[i]) return false;
    return true;
  }
}

/**
 * The export as chunks of bytes (BOM and header first), or null when `db` is not SQLite. The first
 * batch is read before this returns, so a database failure at the start rejects here rather than
 * cutting a download short.
 */
export async function sqliteWaitlistCsv(db: Kysely<Database>, options: SqliteExportOptions): Promise<AsyncIterableIterator<Buffer> | null> {
  const sqlite = rawSqliteOf(db);
  if (!sqlite) return null;
  const { filter } = options;
  const statements = new Map<string, SQLite.Statement>();
  const prepared = (compiled: CompiledQuery) => {
    let statement = statements.get(compiled.sql);
    if (!statement) statements.set(compiled.sql, (statement = sqlite.prepare(compiled.sql)));
    return statement;
  };
  const writer = new SpecCsvWriter(options.timeZone, options.onRows);
  const start = new Int32Array(CELLS);
  const end = new Int32Array(CELLS);
  // A batch's row: the six cells, then the start of the id.
  const FRAME = CELLS + 1;
  // Where each cell of the batch starts (and, at the end, one past the last), and what its bytes
  // are (its classes, the OR of BYTE_CLASS over them, worked out in the same pass): filled by split().
  const bounds = new Int32Array(ID_CHUNK_SIZE * FRAME + 1);
  const classes = new Int32Array(ID_CHUNK_SIZE * FRAME);
  const flags = new Int32Array(CELLS);
  // Each row's created_at in milliseconds, filled by split().
  const times = new Float64Array(ID_CHUNK_SIZE);
  const createdAt = new CreatedAtReader();

  /** Compares the `cell`th cells of rows r - 1 and r: positive when row r - 1's sorts after row r's. */
  const compareCells = (buf: Buffer, r: number, cell: number) => {
    const previous = (r - 1) * FRAME + cell;
    const current = r * FRAME + cell;
    return -buf.compare(buf, bounds[previous]!, bounds[previous + 1]! - 1, bounds[current]!, bounds[current + 1]! - 1);
  };

  /**
   * Finds the cells of a batch of `n` rows and their created_at (`times`); false when it does not
   * split into n rows of seven cells, or (`checkOrder`) when its rows are not in the list's order:
   * created_at descending, then the id's start descending (equal starts cannot be told apart, so
   * they fail the check too).
   */
  const split = (buf: Buffer, n: number, checkOrder: boolean): boolean => {
    let cell = 0;
    let bytes = 0;
    bounds[0] = 0;
    for (let i = 0; i < buf.length; i++) {
      const b = buf[i]!;
      if (b === SQLITE_EXPORT_CELL_SEPARATOR) {
        classes[cell] = bytes;
        bytes = 0;
        if (++cell % FRAME === 0 || cell >= bounds.length) return false;
        bounds[cell] = i + 1;
      } else if (b === SQLITE_EXPORT_ROW_SEPARATOR) {
        classes[cell] = bytes;
        bytes = 0;
        if (++cell % FRAME !== 0 || cell >= bounds.length) return false;
        bounds[cell] = i + 1;
      } else {
        bytes |= BYTE_CLASS[b]!;
      }
    }
    classes[cell] = bytes;
    if (cell !== n * FRAME - 1) return false;
    bounds[n * FRAME] = buf.length + 1;
    for (let r = 0; r < n; r++) {
      const at = r * FRAME + CELL.createdAt;
      times[r] = createdAt.read(buf, bounds[at]!, bounds[at + 1]! - 1);
      if (!checkOrder || r === 0) continue;
      // Rows of one hour in the canonical form sort as their milliseconds do; others by their text.
      const byTime = createdAt.sameHourAsPrevious ? times[r - 1]! - times[r]! : compareCells(buf, r, CELL.createdAt);
      if (byTime < 0 || (byTime === 0 && compareCells(buf, r, CELLS) <= 0)) return false;
    }
    return true;
  };

  /** Writes the `n` rows split() found. */
  const writeRows = (buf: Buffer, n: number) => {
    for (let r = 0; r < n; r++) {
      for (let c = 0; c < CELLS; c++) {
        start[c] = bounds[r * FRAME + c]!;
        end[c] = bounds[r * FRAME + c + 1]! - 1;
        flags[c] = classes[r * FRAME + c]!;
      }
      const minutes = Math.floor(times[r]! / 60_000);
      writer.row(buf, start, end, minutes, times[r]! - minutes * 60_000, flags);
    }
  };

  /** One row read as text: its cells as UTF-8, written like any other. */
  const writeTextRow = (values: Array<string | null>) => {
    const parts = values.map((v) => Buffer.from(v ?? ''));
    const buf = Buffer.concat(parts);
    let at = 0;
    for (let c = 0; c < CELLS; c++) {
      start[c] = at;
      at += parts[c]!.length;
      end[c] = at;
    }
    const ms = isoTime(buf, start[CELL.createdAt]!, end[CELL.createdAt]!);
    const minutes = Math.floor(ms / 60_000);
    writer.row(buf, start, end, minutes, ms - minutes * 60_000);
  };

  /** Writes the batch after `after`; the position after it, or null at the end. */
  const batch = (after: WaitlistCursor | null) =>
    db.connection().execute(async () => {
      const read = (ordered: boolean) => {
        const compiled = sqliteExportBatchQuery(db, filter, after, ID_CHUNK_SIZE, ordered);
        return prepared(compiled).get(...(compiled.parameters as unknown[])) as BatchRow;
      };
      let row = read(false);
      if (!row.n || !row.cells || row.last === null) return null;
      if (!split(row.cells, row.n, true)) {
        row = read(true);
        if (!row.cells || !split(row.cells, row.n, false)) {
          // A value held a separator: the same rows, read as text. Each batch is one synchronous
          // run on the server's only connection, so no write comes in between its readings.
          const compiled = sqliteExportRowsQuery(db, filter, after, ID_CHUNK_SIZE);
          const rows = prepared(compiled).raw(true).all(...(compiled.parameters as unknown[])) as Array<Array<string | null>>;
          for (const values of rows) writeTextRow(values);
          row.cells = null;
        }
      }
      if (row.cells) writeRows(row.cells, row.n);
      const separator = row.last!.indexOf(String.fromCharCode(SQLITE_EXPORT_CELL_SEPARATOR));
      return row.n < ID_CHUNK_SIZE ? null : { createdAt: row.last!.slice(0, separator), id: row.last!.slice(separator + 1) };
    });

  let next = await batch(null);
  return (async function* () {
    yield writer.header();
    yield* writer.take();
    while (next) {
      next = await batch(next);
      yield* writer.take();
    }
    yield* writer.finish();
  })();
}
