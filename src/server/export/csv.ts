import { CSV_BOM } from '../../shared/csv.js';
import { waitlistCsvHeader, waitlistCsvRecord, type WaitlistCsvOptions } from '../../shared/waitlist/csv.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';
import { DateJoinedTexts } from './dates.js';

/**
 * Rows for the file: entries with (at least) the fields its columns read, and their created_at in
 * milliseconds when the database sent it as a number (a binary COPY); else it is read from the
 * entries' ISO text.
 */
export interface RowBatch {
  entries: readonly WaitlistEntry[];
  times?: ArrayLike<number>;
}

/**
 * The export's file: BOM and header, then one chunk of text per batch. Every record is written by
 * the shared waitlistCsvRecord (the columns, formula neutralising and quoting live there and only
 * there); Date Joined's text comes from the export's DateJoinedTexts. `onRows` hears each chunk's
 * row count (the audit record's and the download status's count).
 */
export async function* csvChunks(
  batches: AsyncIterable<RowBatch>,
  timeZone: string,
  options: WaitlistCsvOptions,
  onRows: (rows: number) => void,
): AsyncGenerator<string> {
  const dates = new DateJoinedTexts(timeZone);
  yield CSV_BOM + waitlistCsvHeader(options);
  for await (const { entries, times } of batches) {
    if (entries.length === 0) continue;
    let chunk = '';
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      chunk += waitlistCsvRecord(entry, dates.at(times ? times[i]! : Date.parse(entry.created_at)), options);
    }
    onRows(entries.length);
    yield chunk;
  }
}
