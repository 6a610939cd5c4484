import { z } from 'zod/mini';
import { ENTRY_STATUSES, type EntryStatus, type WaitlistEntry } from '../waitlist/entry.js';
import { SLUG_PATTERN } from '../lists/contract.js';

/**
 * The admin's search and filters (issue 10), declared once: the same names are the page's URL
 * query (so a view can be shared and survives a reload), the admin API's query string, and the
 * `filter` of a select-all-matching request body. Every filter is applied by the database.
 *
 * - `q`: the search. Text containing `@` at its start (`@example.com`) matches the address's
 *   domain exactly; any other text matches addresses that contain it. Case-insensitive.
 * - `from`, `to`: joined on or after / on or before these UTC days (YYYY-MM-DD), both inclusive.
 * - `country`: the stored country name exactly; NONE_VALUE for entries without one ("Unknown").
 * - `source`: the derived source (attribution.ts `source`) exactly; NONE_VALUE for "Direct".
 * - `campaign`: utm_campaign exactly; NONE_VALUE for entries without a campaign.
 * - `status`: one of ENTRY_STATUSES.
 * - `until`: (API only, not a URL filter) joined at or before this instant (ISO-8601 UTC). A
 *   select-all-matching request carries the `asOf` of the view it was made in, so people who sign
 *   up after the admin pressed select-all are never deleted or exported with it unseen.
 *
 * - `list`: the list's slug (issue 31); absent or `portal` is the portal's waitlist. It is not a
 *   filter of the list's entries but which list they are: isEmptyFilter ignores it, and the
 *   counts' `total` is the list's.
 *
 * An empty value is the same as an absent one.
 */
export const FILTER_KEYS = ['q', 'from', 'to', 'country', 'source', 'campaign', 'status'] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];
/** The search's name in a query string (personal data: redacted from logged URLs, hashed in audit records). */
export const SEARCH_PARAM = 'q' satisfies FilterKey;

/** The value that selects entries with no country / no source ("Direct") / no campaign. */
export const NONE_VALUE = '(none)';

export const MAX_SEARCH_LENGTH = 254;
export const MAX_FILTER_VALUE_LENGTH = 200;

export interface WaitlistFilter {
  q?: string;
  from?: string;
  to?: string;
  country?: string;
  source?: string;
  campaign?: string;
  status?: EntryStatus;
  until?: string;
  list?: string;
}

/** The list's name in a query string and a filter (src/shared/admin/lists-api.ts LIST_PARAM). */
export const LIST_KEY = 'list';

const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar day written YYYY-MM-DD. */
export function isValidDay(value: string): boolean {
  const m = DAY_RE.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return y >= 1970 && y <= 9999 && date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

const ISO_INSTANT_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z$/;

/** Empty → absent; other text trimmed. */
const optionalText = (max: number) =>
  z.optional(
    z.pipe(
      z.transform((v: unknown) => (typeof v === 'string' ? v.trim() : v)),
      z.union([z.literal(''), z.string().check(z.maxLength(max))]),
    ),
  );

const optionalDay = z.optional(
  z.pipe(
    z.transform((v: unknown) => (typeof v === 'string' ? v.trim() : v)),
    z.union([z.literal(''), z.string().check(z.refine(isValidDay, { message: 'Use a date written YYYY-MM-DD.' }))]),
  ),
);

/**
 * The filter as the API reads it (query string or JSON). Extra keys are dropped. `from` after `to`
 * is refused, so an impossible range is a 400 and not an empty page.
 */
export const waitlistFilterSchema = z
  .pipe(
    z.object({
      q: optionalText(MAX_SEARCH_LENGTH),
      from: optionalDay,
      to: optionalDay,
      country: optionalText(MAX_FILTER_VALUE_LENGTH),
      source: optionalText(MAX_FILTER_VALUE_LENGTH),
      campaign: optionalText(MAX_FILTER_VALUE_LENGTH),
      status: z.optional(z.union([z.literal(''), z.enum(ENTRY_STATUSES)])),
      until: z.optional(z.string().check(z.regex(ISO_INSTANT_RE))),
      list: z.optional(z.union([z.literal(''), z.string().check(z.regex(SLUG_PATTERN))])),
    }),
    z.transform((raw): WaitlistFilter => compactFilter(raw as WaitlistFilter)),
  )
  .check(
    z.refine((f: WaitlistFilter) => !(f.from && f.to && f.from > f.to), {
      message: 'The start date must be on or before the end date.',
    }),
  );

/** The filter without empty values (the canonical form: equal filters compare equal as JSON). */
export function compactFilter(filter: WaitlistFilter): WaitlistFilter {
  const out: WaitlistFilter = {};
  for (const key of [...FILTER_KEYS, 'until', 'list'] as const) {
    const value = filter[key];
    if (typeof value === 'string' && value !== '') (out as Record<string, string>)[key] = value;
  }
  // The portal's list is the default: named or not, the same filter.
  if (out.list === 'portal') delete out.list;
  return out;
}

/** True when no filter narrows the list (`until` alone does not count). */
export function isEmptyFilter(filter: WaitlistFilter): boolean {
  return FILTER_KEYS.every((key) => !filter[key]);
}

/** The filter as a URL query (the list first, then FILTER_KEYS, in a fixed order), for the page's address and API calls. */
export function filterToSearchParams(filter: WaitlistFilter, params = new URLSearchParams()): URLSearchParams {
  if (filter.list && filter.list !== 'portal') params.set(LIST_KEY, filter.list);
  for (const key of FILTER_KEYS) {
    const value = filter[key];
    if (value) params.set(key, value);
  }
  return params;
}

/**
 * The filter a page address holds; invalid values are dropped (a shared link with a typo still
 * opens the admin, unfiltered on that field).
 */
export function filterFromSearchParams(params: URLSearchParams): WaitlistFilter {
  const filter: WaitlistFilter = {};
  const list = params.get(LIST_KEY);
  if (list !== null && list !== 'portal' && SLUG_PATTERN.test(list)) filter.list = list;
  for (const key of FILTER_KEYS) {
    const value = params.get(key);
    if (value === null || value.trim() === '') continue;
    const one = waitlistFilterSchema.safeParse({ [key]: value });
    if (one.success) Object.assign(filter, one.data);
  }
  if (filter.from && filter.to && filter.from > filter.to) delete filter.to;
  return filter;
}

/** The search's domain (without `@`) when the search is a domain search, else null. */
export function searchDomain(q: string): string | null {
  return q.startsWith('@') && q.length > 1 ? q.slice(1).toLowerCase() : null;
}

/**
 * Whether an entry matches the filter: the database's rule, in the browser, for entries that
 * arrive live (server-sent events) while a filtered view is open.
 */
export function entryMatchesFilter(entry: WaitlistEntry, filter: WaitlistFilter): boolean {
  if (filter.q) {
    const email = entry.email.toLowerCase();
    const domain = searchDomain(filter.q);
    if (domain !== null ? !email.endsWith(`@${domain}`) : !email.includes(filter.q.toLowerCase())) return false;
  }
  const day = entry.created_at.slice(0, 10);
  if (filter.from && day < filter.from) return false;
  if (filter.to && day > filter.to) return false;
  if (filter.until && entry.created_at > filter.until) return false;
  const equals = (wanted: string | undefined, value: string | null) => !wanted || (wanted === NONE_VALUE ? value === null : value === wanted);
  if (!equals(filter.country, entry.country)) return false;
  if (!equals(filter.source, entry.source)) return false;
  if (!equals(filter.campaign, entry.utm_campaign)) return false;
  if (filter.status && entry.status !== filter.status) return false;
  return true;
}
