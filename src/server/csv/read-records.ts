import { parse, type Options } from 'csv-parse/sync';

/**
 * CSV records as `npm run db -- import` reads them, by csv-parse: RFC 4180 quoting (commas,
 * doubled quotes and line breaks inside quotes), CRLF, LF or lone CR between records, a leading
 * BOM skipped, a quote inside an unquoted field kept as text, every record whatever its number of
 * fields (the caller reports a wrong count). What csv-parse does not give, added here:
 *
 * - the physical line where each record starts, counted from the byte offsets csv-parse reports
 *   (its own `lines` counts a CRLF inside quotes twice);
 * - a malformed record returned with `error` instead of ending the parse, so every bad line is
 *   reported by its number: text after a closing quote (csv-parse, in strict mode, would keep
 *   reading the rest of the file as that quoted field; relaxed, it keeps the quotes in the value
 *   silently), and an unterminated quote, which swallows the rest of the file into its record.
 */
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

const NEVER_CLOSED = 'a quoted field is never closed (missing ")';
const TEXT_AFTER_QUOTE = 'text after a closing quote (a quote inside a field must be doubled)';
/**
 * A quoted field as written, with text after its closing quote: the quoted part (quotes doubled),
 * then the text after it. The closing quote is the first one not doubled, as csv-parse reads it.
 */
const QUOTED_THEN_TEXT = /^"((?:[^"]|"")*)"(?!")([^]+)$/;

const LF = 0x0a;
const CR = 0x0d;

/** Line breaks in bytes[from, to): LF, and CR not followed by LF. */
function lineBreaks(bytes: Uint8Array, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (bytes[i] === LF || (bytes[i] === CR && bytes[i + 1] !== LF)) n++;
  return n;
}

const OPTIONS = {
  bom: true,
  record_delimiter: ['\r\n', '\n', '\r'],
  relax_column_count: true,
  relax_quotes: true,
  skip_records_with_error: true,
} satisfies Options;

/** A record's fields, and what is wrong with it. */
type Read = Pick<CsvRecord, 'fields' | 'error'>;

/**
 * The first record of `bytes` read field by field, each checked against its text as written: a
 * quoted field with text after its closing quote, which csv-parse (relaxed) hands on as `"…"text`,
 * becomes the quoted part and the text, and the record gets its error. Slower than a plain parse
 * (csv-parse builds a context object per field), so only for the records that may need it.
 */
function readChecked(bytes: Buffer): Read {
  let fieldStart = 0;
  let error: string | undefined;
  let unterminated = false;
  const [fields = []] = parse(bytes, {
    ...OPTIONS,
    to: 1,
    cast: (value, context) => {
      const start = fieldStart;
      fieldStart = context.bytes + 1; // after the comma
      if (!context.quoting || !value.startsWith('"')) return value;
      const split = QUOTED_THEN_TEXT.exec(bytes.toString('utf8', start, context.bytes));
      if (!split) return value;
      error ??= TEXT_AFTER_QUOTE;
      return split[1]!.replaceAll('""', '"') + split[2]!;
    },
    on_skip: () => {
      unterminated = true; // what readCsvRecords let through (see there)
      return undefined;
    },
  }) as string[][];
  // The first error of the record, as for any record.
  error ??= unterminated ? NEVER_CLOSED : undefined;
  return error ? { fields, error } : { fields };
}

/** Splits CSV text into records, each with the physical line it starts on (see above). */
export function readCsvRecords(text: string): CsvRecord[] {
  const bytes = Buffer.from(text, 'utf8');
  const records: CsvRecord[] = [];
  let line = 1;
  // Where the next record starts, in bytes (csv-parse's offsets count the BOM too).
  let start = text.charCodeAt(0) === 0xfeff ? 3 : 0;
  const add = (end: number, read: Read) => {
    records.push({ line, ...read });
    line += lineBreaks(bytes, start, end);
    start = end;
  };
  parse(bytes, {
    ...OPTIONS,
    on_record: (fields: string[], context) => {
      // A quoted field with text after its closing quote starts with its opening quote here.
      add(context.bytes, fields.some((field) => field.startsWith('"')) ? readChecked(bytes.subarray(start, context.bytes)) : { fields });
      return null; // kept in `records`, not in csv-parse's own array
    },
    on_skip: (err) => {
      // The only error a relaxed parse skips: an unterminated quote, which runs to the end of the text.
      if (err?.code !== 'CSV_QUOTE_NOT_CLOSED') throw err ?? new Error('CSV record skipped');
      add(bytes.length, readChecked(bytes.subarray(start)));
      return undefined;
    },
  });
  return records;
}
