import { CSV_BOM, CSV_EOL, csvRecord } from '../../shared/csv.js';
import { LIST_CSV_HEADERS } from '../../shared/lists/contract.js';
import { waitlistCsvHeader, waitlistCsvRecord, type WaitlistCsvOptions } from '../../shared/waitlist/csv.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';
import { DateJoinedTexts } from './dates.js';

/** Rows for the file: entries with (at least) the fields its columns read. */
export interface RowBatch {
  entries: readonly WaitlistEntry[];
  /** Their created_at in milliseconds, when the database sent it as a number (a binary COPY); else it is read from their ISO text. */
  times?: ArrayLike<number>;
}

/** An offering list's export (issue 31): its name, and the label of an intended amount's band key. */
export interface OfferingColumns {
  name: string;
  amountLabel(key: string | null | undefined): string;
}

/**
 * The export's file: BOM and header, then one chunk of text per batch. Every record is written by
 * the shared waitlistCsvRecord (the columns, formula neutralising and quoting live there and only
 * there), an offering list's two columns (List, Intended amount) after the others by csvRecord;
 * Date Joined's text comes from the export's DateJoinedTexts. `onRows` hears each chunk's row count
 * (the audit record's and the download status's count).
 */
export async function* csvChunks(
  batches: AsyncIterable<RowBatch>,
  timeZone: string,
  options: WaitlistCsvOptions,
  onRows: (rows: number) => void,
  offering: OfferingColumns | null = null,
): AsyncGenerator<string> {
  const dates = new DateJoinedTexts(timeZone);
  // An offering list's header and records: the portal's without their line end, then the list's cells.
  const withTail = (record: string, tail: readonly string[]) => `${record.slice(0, -CSV_EOL.length)},${csvRecord(tail)}`;
  const header = waitlistCsvHeader(options);
  yield CSV_BOM + (offering ? withTail(header, [LIST_CSV_HEADERS.list, LIST_CSV_HEADERS.amount]) : header);
  for await (const { entries, times } of batches) {
    if (entries.length === 0) continue;
    let chunk = '';
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const record = waitlistCsvRecord(entry, dates.at(times ? times[i]! : Date.parse(entry.created_at)), options);
      if (!offering) chunk += record;
      else chunk += withTail(record, [offering.name, offering.amountLabel((entry as { intended_amount?: string | null }).intended_amount)]);
    }
    onRows(entries.length);
    yield chunk;
  }
}
