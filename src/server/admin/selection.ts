import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { auditEmailHash, recordAudit, type AuditAction } from '../audit/audit-log.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Database } from '../db/schema.js';
import { HttpError } from '../http/errors.js';
import { INVALID_FILTER_CODE } from '../../shared/admin/waitlist-api.js';
import { findListBySlug, isPortalSlug } from '../db/lists.js';
import {
  FILTER_KEYS,
  LIST_KEY,
  isValidDay,
  MAX_FILTER_VALUE_LENGTH,
  MAX_SEARCH_LENGTH,
  waitlistFilterSchema,
  type WaitlistFilter,
} from '../../shared/admin/waitlist-filter.js';
import { ENTRY_STATUSES } from '../../shared/waitlist/entry.js';

/**
 * What the admin's requests select: a filter (the list, the insight panel, a select-all), or named
 * ids, and the one skeleton of an action on a selection (delete, invite): one transaction with its
 * audit records. The export and the insight panel take these through index.ts.
 */

/** 100,000 UUIDs as JSON are about 3.9 MB; twice that leaves room without inviting abuse. */
export const IDS_BODY_LIMIT = 8 * 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Filters: read from the query string (the list, the panel) or a body's `filter` (select-all), and
// refused with 400 `invalid_filter` and a message naming the field before anything is read or changed.

/** What each filter field must be, for the 400's message (zod's own messages are generic). */
const FILTER_RULES: Record<string, string> = {
  q: `the search is at most ${MAX_SEARCH_LENGTH} characters of text`,
  from: 'the start date is a date written YYYY-MM-DD',
  to: 'the end date is a date written YYYY-MM-DD',
  country: `the country is at most ${MAX_FILTER_VALUE_LENGTH} characters of text`,
  source: `the source is at most ${MAX_FILTER_VALUE_LENGTH} characters of text`,
  campaign: `the campaign is at most ${MAX_FILTER_VALUE_LENGTH} characters of text`,
  status: `the status is one of ${ENTRY_STATUSES.join(', ')}`,
  until: 'until is an ISO-8601 UTC instant such as 2026-11-25T09:00:00.000Z',
  list: 'the list is a list\'s slug: lower-case letters, digits and hyphens',
};

function invalidFilter(detail: string): HttpError {
  return new HttpError(400, INVALID_FILTER_CODE, `Invalid filter: ${detail}.`);
}

const INSTANT_RE = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?Z$/;

/** A real instant (the schema checks the shape only; 2026-02-30T25:00:00Z must not reach the database). */
function isRealInstant(value: string): boolean {
  const m = INSTANT_RE.exec(value);
  return !!m && isValidDay(m[1]!) && Number(m[2]) <= 23 && Number(m[3]) <= 59 && Number(m[4]) <= 59;
}

/** The filter, validated; throws 400 invalid_filter. Unknown keys are dropped. */
function readFilter(input: unknown): WaitlistFilter {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw invalidFilter('send the filter as an object');
  const parsed = waitlistFilterSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0] ?? '');
    // The only issue without a field is the schema's own check (from after to), whose message is written for people.
    throw invalidFilter(FILTER_RULES[key] ?? issue.message.replace(/\.$/, ''));
  }
  if (parsed.data.until && !isRealInstant(parsed.data.until)) throw invalidFilter(FILTER_RULES.until!);
  // PostgreSQL text cannot hold U+0000 (no stored value has one): refused, not sent to fail there.
  const withNul = Object.entries(parsed.data).find(([, value]) => typeof value === 'string' && value.includes('\u0000'));
  if (withNul) throw invalidFilter(`${withNul[0]} contains a NUL character`);
  return parsed.data;
}

/** The filter fields of a query string (the rest is paging). */
function filterOfQuery(query: unknown): Record<string, unknown> {
  const source = (query ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of [...FILTER_KEYS, LIST_KEY]) if (source[key] !== undefined) out[key] = source[key];
  return out;
}

/** A filter naming a list that does not exist is a 404 `unknown_list`, before anything is read or changed. */
async function checkListOf(request: FastifyRequest, filter: WaitlistFilter): Promise<void> {
  if (isPortalSlug(filter.list)) return;
  if (!(await findListBySlug(request.server.database.db, filter.list!))) throw new HttpError(404, 'unknown_list', 'There is no list with this slug.');
}

