import type { WaitlistEntry } from '../waitlist/entry.js';

/**
 * The admin waitlist API, shared by the admin page and the server. Every call needs
 * `Authorization: Bearer <access_token>` of a signed-in admin whose session is still active.
 *
 * GET  /api/admin/waitlist?limit=N&cursor=C   -> WaitlistPage (newest first, keyset pagination)
 * POST /api/admin/waitlist/delete  {ids}      -> DeleteResult (the deleted rows)
 * POST /api/admin/waitlist/export  {ids?, timeZone?} -> text/csv attachment
 *      ids omitted = all entries (waitlist_all.csv), ids given = those entries (waitlist_selected.csv)
 *
 * Errors are JSON `{error: {code, message}}`: 401 `unauthorized` (no, bad, expired or signed-out
 * token), 400 `bad_request` (body or query fails validation: ids must be 1..ADMIN_MAX_IDS
 * UUID strings, limit 1..ADMIN_PAGE_MAX), 400 `invalid_cursor`, 400 `invalid_time_zone`.
 * Unknown ids are ignored: delete returns only the rows it removed, export writes only rows
 * that exist. The CSV starts with a UTF-8 BOM, uses CRLF line ends and RFC 4180 quoting, and
 * prefixes a `'` to any cell starting with = + - @ TAB or CR (spreadsheet formula injection).
 */
export const ADMIN_WAITLIST_PATH = '/api/admin/waitlist';
export const ADMIN_PAGE_MAX = 5000;
/** Page size when `limit` is omitted. There is no overall cap: page until nextCursor is null. */
export const ADMIN_DEFAULT_PAGE_SIZE = 1000;
/** Most ids one delete or export request may name. */
export const ADMIN_MAX_IDS = 100_000;

export interface WaitlistPage {
  entries: WaitlistEntry[];
  /** Total number of entries on the waitlist at the time of the request. */
  total: number;
  /** Pass back as `cursor` to get the next page; null on the last page. */
  nextCursor: string | null;
}

export interface DeleteRequest {
  ids: string[];
}

export interface DeleteResult {
  deleted: WaitlistEntry[];
}

export interface ExportRequest {
  ids?: string[];
  /** IANA zone the Date Joined column is written in, so the file reads like the table. */
  timeZone?: string;
}
