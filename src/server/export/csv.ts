import { CSV_BOM, CSV_EOL, csvField, csvRecord } from '../../shared/csv.js';
import { LIST_CSV_HEADERS } from '../../shared/lists/contract.js';
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
/** An offering list's export (issue 31): its name, and the label of an intended amount's band key. */
export interface OfferingColumns {
  name: string;
  amountLabel(key: string | null): string;
}

export async function* csvChunks(
  batches: AsyncIterable<RowBatch>,
  timeZone: string,
  options: WaitlistCsvOptions,
  onRows: (rows: number) => void,
  offering: OfferingColumns | null = null,
): AsyncGenerator<string> {
  const dates = new DateJoinedTexts(timeZone);
  if (offering) {
    // The list's two columns after the others; the portal's file is written by the branch below, unchanged.
    const tail = (entry: WaitlistEntry) =>
      `,${csvField(offering.name)},${csvField(offering.amountLabel((entry as { intended_amount?: string | null }).intended_amount ?? null))}${CSV_EOL}`;
    yield CSV_BOM + waitlistCsvHeader(options).slice(0, -CSV_EOL.length) + ',' + csvRecord([LIST_CSV_HEADERS.list, LIST_CSV_HEADERS.amount]);
    for await (const { entries, times } of batches) {
      if (entries.length === 0) continue;
      let chunk = '';
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i]!;
        chunk += waitlistCsvRecord(entry, dates.at(times ? times[i]! : Date.parse(entry.created_at)), options).slice(0, -CSV_EOL.length) + tail(entry);
      }
      onRows(entries.length);
      yield chunk;
    }
    return;
  }
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