/** The filter of a query string, validated (checkQueryFilter has refused a bad one before the handler runs). */
export function queryFilter(query: unknown): WaitlistFilter {
  return readFilter(filterOfQuery(query));
}

/**
 * preValidation of the routes with a query-string filter: an invalid filter is a 400
 * invalid_filter (rather than the schema's generic bad_request), also for a repeated parameter.
 */
export async function checkQueryFilter(request: FastifyRequest): Promise<void> {
  await checkListOf(request, queryFilter(request.query));
}

/**
 * preValidation of the routes taking a selection in the body: `filter` checked as above, and the
 * combinations the schema cannot express refused (`ids` with `filter`; `except` without `filter`).
 */
export async function checkBodySelection(request: FastifyRequest): Promise<void> {
  const body = request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return; // the schema answers
  const { ids, filter, except } = body as Record<string, unknown>;
  if (ids !== undefined && filter !== undefined) {
    throw new HttpError(400, 'bad_request', 'Invalid request: send either ids or filter (with except), not both.');
  }
  if (except !== undefined && filter === undefined) {
    throw new HttpError(400, 'bad_request', 'Invalid request: except is only used with filter.');
  }
  if (filter !== undefined) await checkListOf(request, readFilter(filter));
}

/** The options of a route taking a selection in its body: the ids' body limit, checkBodySelection, and its schemas. */
export function selectionRouteOptions<Body, Response>(body: Body, response: Response) {
  return { bodyLimit: IDS_BODY_LIMIT, preValidation: checkBodySelection, schema: { body, response: { 200: response } } };
}

// ---------------------------------------------------------------------------------------------
// Actions on a selection

/** A body's selection: named ids, or every entry matching `filter` but those in `except`. */
export type Selection = { ids: readonly string[] } | { filter: WaitlistFilter; except: readonly string[] };

/** The selection of a body the route's schema and checkBodySelection have accepted. */
export function selectionOf(body: { ids: string[] } | { filter: WaitlistFilter; except?: string[] | undefined }): Selection {
  return 'ids' in body ? { ids: body.ids } : { filter: body.filter, except: body.except ?? [] };
}

/**
 * A filter as an audit record keeps it (security review, finding 5): the search text (`q`, usually an
 * address or part of one) replaced by its keyed hash `q_hash` and its length `q_length`; the other
 * fields as they are. The hash is the audit's e-mail hash (auditEmailHash: trimmed, lower-cased, keyed
 * with the server's secret), so whoever holds the key can tell whether a search was for a given
 * address, and a search for a whole address matches that address's other records; a dump cannot.
 */
export function auditedFilter(filter: WaitlistFilter, box: Pick<SecretBox, 'hmac'>): Record<string, unknown> {
  const { q, ...rest } = filter;
  return q === undefined ? rest : { ...rest, q_hash: auditEmailHash(box, q), q_length: q.length };
}

/** What an audit record says of a selection: how many ids were named, or the filter (auditedFilter) and how many were left out. */
export function auditedSelection(selection: Selection, box: Pick<SecretBox, 'hmac'>): Record<string, unknown> {
  return 'ids' in selection ? { requested: selection.ids.length } : { scope: 'matching', filter: auditedFilter(selection.filter, box), except: selection.except.length };
}

/** Who acts: the request's admin (app.adminOf) and the address the request came from. */
export interface Actor {
  admin: { email: string; userId: string };
  ip: string;
}

/**
 * An admin action on a selection: `act` changes the entries in one transaction and writes its
 * audit records of `action` with `audit(detail)` in the same transaction, so the rows and their
 * records are written together or not at all.
 */
export function auditedAction<T>(
  db: Kysely<Database>,
  actor: Actor,
  action: AuditAction,
  act: (trx: Kysely<Database>, audit: (detail: Record<string, unknown>) => Promise<unknown>) => Promise<T>,
): Promise<T> {
  const { admin, ip } = actor;
  return db
    .transaction()
    .execute((trx) => act(trx, (detail) => recordAudit(trx, { action, actorEmail: admin.email, actorId: admin.userId, ip, detail })));
}
