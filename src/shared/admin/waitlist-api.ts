import { z } from 'zod/mini';
import { waitlistEntrySchema } from '../waitlist/entry.js';

/**
 * The admin waitlist API, declared once for the admin page, the server and the tests. Every call
 * needs `Authorization: Bearer <access_token>` of a signed-in admin whose session is still active.
 *
 * GET  /api/admin/waitlist?limit=N&cursor=C   -> WaitlistPage (newest first, keyset pagination)
 * POST /api/admin/waitlist/delete  {ids}      -> DeleteResult (the deleted rows)
 * POST /api/admin/waitlist/export  {ids?, timeZone?} -> text/csv attachment
 *      ids omitted = all entries (waitlist_all.csv), ids given = those entries (waitlist_selected.csv)
 * POST /api/admin/waitlist/invite  {ids}      -> InviteResult: joined and confirmed entries become
 *      `invited` and get the launch invite e-mail (queued in the same transaction); pending,
 *      unsubscribed and already invited ones are skipped and counted
 *
 * Errors are JSON `{error: {code, message}}`: 401 `unauthorized` (no, bad, expired or signed-out
 * token), 400 `bad_request` (body or query fails validation: ids must be 1..ADMIN_MAX_IDS
 * UUID strings, limit 1..ADMIN_PAGE_MAX), 400 `invalid_cursor`, 400 `invalid_time_zone`,
 * 409 `mail_disabled` (invite while e-mail is off: no SMTP_URL).
 * Unknown ids are ignored: delete returns only the rows it removed, export writes only rows
 * that exist. Unknown fields in a request are dropped, and a response carries only the fields
 * declared here. The CSV format is src/shared/waitlist/csv.ts.
 */
export const ADMIN_WAITLIST_PATH = '/api/admin/waitlist';
export const ADMIN_DELETE_PATH = `${ADMIN_WAITLIST_PATH}/delete`;
export const ADMIN_EXPORT_PATH = `${ADMIN_WAITLIST_PATH}/export`;
export const ADMIN_INVITE_PATH = `${ADMIN_WAITLIST_PATH}/invite`;
export const ADMIN_PAGE_MAX = 5000;
/** Page size when `limit` is omitted. There is no overall cap: page until nextCursor is null. */
export const ADMIN_DEFAULT_PAGE_SIZE = 1000;
/** Most ids one delete, export or invite request may name. */
export const ADMIN_MAX_IDS = 100_000;
/** Any 8-4-4-4-12 hex id (not only RFC 9562 versions: adopted databases hold all kinds). */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
/** The files an export downloads as. */
export const EXPORT_FILE_NAMES = { all: 'waitlist_all.csv', selected: 'waitlist_selected.csv' } as const;

const idsSchema = z.array(z.string().check(z.regex(new RegExp(UUID_PATTERN)))).check(z.minLength(1), z.maxLength(ADMIN_MAX_IDS));

export const waitlistPageQuerySchema = z.object({
  // Query values arrive as text.
  limit: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(ADMIN_PAGE_MAX)), ADMIN_DEFAULT_PAGE_SIZE),
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
});
export type WaitlistPageQuery = z.input<typeof waitlistPageQuerySchema>;

export const waitlistPageSchema = z.object({
  entries: z.array(waitlistEntrySchema),
  /** Total number of entries on the waitlist at the time of the request. */
  total: z.number(),
  /** Pass back as `cursor` to get the next page; null on the last page. */
  nextCursor: z.nullable(z.string()),
});
export type WaitlistPage = z.infer<typeof waitlistPageSchema>;

export const deleteRequestSchema = z.object({ ids: idsSchema });
export type DeleteRequest = z.infer<typeof deleteRequestSchema>;

export const deleteResultSchema = z.object({ deleted: z.array(waitlistEntrySchema) });
export type DeleteResult = z.infer<typeof deleteResultSchema>;

export const exportRequestSchema = z.object({
  ids: z.optional(idsSchema),
  /** IANA zone the Date Joined column is written in, so the file reads like the table. */
  timeZone: z.optional(z.string().check(z.minLength(1), z.maxLength(100))),
});
export type ExportRequest = z.infer<typeof exportRequestSchema>;

export const inviteRequestSchema = z.object({ ids: idsSchema });
export type InviteRequest = z.infer<typeof inviteRequestSchema>;

export const inviteResultSchema = z.object({
  /** How many entries were marked invited and had the invite queued. */
  invited: z.number(),
  /** Named entries left alone, by the status that kept them out (unknown ids are not counted). */
  skipped: z.object({ pending: z.number(), unsubscribed: z.number(), alreadyInvited: z.number() }),
  /**
   * The invited_at the invited entries got (ISO-8601 UTC). The invited ids are not sent back (at
   * 100,000 they would cost the page more to read than the whole request): a page that knows the
   * statuses it sent marks its joined and confirmed rows invited, and reloads if the counts differ.
   */
  invitedAt: z.string(),
});
export type InviteResult = z.infer<typeof inviteResultSchema>;

/** The error code of an invite while e-mail is off. */
export const MAIL_DISABLED_CODE = 'mail_disabled';
