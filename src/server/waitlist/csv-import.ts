import type { NewWaitlistEntry } from './repository.js';
import { checkWaitlistEmail } from '../../shared/waitlist/email.js';

/**
 * Parsing for `npm run db -- import`: a waitlist CSV as our admin export writes it (see
 * ../admin/csv.ts) or as the original product exported it (same four columns).
 *
 * The whole file is parsed from one string; at 100,000 lines that is ~10 MB of text plus one small
 * object per row, which is fine for a command-line tool. Nothing here touches the database.
 *
 * Accepted:
 * - a UTF-8 byte-order mark, CRLF or LF (or lone CR) line ends, RFC 4180 quoting (commas, doubled
 *   quotes and line breaks inside quoted fields);
 * - the formula-injection quote the export adds: a leading `'` before = + - @ TAB or CR is removed;
 * - a header row (required; names case-insensitive, columns in any order). Email is required;
 *   Date Joined, IP Address and Location are optional; unknown columns are ignored with a warning;
 * - Date Joined as en-US "Nov 22, 2026, 06:04 AM" (the admin table's format, in the time zone the
 *   file was written in) or ISO-8601 ("2026-11-22T06:04:00Z"; without an offset it is read in the
 *   time zone too);
 * - IP Address 'N/A' or empty → null;
 * - Location 'Unknown' or empty → no location; otherwise see `parseLocation`.
 */

export const IMPORT_COLUMNS = { email: 'Email', dateJoined: 'Date Joined', ipAddress: 'IP Address', location: 'Location' } as const;
type ColumnKey = keyof typeof IMPORT_COLUMNS;

export interface CsvRecord {
  /** Physical (1-based) line of the file where the record starts. */
  line: number;
  fields: string[];
  /** Set when the record is malformed (unterminated quote, text after a closing quote). */
  error?: string;
}

/** A good line of the file: a waitlist entry to insert, and where it came from. */
export type ImportRow = Omit<NewWaitlistEntry, 'id'> & { line: number };

export interface BadLine {
  line: number;
  reason: string;
}

export interface ParsedWaitlistCsv {
  rows: ImportRow[];
  bad: BadLine[];
  /** Records repeating an e-mail address (case-insensitively) already seen earlier in the file. */
  duplicates: number;
  /** Non-fatal remarks about the header (ignored columns, missing Date Joined). */
  warnings: string[];
}

/** The file cannot be imported at all (no header, no Email column, a column named twice). */
export class CsvHeaderError extends Error {
  override name = 'CsvHeaderError';
}

// ---------------------------------------------------------------------------------------------
// RFC 4180 records

const COMMA = 44;
const CR = 13;
const LF = 10;

/** Line breaks in text[from, to): LF, and CR not followed by LF. */
function countLineBreaks(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === LF || (c === CR && text.charCodeAt(i + 1) !== LF)) n++;
  }
  return n;
}

/**
 * Splits CSV text into records, each with the physical line it starts on. A leading BOM is
 * skipped. Lenient where RFC 4180 is ambiguous in practice: a quote inside an unquoted field is
 * kept as text. A malformed record is still yielded, with `error` set, so it can be reported
 * by line number; an unterminated quote swallows the rest of the file into that one record.
 */
export function* readCsvRecords(text: string): Generator<CsvRecord> {
  const n = text.length;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  while (i < n) {
    const start = line;
    const fields: string[] = [];
    let error: string | undefined;
    for (;;) {
      let value: string;
      if (text[i] === '"') {
        value = '';
        i++;
        for (;;) {
          const q = text.indexOf('"', i);
          if (q === -1) {
            value += text.slice(i);
            line += countLineBreaks(text, i, n);
            i = n;
            error ??= 'a quoted field is never closed (missing ")';
            break;
          }
          value += text.slice(i, q);
          line += countLineBreaks(text, i, q);
          if (text[q + 1] === '"') {
            value += '"';
            i = q + 2;
          } else {
            i = q + 1;
            break;
          }
        }
        if (i < n) {
          let j = i;
          while (j < n) {
            const c = text.charCodeAt(j);
            if (c === COMMA || c === CR || c === LF) break;
            j++;
          }
          if (j > i) {
            error ??= 'text after a closing quote (a quote inside a field must be doubled)';
            value += text.slice(i, j);
            i = j;
          }
        }
      } else {
        let j = i;
        while (j < n) {
          const c = text.charCodeAt(j);
          if (c === COMMA || c === CR || c === LF) break;
          j++;
        }
        value = text.slice(i, j);
        i = j;
      }
      fields.push(value);
      if (i >= n) break;
      const c = text.charCodeAt(i);
      if (c === COMMA) {
        i++;
        if (i >= n) {
          fields.push('');
          break;
        }
        continue;
      }
      // End of record: CRLF, LF or a lone CR.
      i += c === CR && text.charCodeAt(i + 1) === LF ? 2 : 1;
      line++;
      break;
    }
    yield error ? { line: start, fields, error } : { line: start, fields };
  }
}

