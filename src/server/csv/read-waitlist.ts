import { removeFormulaQuote } from '../../shared/csv.js';
import { zoneOffsets } from '../../shared/time-zone.js';
import { deriveSource, NO_ATTRIBUTION } from '../../shared/waitlist/attribution.js';
import { ALL_CSV_COLUMNS, NO_LOCATION, show, WAITLIST_CSV_COLUMNS, type ImportedEntry, type WaitlistCsvColumn } from '../../shared/waitlist/csv.js';
import { NO_CONSENT_RECORD } from '../../shared/waitlist/entry.js';
import { isBlankRecord, readCsvRecords, type CsvRecord } from './read-records.js';

/**
 * A waitlist CSV read back for `npm run db -- import`: the records (read-records.ts), the header
 * matched to the columns of ../../shared/waitlist/csv.ts, and each line's cells read by those
 * columns (what a file may hold is described there). The whole file is parsed from one string; at
 * 100,000 lines that is ~10 MB of text plus one small object per row, which is fine for a
 * command-line tool.
 */

type ColumnKey = keyof typeof ALL_CSV_COLUMNS;
const COLUMN_KEYS = Object.keys(ALL_CSV_COLUMNS) as ColumnKey[];

/** A good line of the file: a waitlist entry to insert, and where it came from. */
export type ImportRow = ImportedEntry & { line: number };

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

function normalizeHeader(value: string): string {
  // A byte-order mark can stand here too when npm's banner came before the exported file.
  return removeFormulaQuote(value.replace(/^\uFEFF/, '')).trim().replace(/\s+/g, ' ').toLowerCase();
}

const HEADER_KEYS = new Map<string, ColumnKey>(COLUMN_KEYS.map((key) => [ALL_CSV_COLUMNS[key].header.toLowerCase(), key]));
const EXPECTED_HEADER = Object.values(WAITLIST_CSV_COLUMNS)
  .map((c) => c.header)
  .join(', ');

/** Where each known column stands in the file; throws CsvHeaderError when Email is missing or a column repeats. */
function readHeader(header: CsvRecord, warnings: string[]): Partial<Record<ColumnKey, number>> {
  const index: Partial<Record<ColumnKey, number>> = {};
  const ignored: string[] = [];
  header.fields.forEach((raw, i) => {
    const name = normalizeHeader(raw);
    const key = HEADER_KEYS.get(name);
    if (!key) {
      if (name !== '') ignored.push(raw.trim());
      return;
    }
    if (index[key] !== undefined) {
      throw new CsvHeaderError(`Line ${header.line}: the column "${ALL_CSV_COLUMNS[key].header}" appears twice in the header.`);
    }
    index[key] = i;
  });
  if (index.email === undefined) {
    const first = header.fields.join(',');
    const hint = /^\s*>\s/.test(first)
      ? ' This looks like npm\'s script banner: export with `npm run --silent db -- export > FILE` (or --output FILE).'
      : '';
    throw new CsvHeaderError(`Line ${header.line}: the header row has no "Email" column (expected ${EXPECTED_HEADER}; got ${show(first)}).${hint}`);
  }
  if (ignored.length > 0) warnings.push(`Ignoring unknown column${ignored.length === 1 ? '' : 's'}: ${ignored.map(show).join(', ')}.`);
  return index;
}

/**
 * Parses a whole waitlist CSV. Throws CsvHeaderError when the file cannot be imported at all;
 * otherwise every record becomes a row, a bad line (with its line number and why), a duplicate of
 * an earlier row (the first occurrence wins), or is a blank line (ignored).
 * `now` stamps rows when the file has no Date Joined column.
 */
export function parseWaitlistCsv(text: string, options: { timeZone?: string; now?: Date } = {}): ParsedWaitlistCsv {
  // One reader of the zone's offsets for the whole file (each formatter Intl makes costs ~0.1 ms).
  const zone = zoneOffsets(options.timeZone ?? 'UTC');
  const records = readCsvRecords(text);
  const result: ParsedWaitlistCsv = { rows: [], bad: [], duplicates: 0, warnings: [] };

  let header: CsvRecord | undefined;
  let bannerLines = 0;
  let next = 0;
  while (!header && next < records.length) {
    const record = records[next++]!;
    if (isBlankRecord(record)) continue;
    // `npm run db -- export > FILE` puts npm's "> package@version db" banner above the header.
    if (/^> /.test(record.fields[0] ?? '')) bannerLines += 1;
    else header = record;
  }
  if (bannerLines > 0) result.warnings.push(`Skipped ${bannerLines} line${bannerLines === 1 ? '' : 's'} of npm's script banner above the header.`);
  if (!header) throw new CsvHeaderError(`The file is empty: expected a header row (${EXPECTED_HEADER}).`);
  if (header.error) throw new CsvHeaderError(`Line ${header.line}: the header row is malformed: ${header.error}.`);

  const index = readHeader(header, result.warnings);
  const fallbackCreatedAt = (options.now ?? new Date()).toISOString();
  if (index.dateJoined === undefined) result.warnings.push(`No "Date Joined" column: every entry gets the import time, ${fallbackCreatedAt}.`);
  const present = COLUMN_KEYS.filter((key) => index[key] !== undefined);

  const width = header.fields.length;
  const seen = new Set<string>();
  records: for (const record of records.slice(next)) {
    if (isBlankRecord(record)) continue;
    const bad = (reason: string) => result.bad.push({ line: record.line, reason });
    if (record.error) {
      bad(record.error);
      continue;
    }
    if (record.fields.length !== width) {
      bad(`expected ${width} column${width === 1 ? '' : 's'}, found ${record.fields.length}`);
      continue;
    }
    const entry: ImportedEntry = { email: '', created_at: fallbackCreatedAt, ip_address: null, ...NO_LOCATION, ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION };
    for (const key of present) {
      const cell = removeFormulaQuote(record.fields[index[key]!] ?? '');
      const parsed = (ALL_CSV_COLUMNS[key] as WaitlistCsvColumn).parse(cell, zone);
      if (!parsed.ok) {
        bad(parsed.reason);
        continue records;
      }
      Object.assign(entry, parsed.fields);
    }
    entry.source = deriveSource(entry.utm_source, entry.referrer);
    if (seen.has(entry.email)) {
      result.duplicates++;
      continue;
    }
    seen.add(entry.email);
    result.rows.push({ line: record.line, ...entry });
  }
  return result;
}
