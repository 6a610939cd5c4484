/**
 * CSV as RFC 4180 writes and reads it, for every CSV the product makes or takes: the admin export,
 * `npm run db` export and import, and the admin page's count of a downloaded file.
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

export interface CsvRecord {
  /** Physical (1-based) line of the file where the record starts. */
  line: number;
  fields: string[];
  /** Set when the record is malformed (unterminated quote, text after a closing quote). */
  error?: string;
}

/** A line with nothing on it, which readers skip. */
export function isBlankRecord(record: CsvRecord): boolean {
  return !record.error && record.fields.length === 1 && record.fields[0]!.trim() === '';
}

/** Data records of a CSV text, its header excluded (blank lines do not count). */
export function countCsvRows(text: string): number {
  let records = 0;
  for (const record of readCsvRecords(text)) if (!isBlankRecord(record)) records += 1;
  return Math.max(0, records - 1);
}


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