// ---------------------------------------------------------------------------------------------
// Cells

const FORMULA_QUOTED = /^'[=+\-@\t\r]/;

/** Undoes the export's formula neutralisation: `'=x` → `=x` (only before = + - @ TAB CR). */
export function removeFormulaQuote(value: string): string {
  return FORMULA_QUOTED.test(value) ? value.slice(1) : value;
}

/** 'N/A' (any case) or empty → null, else the trimmed address (kept as text, not validated). */
export function parseIpAddress(value: string): string | null {
  const v = value.trim();
  return v === '' || v.toUpperCase() === 'N/A' ? null : v;
}

export interface ParsedLocation {
  city: string | null;
  region: string | null;
  country: string | null;
}

/**
 * The export writes Location as the non-empty parts of (city, region, country) joined with ", ",
 * so the split back is a heuristic:
 * - 'Unknown' (any case) or empty → no location;
 * - 3 or more parts → city = the first, country = the last, region = the part(s) in between,
 *   joined again with ", " (so "Washington, D.C., District of Columbia, United States" keeps
 *   "D.C., District of Columbia" as its region);
 * - 2 parts → city and country (no region);
 * - 1 part → country only.
 * A stored city + region without country, or a region alone, therefore comes back differently.
 */
export function parseLocation(value: string): ParsedLocation {
  const v = value.trim();
  if (v === '' || v.toLowerCase() === 'unknown') return { city: null, region: null, country: null };
  const parts = v
    .split(/\s*,\s*/)
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0) return { city: null, region: null, country: null };
  if (parts.length === 1) return { city: null, region: null, country: parts[0]! };
  if (parts.length === 2) return { city: parts[0]!, region: null, country: parts[1]! };
  return { city: parts[0]!, region: parts.slice(1, -1).join(', '), country: parts[parts.length - 1]! };
}

// ---------------------------------------------------------------------------------------------
// Dates

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

function monthNumber(name: string): number | null {
  const n = name.toLowerCase();
  if (n === 'sept') return 9;
  if (n.length < 3) return null;
  const index = MONTHS.findIndex((m) => m.startsWith(n));
  return index === -1 ? null : index + 1;
}

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

function isValidWallTime(t: WallTime): boolean {
  const date = new Date(Date.UTC(t.year, t.month - 1, t.day));
  return (
    t.year >= 1000 &&
    date.getUTCFullYear() === t.year &&
    date.getUTCMonth() === t.month - 1 &&
    date.getUTCDate() === t.day &&
    t.hour <= 23 &&
    t.minute <= 59 &&
    t.second <= 59
  );
}

const offsetFormatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC, in milliseconds, at the instant `utcMs`. */
function zoneOffsetMs(timeZone: string, utcMs: number): number {
  let formatter = offsetFormatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    offsetFormatters.set(timeZone, formatter);
  }
  const get = (parts: Intl.DateTimeFormatPart[], type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const parts = formatter.formatToParts(new Date(utcMs));
  const wallAsUtc = Date.UTC(get(parts, 'year'), get(parts, 'month') - 1, get(parts, 'day'), get(parts, 'hour') % 24, get(parts, 'minute'), get(parts, 'second'));
  return wallAsUtc - (utcMs - (((utcMs % 1000) + 1000) % 1000));
}

/**
 * The instant a wall-clock time in `timeZone` names. Around a DST change the clocks skip or repeat
 * an hour: a skipped time is read with the offset from before the change (so it lands after it),
 * a repeated time resolves to one of its two instants.
 */
