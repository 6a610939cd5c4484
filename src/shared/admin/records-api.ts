import { z } from 'zod/mini';

/**
 * The admin records API (issue 30; src/server/records), declared once for the admin page, the
 * server, the CLI and the tests. Every call needs `Authorization: Bearer <access_token>` of a
 * signed-in admin, as for the waitlist API.
 *
 * GET /api/admin/records/versions                  -> RecordVersionList: every kept version, by kind
 *     and name, oldest first, without its text
 * GET /api/admin/records/versions/:id              -> RecordVersion: one version with its text parts
 * GET /api/admin/records/bundle?from=DAY&to=DAY    -> application/zip: the examiner's bundle of the
 *     versions in use from `from` to `to` (UTC days, both included), as `npm run records -- export` writes it
 *
 * Errors are JSON `{error: {code, message}}`: 401 `unauthorized`, 400 `bad_request` (validation,
 * or `from` after `to`), 404 `not_found` (no such version).
 */
export const ADMIN_RECORDS_PATH = '/api/admin/records';
export const ADMIN_RECORD_VERSIONS_PATH = `${ADMIN_RECORDS_PATH}/versions`;
export const ADMIN_RECORDS_BUNDLE_PATH = `${ADMIN_RECORDS_PATH}/bundle`;

/**
 * What a kept text is: a prerendered `page` (its HTML as served), the consent `statement` the form
 * shows, the footer's `legends`, or an `email` template (subject, text and HTML, with placeholders
 * where each recipient's links and address go).
 */
export const RECORD_KINDS = ['page', 'statement', 'legends', 'email'] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

/** A version's id: `<kind>:<name>@<16 hex of its SHA-256>`. */
export const RECORD_VERSION_ID_PATTERN = '^(page|statement|legends|email):[A-Za-z0-9._/-]{1,128}@[0-9a-f]{16}$';

export const recordVersionSummarySchema = z.object({
  id: z.string(),
  kind: z.enum(RECORD_KINDS),
  /** The page's file (`index.html`), `consent`, `footer`, or the template (`confirmation`). */
  name: z.string(),
  /** 1 for the first version of this kind and name, then 2, 3… in the order they were stored. */
  number: z.number(),
  /** SHA-256 (hex) of the version's parts (as JSON, keys sorted). */
  hash: z.string(),
  /** ISO-8601 UTC timestamps; first and last use are null until it was first served or sent. */
  createdAt: z.string(),
  firstUsedAt: z.nullable(z.string()),
  lastUsedAt: z.nullable(z.string()),
  /** Times served or sent. */
  useCount: z.number(),
});
export type RecordVersionSummary = z.infer<typeof recordVersionSummarySchema>;

export const recordVersionListSchema = z.object({
  versions: z.array(recordVersionSummarySchema),
  /** RECORDS_RETENTION_YEARS: no version is deleted before this many years after its last use. */
  retentionYears: z.number(),
});
export type RecordVersionList = z.infer<typeof recordVersionListSchema>;

export const recordVersionSchema = z.object({
  ...recordVersionSummarySchema.shape,
  /** Part name (`page.html`, `subject.txt`, `body.txt`, `body.html`, `statement.txt`, `legends.txt`) → the text. */
  parts: z.record(z.string(), z.string()),
});
export type RecordVersion = z.infer<typeof recordVersionSchema>;

export const recordVersionParamsSchema = z.object({ id: z.string().check(z.regex(new RegExp(RECORD_VERSION_ID_PATTERN))) });

/** A UTC day, YYYY-MM-DD. */
export const RECORD_DAY_PATTERN = '^\\d{4}-\\d{2}-\\d{2}$';

/** True for a real calendar day in YYYY-MM-DD form. */
export function isRecordDay(value: string): boolean {
  if (!new RegExp(RECORD_DAY_PATTERN).test(value)) return false;
  const date = new Date(`${value}T00:00:00.000Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
}

const day = z.string().check(z.refine(isRecordDay, 'must be a day as YYYY-MM-DD'));
export const recordsBundleQuerySchema = z
  .object({ from: day, to: day })
  .check(z.refine((q) => q.from <= q.to, { message: '`from` must not be after `to`', path: ['to'] }));
export type RecordsBundleQuery = z.infer<typeof recordsBundleQuerySchema>;

/** The bundle's file name for a period. */
export function recordsBundleFileName(query: RecordsBundleQuery): string {
  return `records_${query.from}_${query.to}.zip`;
}
