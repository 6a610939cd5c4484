import { z } from 'zod/mini';
import { ENTRY_STATUSES, waitlistEntrySchema } from '../waitlist/entry.js';
import { screeningCountsSchema } from '../waitlist/screening.js';
import { waitlistFilterSchema } from './waitlist-filter.js';
import { bandSumSchema } from './lists-api.js';

/**
 * The admin waitlist API, declared once for the admin page, the server and the tests. Every call
 * needs `Authorization: Bearer <access_token>` of a signed-in admin whose session is still active.
 *
 * GET  /api/admin/waitlist?limit=N&cursor=C&<filter> -> WaitlistPage (newest first, keyset
 *      pagination, only the entries matching the filter: waitlist-filter.ts, same names as the page URL)
 * POST /api/admin/waitlist/delete  {ids}      -> DeleteResult (the deleted rows)
 * POST /api/admin/waitlist/delete-matching {filter, except?} -> DeleteMatchingResult (how many):
 *      every entry matching the filter (select-all of a filtered or unfiltered view) but `except`
 * POST /api/admin/waitlist/export  {ids? | filter + except?, timeZone?, attribution?} -> text/csv attachment
 *      neither = all entries (waitlist_all.csv); ids, or filter (+except) = those entries
 *      (waitlist_selected.csv); `attribution: true` adds the attribution columns after the spec's four
 * POST /api/admin/waitlist/exports {same as export} -> ExportDownload (201): the same export, prepared
 *      for the browser's own download: a one-time ticket, valid EXPORT_TICKET_SECONDS, that a plain
 *      form POST (`ticket=…`, no Authorization header) to ADMIN_EXPORT_DOWNLOAD_PATH exchanges for
 *      the file, while the session that made it is still active
 * GET  /api/admin/waitlist/exports/:id       -> ExportDownloadStatus: whether that download has
 *      started, finished (with the rows written) or failed, for the admin who made it
 * POST /api/admin/waitlist/invite  {ids | filter + except?} -> InviteResult: joined and confirmed
 *      entries become `invited` and get the launch invite e-mail (queued in the same transaction);
 *      pending, unsubscribed and already invited ones are skipped and counted
 * GET  /api/admin/waitlist/insights?<filter>  -> WaitlistInsights (GROUP BY in the database)
 * GET  /api/admin/waitlist/events             -> text/event-stream of WaitlistEvent (live updates)
 *
 * Errors are JSON `{error: {code, message}}`: 401 `unauthorized` (no, bad, expired or signed-out
 * token), 400 `bad_request` (body or query fails validation: ids must be 1..ADMIN_MAX_IDS
 * UUID strings, limit 1..ADMIN_PAGE_MAX), 400 `invalid_cursor`, 400 `invalid_time_zone`,
 * 400 `invalid_filter`, 409 `mail_disabled` (invite while e-mail is off: no SMTP_URL),
 * 404 `not_found` (an export download of another admin, or none), 410 `ticket_used` (a download
 * ticket already used, expired or unknown).
 * Unknown ids are ignored: delete returns only the rows it removed, export writes only rows
 * that exist. Unknown fields in a request are dropped, and a response carries only the fields
 * declared here. The CSV format is src/shared/waitlist/csv.ts.
 */
export const ADMIN_WAITLIST_PATH = '/api/admin/waitlist';
export const ADMIN_DELETE_PATH = `${ADMIN_WAITLIST_PATH}/delete`;
export const ADMIN_EXPORT_PATH = `${ADMIN_WAITLIST_PATH}/export`;
export const ADMIN_EXPORTS_PATH = `${ADMIN_WAITLIST_PATH}/exports`;
/** Where the browser's download form posts its ticket (no Authorization header: the ticket is the credential). */
export const ADMIN_EXPORT_DOWNLOAD_PATH = `${ADMIN_EXPORTS_PATH}/download`;
export const ADMIN_INVITE_PATH = `${ADMIN_WAITLIST_PATH}/invite`;
export const ADMIN_DELETE_MATCHING_PATH = `${ADMIN_WAITLIST_PATH}/delete-matching`;
export const ADMIN_INSIGHTS_PATH = `${ADMIN_WAITLIST_PATH}/insights`;
export const ADMIN_EVENTS_PATH = `${ADMIN_WAITLIST_PATH}/events`;
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