function wallTimeToUtc(t: WallTime, timeZone: string): number {
  const wall = Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second, t.millisecond);
  if (timeZone === 'UTC') return wall;
  const first = zoneOffsetMs(timeZone, wall);
  const guess = wall - first;
  const second = zoneOffsetMs(timeZone, guess);
  return second === first ? guess : wall - second;
}

// en-US "Nov 22, 2026, 06:04 AM"; tolerant of the narrow no-break space newer ICU puts before
// AM/PM, a missing comma, "at" instead of the second comma, seconds, and a 24-hour clock.
const EN_US_DATE =
  /^([A-Za-z]{3,9})\.?\s+(\d{1,2}),?\s+(\d{4})(?:,\s*|\s+at\s+|\s+)(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([AaPp])\.?\s*[Mm]\.?)?$/;
const ISO_DATE =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * Date Joined as an ISO-8601 UTC string, or null when it is not a date this importer knows.
 * `timeZone` (IANA name) applies to the en-US format and to ISO timestamps without an offset.
 */
export function parseDateJoined(value: string, timeZone = 'UTC'): string | null {
  const v = value.trim();
  let m = EN_US_DATE.exec(v);
  if (m) {
    const month = monthNumber(m[1]!);
    if (month === null) return null;
    let hour = Number(m[4]);
    const meridiem = m[7]?.toLowerCase();
    if (meridiem) {
      if (hour < 1 || hour > 12) return null;
      hour = (hour % 12) + (meridiem === 'p' ? 12 : 0);
    }
    const t: WallTime = { year: Number(m[3]), month, day: Number(m[2]), hour, minute: Number(m[5]), second: Number(m[6] ?? 0), millisecond: 0 };
    if (!isValidWallTime(t)) return null;
    return new Date(wallTimeToUtc(t, timeZone)).toISOString();
  }
  m = ISO_DATE.exec(v);
  if (m) {
    const t: WallTime = {
      year: Number(m[1]),
      month: Number(m[2]),
      day: Number(m[3]),
      hour: Number(m[4]),
      minute: Number(m[5]),
      second: Number(m[6] ?? 0),
      millisecond: Number((m[7] ?? '0').padEnd(3, '0').slice(0, 3)),
    };
    if (!isValidWallTime(t)) return null;
    const zone = m[8];
    if (!zone) return new Date(wallTimeToUtc(t, timeZone)).toISOString();
    const wall = Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second, t.millisecond);
    if (zone === 'Z' || zone === 'z') return new Date(wall).toISOString();
    const om = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)!;
    const offsetMinutes = Number(om[2]) * 60 + Number(om[3] ?? 0);
    if (Number(om[2]) > 23 || Number(om[3] ?? 0) > 59) return null;
    return new Date(wall - (om[1] === '-' ? -1 : 1) * offsetMinutes * 60_000).toISOString();
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// The whole file

function normaliseHeader(value: string): string {
  // A byte-order mark can stand here too when npm's banner came before the exported file.
  return removeFormulaQuote(value.replace(/^\uFEFF/, '')).trim().replace(/\s+/g, ' ').toLowerCase();
}

const HEADER_KEYS = new Map<string, ColumnKey>(
  (Object.entries(IMPORT_COLUMNS) as Array<[ColumnKey, string]>).map(([key, header]) => [header.toLowerCase(), key]),
);

/** Shows a cell in a message: quoted, escaped, and cut short. */
function show(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
}

const EMAIL_PROBLEMS = { required: 'no e-mail address', too_long: 'e-mail address too long', invalid: 'not a valid e-mail address' } as const;

function isBlank(record: CsvRecord): boolean {
  return !record.error && record.fields.length === 1 && record.fields[0]!.trim() === '';
}

/**
 * Parses a whole waitlist CSV. Throws CsvHeaderError when the file cannot be imported at all;
 * otherwise every record becomes a row, a bad line (with its line number and why), a duplicate of
 * an earlier row (the first occurrence wins), or is a blank line (ignored).
 * `now` stamps rows when the file has no Date Joined column.
 */
