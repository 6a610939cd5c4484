/**
 * CSV as RFC 4180 writes it, for every CSV the product makes: the admin export and `npm run db`
 * export (`npm run db -- import` reads it with csv-parse: ../server/csv/read-records.ts).
 *
 * - Fields joined by commas, records ended by CRLF; a field is quoted when it holds a comma, a
 *   double quote, CR or LF, and a quote inside a quoted field is doubled.
 * - A UTF-8 byte-order mark first: Excel otherwise reads the file as the legacy code page and
 *   mangles non-ASCII addresses and place names. Every other reader we know skips it.
 * - Formula injection neutralized (OWASP "CSV injection"): a cell starting with = + - @ TAB or CR
 *   would be evaluated by spreadsheets, so it gets a leading single quote, which reading removes.
 */
export const CSV_BOM = '\uFEFF';
export const CSV_EOL = '\r\n';
export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

/** The characters that make a spreadsheet read a cell as a formula: the one rule, both ways. */
const FORMULA_START = /[=+\-@\t\r]/.source;
const FORMULA_TRIGGER = new RegExp(`^${FORMULA_START}`);
const FORMULA_QUOTED = new RegExp(`^'${FORMULA_START}`);
const NEEDS_QUOTING = /[",\r\n]/;

/** Prefixes `'` when a spreadsheet would treat the cell as a formula. */
export function neutralizeFormula(value: string): string {
  return FORMULA_TRIGGER.test(value) ? `'${value}` : value;
}

/** Undoes neutralizeFormula: `'=x` → `=x` (only before = + - @ TAB CR). */
export function removeFormulaQuote(value: string): string {
  return FORMULA_QUOTED.test(value) ? value.slice(1) : value;
}

/** A cell that csvField changes at all: a formula start, or a character RFC 4180 quotes (one test for the common clean cell). */
const NEEDS_CARE = new RegExp(`${FORMULA_TRIGGER.source}|${NEEDS_QUOTING.source}`);

/** One cell as it goes into the file: formula-neutralized, then quoted if RFC 4180 requires it. */
export function csvField(value: string): string {
  if (!NEEDS_CARE.test(value)) return value;
  const safe = neutralizeFormula(value);
  return NEEDS_QUOTING.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** One record, CRLF included. */
export function csvRecord(values: readonly string[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) line += (i === 0 ? '' : ',') + csvField(values[i]!);
  return line + CSV_EOL;
}
