import type { WaitlistEntry } from '../waitlist/entry.js';

/**
 * The admin waitlist API, shared by the admin page and the server. Every call needs
 * `Authorization: Bearer <access_token>` of a signed-in admin whose session is still active.
 *
 * GET  /api/admin/waitlist?limit=N&cursor=C   -> WaitlistPage (newest first, keyset pagination)
 * POST /api/admin/waitlist/delete  {ids}      -> DeleteResult (the deleted rows)
 * POST /api/admin/waitlist/export  {ids?, timeZone?} -> text/csv attachment
 *      ids omitted = all entries (waitlist_all.csv), ids given = those entries (waitlist_selected.csv)
 */
export const ADMIN_WAITLIST_PATH = '/api/admin/waitlist';
export const ADMIN_PAGE_MAX = 5000;

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