export function parseWaitlistCsv(text: string, options: { timeZone?: string; now?: Date } = {}): ParsedWaitlistCsv {
  const timeZone = options.timeZone ?? 'UTC';
  const records = readCsvRecords(text);
  const result: ParsedWaitlistCsv = { rows: [], bad: [], duplicates: 0, warnings: [] };

  // Pulled by hand: leaving a for-of with `break` would close the generator.
  let first: CsvRecord | undefined;
  let bannerLines = 0;
  for (let next = records.next(); !next.done; next = records.next()) {
    if (isBlank(next.value)) continue;
    // `npm run db -- export > FILE` puts npm's "> package@version db" banner above the header.
    if (/^> /.test(next.value.fields[0] ?? '')) {
      bannerLines += 1;
      continue;
    }
    first = next.value;
    break;
  }
  const header = first;
  if (bannerLines > 0) result.warnings.push(`Skipped ${bannerLines} line${bannerLines === 1 ? '' : 's'} of npm's script banner above the header.`);
  if (!header) throw new CsvHeaderError(`The file is empty: expected a header row (${Object.values(IMPORT_COLUMNS).join(', ')}).`);
  if (header.error) throw new CsvHeaderError(`Line ${header.line}: the header row is malformed: ${header.error}.`);

  const index: Partial<Record<ColumnKey, number>> = {};
  const ignored: string[] = [];
  header.fields.forEach((raw, i) => {
    const name = normaliseHeader(raw);
    const key = HEADER_KEYS.get(name);
    if (!key) {
      if (name !== '') ignored.push(raw.trim());
      return;
    }
    if (index[key] !== undefined) throw new CsvHeaderError(`Line ${header.line}: the column "${IMPORT_COLUMNS[key]}" appears twice in the header.`);
    index[key] = i;
  });
  if (index.email === undefined) {
    const first = header.fields.join(',');
    const hint = /^\s*>\s/.test(first)
      ? ' This looks like npm\'s script banner: export with `npm run --silent db -- export > FILE` (or --output FILE).'
      : '';
    throw new CsvHeaderError(
      `Line ${header.line}: the header row has no "Email" column (expected ${Object.values(IMPORT_COLUMNS).join(', ')}; got ${show(first)}).${hint}`,
    );
  }
  if (ignored.length > 0) result.warnings.push(`Ignoring unknown column${ignored.length === 1 ? '' : 's'}: ${ignored.map(show).join(', ')}.`);
  const fallbackCreatedAt = (options.now ?? new Date()).toISOString();
  if (index.dateJoined === undefined) result.warnings.push(`No "Date Joined" column: every entry gets the import time, ${fallbackCreatedAt}.`);

  const width = header.fields.length;
  const seen = new Set<string>();
  const cell = (record: CsvRecord, key: ColumnKey): string | undefined => {
    const i = index[key];
    return i === undefined ? undefined : removeFormulaQuote(record.fields[i] ?? '');
  };

  for (const record of records) {
    if (isBlank(record)) continue;
    const bad = (reason: string) => result.bad.push({ line: record.line, reason });
    if (record.error) {
      bad(record.error);
      continue;
    }
    if (record.fields.length !== width) {
      bad(`expected ${width} column${width === 1 ? '' : 's'}, found ${record.fields.length}`);
      continue;
    }
    const rawEmail = cell(record, 'email')!;
    const email = checkWaitlistEmail(rawEmail);
    if (!email.ok) {
      bad(`${EMAIL_PROBLEMS[email.problem]}${email.problem === 'required' ? '' : ` (${show(rawEmail.trim())})`}`);
      continue;
    }
    let createdAt = fallbackCreatedAt;
    const rawDate = cell(record, 'dateJoined');
    if (rawDate !== undefined) {
      const parsed = parseDateJoined(rawDate, timeZone);
      if (parsed === null) {
        bad(rawDate.trim() === '' ? 'no Date Joined' : `unrecognised Date Joined ${show(rawDate.trim())} (expected e.g. "Nov 22, 2026, 06:04 AM" or ISO-8601)`);
        continue;
      }
      createdAt = parsed;
    }
    if (seen.has(email.email)) {
      result.duplicates++;
      continue;
    }
    seen.add(email.email);
    const location = parseLocation(cell(record, 'location') ?? '');
    result.rows.push({
      line: record.line,
      email: email.email,
      createdAt,
      ipAddress: parseIpAddress(cell(record, 'ipAddress') ?? ''),
      ...location,
    });
  }
  return result;
}