/** The page query: paging, plus the filter (waitlist-filter.ts) under the same names as the page URL. */
export const waitlistPageQuerySchema = z.object({
  // Query values arrive as text.
  limit: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(ADMIN_PAGE_MAX)), ADMIN_DEFAULT_PAGE_SIZE),
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
  q: z.optional(z.string()),
  from: z.optional(z.string()),
  to: z.optional(z.string()),
  country: z.optional(z.string()),
  source: z.optional(z.string()),
  campaign: z.optional(z.string()),
  status: z.optional(z.string()),
  /** The list (its slug; absent: the portal's waitlist). */
  list: z.optional(z.string()),
});
export type WaitlistPageQuery = z.input<typeof waitlistPageQuerySchema>;

/**
 * An entry as the admin's table gets it: an offering list's entries (issue 31) add their
 * non-binding intended amount's band key (src/shared/lists/contract.ts), null when none was given;
 * the portal's entries never carry the field.
 */
export const adminEntrySchema = z.extend(waitlistEntrySchema, { intended_amount: z.optional(z.nullable(z.string())) });
export type AdminEntry = z.infer<typeof adminEntrySchema>;

export const waitlistPageSchema = z.object({
  entries: z.array(adminEntrySchema),
  /**
   * Counted on the first page only (no cursor); null on the pages after it. `total`: every entry
   * on the waitlist; `matching`: those matching the filter (= total without a filter).
   */
  total: z.nullable(z.number()),
  matching: z.nullable(z.number()),
  /** When the counts were taken (ISO-8601 UTC): a select-all of this view sends it as the filter's `until`. */
  asOf: z.string(),
  /** Pass back as `cursor` to get the next page; null on the last page. */
  nextCursor: z.nullable(z.string()),
});
export type WaitlistPage = z.infer<typeof waitlistPageSchema>;

/** Optional list of ids a select-all-matching leaves out (unticked rows); may be empty. */
const exceptSchema = z.optional(z.array(z.string().check(z.regex(new RegExp(UUID_PATTERN)))).check(z.maxLength(ADMIN_MAX_IDS)));

/** Select-all of a (filtered or unfiltered) view: every entry matching `filter`, except the unticked ones. */
export const matchingSelectionSchema = z.object({ filter: waitlistFilterSchema, except: exceptSchema });
export type MatchingSelection = z.input<typeof matchingSelectionSchema>;

export const deleteMatchingResultSchema = z.object({ deleted: z.number() });
export type DeleteMatchingResult = z.infer<typeof deleteMatchingResultSchema>;

export const deleteRequestSchema = z.object({ ids: idsSchema });
export type DeleteRequest = z.infer<typeof deleteRequestSchema>;

export const deleteResultSchema = z.object({ deleted: z.array(waitlistEntrySchema) });
export type DeleteResult = z.infer<typeof deleteResultSchema>;

export const exportRequestSchema = z.object({
  ids: z.optional(idsSchema),
  /** Export every entry matching this filter (but `except`) instead of named ids; not with `ids`. */
  filter: z.optional(waitlistFilterSchema),
  except: exceptSchema,
  /** IANA zone the Date Joined column is written in, so the file reads like the table. */
  timeZone: z.optional(z.string().check(z.minLength(1), z.maxLength(100))),
  /** Add the attribution columns (shared/waitlist/csv.ts ATTRIBUTION_CSV_COLUMNS) after the spec's four. */
  attribution: z.optional(z.boolean()),
  /**
   * The list the named ids are on (issue 31; a filter names its own list): an offering list's file
   * ends with the List and Intended amount columns. Absent: the portal's, whose file is unchanged.
   */
  list: z.optional(z.string().check(z.regex(/^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$/))),
});
export type ExportRequest = z.input<typeof exportRequestSchema>;

/** How long a download ticket may wait for its form POST: the page posts it at once. */
export const EXPORT_TICKET_SECONDS = 60;
/** The form field a download ticket travels in. */
export const EXPORT_TICKET_FIELD = 'ticket';
/** A ticket: 32 random bytes, base64url. */
export const EXPORT_TICKET_PATTERN = '^[A-Za-z0-9_-]{43}$';

/** POST ADMIN_EXPORTS_PATH's answer: the download's id (for its status) and its one-time ticket. */
export const exportDownloadSchema = z.object({
  id: z.string(),
  ticket: z.string(),
  /** When the ticket stops being accepted (ISO-8601 UTC). */
  expiresAt: z.string(),
});
export type ExportDownload = z.infer<typeof exportDownloadSchema>;

/**
 * An export download's progress: `ready` (its ticket not used yet), `running`, `done` (`rows`
 * written, the file complete), `failed` (`message` says why: a file cut short, an export that could
 * not start, a session no longer accepted, a server that stopped sending it), `expired` (the ticket
 * was never used).
 */
