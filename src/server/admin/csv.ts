import { WAITLIST_CSV_COLUMNS } from '../../shared/waitlist/csv-columns.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';

/**
 * The CSV export's wire format:
 * - RFC 4180: fields joined by commas, records ended by CRLF, a field is quoted when it holds a
 *   comma, a double quote, CR or LF, and a quote inside a quoted field is doubled.
 * - A UTF-8 byte-order mark first: Excel otherwise reads the file as the legacy code page and
 *   mangles non-ASCII addresses and place names. Every other reader we know skips it.
 * - Formula injection neutralised (OWASP "CSV injection"): a cell starting with = + - @ TAB or
 *   CR would be evaluated by spreadsheets, so it gets a leading single quote.
 */
export const CSV_BOM = '\uFEFF';
export const CSV_EOL = '\r\n';
export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

const FORMULA_TRIGGER = /^[=+\-@\t\r]/;
const NEEDS_QUOTING = /[",\r\n]/;

/** Prefixes `'` when a spreadsheet would treat the cell as a formula. */
export function neutraliseFormula(value: string): string {
  return FORMULA_TRIGGER.test(value) ? `'${value}` : value;
}

/** One cell as it goes into the file: formula-neutralised, then quoted if RFC 4180 requires it. */
export function csvField(value: string): string {
  const safe = neutraliseFormula(value);
  return NEEDS_QUOTING.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** One record, CRLF included. */
export function csvRecord(values: readonly string[]): string {
  return values.map(csvField).join(',') + CSV_EOL;
}

/** The header record: Email, Date Joined, IP Address, Location. */
export function waitlistCsvHeader(): string {
  return csvRecord(WAITLIST_CSV_COLUMNS.map((c) => c.header));
}

/** One entry as a record; Date Joined is written in `timeZone`, as the admin table shows it. */
export function waitlistCsvRecord(entry: WaitlistEntry, timeZone: string): string {
  return csvRecord(WAITLIST_CSV_COLUMNS.map((c) => c.cell(entry, timeZone)));
}

/**
 * The whole file as chunks: BOM and header first, then one chunk per batch of entries, so a
 * 100,000-row export never holds more than one batch of text. `onBatch` is told how many rows each written chunk holds.
 */
export async function* waitlistCsvChunks(
  batches: AsyncIterable<readonly WaitlistEntry[]>,
  timeZone: string,
  onBatch?: (rows: number) => void,
): AsyncGenerator<string> {
  yield CSV_BOM + waitlistCsvHeader();
  for await (const batch of batches) {
    if (batch.length === 0) continue;
    let chunk = '';
    for (const entry of batch) chunk += waitlistCsvRecord(entry, timeZone);
    onBatch?.(batch.length);
    yield chunk;
  }
}