export const EXPORT_DOWNLOAD_STATES = ['ready', 'running', 'done', 'failed', 'expired'] as const;
export const exportDownloadStatusSchema = z.object({
  status: z.enum(EXPORT_DOWNLOAD_STATES),
  /** Rows written: all of them (`done`), or those sent before it stopped (`failed`); null before it ends. */
  rows: z.nullable(z.number()),
  message: z.nullable(z.string()),
});
export type ExportDownloadStatus = z.infer<typeof exportDownloadStatusSchema>;

/** The download form's body (application/x-www-form-urlencoded). */
export const exportDownloadFormSchema = z.object({ ticket: z.string().check(z.regex(new RegExp(EXPORT_TICKET_PATTERN))) });
/** GET ADMIN_EXPORTS_PATH/:id's path parameter. */
export const exportDownloadParamsSchema = z.object({ id: z.string().check(z.regex(new RegExp(UUID_PATTERN))) });

/** Named ids, or every entry matching a filter but `except`. */
export const inviteRequestSchema = z.union([z.object({ ids: idsSchema }), matchingSelectionSchema]);
export type InviteRequest = z.input<typeof inviteRequestSchema>;

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

// ---------------------------------------------------------------------------------------------
// Insights: GET ADMIN_INSIGHTS_PATH?<filter>, computed with GROUP BY on indexed columns.

/** Top lists hold at most this many values (the rest are counted in `other`). */
export const INSIGHTS_TOP = 8;
/** Ranges longer than this many days are bucketed by ISO week (Monday) instead of by day. */
export const INSIGHTS_MAX_DAYS = 92;

const topListSchema = z.object({
  /** value null = no value (country "Unknown", source "Direct", no campaign); filter with NONE_VALUE. */
  top: z.array(z.object({ value: z.nullable(z.string()), count: z.number() })),
  /** Matching entries whose value is not in `top`. */
  other: z.number(),
});
export type InsightsTopList = z.infer<typeof topListSchema>;

export const waitlistInsightsSchema = z.object({
  asOf: z.string(),
  total: z.number(),
  matching: z.number(),
  /**
   * Signups per UTC day (`day`) or per ISO week starting Monday (`week`), every bucket from the
   * first to the last of the range present (zeros included), oldest first. The range is the
   * filter's from/to, else the first matching signup's day to today.
   */
  bucket: z.enum(['day', 'week']),
  series: z.array(z.object({ start: z.string(), count: z.number() })),
  countries: topListSchema,
  sources: topListSchema,
  campaigns: topListSchema,
  statuses: z.array(z.object({ status: z.enum(ENTRY_STATUSES), count: z.number() })),
  /** Double opt-in on (SIGNUP_CONFIRMATION=required): the share of matching entries that confirmed (0..1); null when off or nothing matches. */
  confirmedShare: z.nullable(z.number()),
  /** Held and refused signups by reason in the filter's from/to days (all time without them); the other filters do not apply. */
  screening: screeningCountsSchema,
  /** An offering list only (issue 31): its non-binding intended amounts by band, smallest first. */
  amounts: z.optional(z.array(bandSumSchema)),
});
export type WaitlistInsights = z.infer<typeof waitlistInsightsSchema>;

// ---------------------------------------------------------------------------------------------
// Live updates: GET ADMIN_EVENTS_PATH (Authorization: Bearer, like every admin call), answered
// with `text/event-stream`. Each event's `event:` is its type and `data:` its JSON below. The
// server sends a comment line every ADMIN_EVENTS_HEARTBEAT_MS, and ends the stream when the
// session is revoked or its access token expires (the page then reconnects with a fresh token,
// or goes to /auth). Signups through any instance reach every instance's streams.

export const ADMIN_EVENTS_HEARTBEAT_MS = 20_000;

export const waitlistEventSchemas = {
  /** The stream is open (sent first; `asOf` is the server's time). */
  ready: z.object({ asOf: z.string() }),
  /** New entries (newest first), at most a few batches per second under load. */
  signup: z.object({ entries: z.array(adminEntrySchema), list: z.optional(z.string()) }),
  /**
   * Entries were deleted, invited, confirmed or unsubscribed elsewhere, or a known address signed
   * up again (`rejoined`), or held signups were approved (`approved`): counts and panels are stale.
   */
  change: z.object({ reason: z.enum(['deleted', 'invited', 'confirmed', 'unsubscribed', 'imported', 'rejoined', 'approved']) }),
} as const;
export type WaitlistEventType = keyof typeof waitlistEventSchemas;
export type WaitlistEvent = { [K in WaitlistEventType]: { type: K; data: z.infer<(typeof waitlistEventSchemas)[K]> } }[WaitlistEventType];

/** The error code when a filter fails validation. */
export const INVALID_FILTER_CODE = 'invalid_filter';
