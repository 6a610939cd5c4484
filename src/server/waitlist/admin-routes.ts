import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod/mini';
import { auditEmailHash, recordAudit } from '../audit/audit-log.js';
import { HttpError } from '../http/errors.js';
import * as queries from './admin-repository.js';
import { waitlistEmailMessage } from './emails/index.js';
import { waitlistInsights } from './insights.js';
import {
  ADMIN_DELETE_MATCHING_PATH,
  ADMIN_DELETE_PATH,
  ADMIN_INSIGHTS_PATH,
  ADMIN_INVITE_PATH,
  ADMIN_WAITLIST_PATH,
  deleteMatchingResultSchema,
  deleteRequestSchema,
  deleteResultSchema,
  INVALID_FILTER_CODE,
  inviteRequestSchema,
  inviteResultSchema,
  MAIL_DISABLED_CODE,
  matchingSelectionSchema,
  waitlistInsightsSchema,
  waitlistPageQuerySchema,
  waitlistPageSchema,
} from '../../shared/admin/waitlist-api.js';
import {
  FILTER_KEYS,
  isEmptyFilter,
  isValidDay,
  MAX_FILTER_VALUE_LENGTH,
  MAX_SEARCH_LENGTH,
  waitlistFilterSchema,
  type WaitlistFilter,
} from '../../shared/admin/waitlist-filter.js';
import { ENTRY_STATUSES } from '../../shared/waitlist/entry.js';

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
  for (const key of FILTER_KEYS) if (source[key] !== undefined) out[key] = source[key];
  return out;
}

/**
 * preValidation of the routes with a query-string filter: an invalid filter is a 400
 * invalid_filter (rather than the schema's generic bad_request), also for a repeated parameter.
 */
async function checkQueryFilter(request: FastifyRequest): Promise<void> {
  readFilter(filterOfQuery(request.query));
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
  if (filter !== undefined) readFilter(filter);
}

/** The filter part of a query string: the page query's fields without paging. */
const filterQuerySchema = z.omit(waitlistPageQuerySchema, { limit: true, cursor: true });

/**
 * The admin waitlist API (contract: src/shared/admin/waitlist-api.ts). Every route in this scope
 * is admin-only: the check runs in onRequest, before the body is read or validated, so an
 * anonymous caller can neither make the server parse megabytes of JSON nor learn the schema.
 */
export async function adminWaitlistRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { db } = app.database;

  app.guardAdminScope();

  /** What the audit log keeps of deleted entries: ids and keyed hashes, never the addresses (it must not keep what was erased). */
  const erasedRows = (rows: ReadonlyArray<{ id: string; email: string }>) => ({
    ids: rows.map((r) => r.id),
    email_hashes: rows.map((r) => auditEmailHash(app.secretBox, r.email)),
  });

  app.get(
    ADMIN_WAITLIST_PATH,
    { preValidation: checkQueryFilter, schema: { querystring: waitlistPageQuerySchema, response: { 200: waitlistPageSchema } } },
    async (request) => {
      const filter = readFilter(filterOfQuery(request.query));
      let after = null;
      if (request.query.cursor !== undefined) {
        after = queries.decodeCursor(request.query.cursor);
        if (!after) throw new HttpError(400, 'invalid_cursor', 'The cursor is not valid. Start again from the first page.');
      }
      // Taken before the reads: a select-all sent with this as `until` then never includes someone
      // who joined after the counts were taken (at worst it leaves out one who joined meanwhile).
      const asOf = new Date().toISOString();
      // The counts are for the count line, shown from the first page: the pages after it skip them
      // (at a million entries a count is a read of a whole index). Without a filter, one count.
      const firstPage = after === null;
      const [page, total, matchingCount] = await Promise.all([
        queries.listWaitlistPage(db, { limit: request.query.limit, after, filter }),
        firstPage ? queries.countWaitlist(db) : null,
        firstPage && !isEmptyFilter(filter) ? queries.countWaitlist(db, filter) : null,
      ]);
      return {
        entries: page.entries,
        total,
        matching: matchingCount ?? total,
        asOf,
        nextCursor: page.next ? queries.encodeCursor(page.next) : null,
      };
    },
  );

  app.get(
    ADMIN_INSIGHTS_PATH,
    { preValidation: checkQueryFilter, schema: { querystring: filterQuerySchema, response: { 200: waitlistInsightsSchema } } },
    async (request) => waitlistInsights(db, readFilter(filterOfQuery(request.query)), { confirmation: app.config.consent.confirmation }),
  );

  app.post(
    ADMIN_DELETE_PATH,
    { bodyLimit: IDS_BODY_LIMIT, schema: { body: deleteRequestSchema, response: { 200: deleteResultSchema } } },
    async (request) => {
      const admin = app.adminOf(request);
      // One transaction: the rows go and the audit record is written together, or neither.
      const deleted = await db.transaction().execute(async (trx) => {
        const rows = await queries.deleteWaitlistEntries(trx, request.body.ids);
        await recordAudit(trx, {
          action: 'delete',
          actorEmail: admin.email,
          actorId: admin.userId,
          ip: request.ip,
          detail: {
            count: rows.length,
            requested: request.body.ids.length,
            ...erasedRows(rows),
          },
        });
        return rows;
      });
      request.log.info({ deleted: deleted.length, actor: admin.userId }, 'waitlist entries deleted');
      if (deleted.length > 0) app.liveWaitlist.changed('deleted');
      return { deleted };
    },
  );

  app.post(
    ADMIN_DELETE_MATCHING_PATH,
    {
      bodyLimit: IDS_BODY_LIMIT,
      preValidation: checkBodySelection,
      schema: { body: matchingSelectionSchema, response: { 200: deleteMatchingResultSchema } },
    },
    async (request) => {
      const admin = app.adminOf(request);
      const { filter } = request.body;
      const except = request.body.except ?? [];
      const audit = (detail: Record<string, unknown>) =>
        ({ action: 'delete', actorEmail: admin.email, actorId: admin.userId, ip: request.ip, detail }) as const;
      // One transaction: every matching row goes with its audit records, or nothing does. The
      // audit keeps ids and keyed hashes like a named delete, one record per batch (at most
      // ID_CHUNK_SIZE ids each, so no record grows with the list), then one with the filter and count.
      const deleted = await db.transaction().execute(async (trx) => {
        let parts = 0;
        const count = await queries.deleteMatchingWaitlist(trx, filter, except, async (rows) => {
          parts++;
          await recordAudit(
            trx,
            audit({
              scope: 'matching',
              part: parts,
              count: rows.length,
              ...erasedRows(rows),
            }),
          );
        });
        await recordAudit(trx, audit({ scope: 'matching', filter, except: except.length, count, parts }));
        return count;
      });
      request.log.info({ deleted, actor: admin.userId }, 'matching waitlist entries deleted');
      if (deleted > 0) app.liveWaitlist.changed('deleted');
      return { deleted };
    },
  );

  app.post(
    ADMIN_INVITE_PATH,
    {
      bodyLimit: IDS_BODY_LIMIT,
      preValidation: checkBodySelection,
      schema: { body: inviteRequestSchema, response: { 200: inviteResultSchema } },
    },
    async (request) => {
      const admin = app.adminOf(request);
      if (!app.mail.enabled) {
        throw new HttpError(409, MAIL_DISABLED_CODE, 'E-mail is off: set SMTP_URL, MAIL_FROM and PUBLIC_URL to send invites.');
      }
      const body = request.body;
      const invitedAt = new Date().toISOString();
      // One transaction: the statuses, the queued e-mails and the audit record, or none of them.
      const outcome = await db.transaction().execute(async (trx) => {
        const options: queries.InviteOptions = {
          invitedAt,
          queue: async (entries) => {
            // Only the template's name and the entry's id are stored; the worker renders each invite when it sends it.
            await app.mail.enqueueMany(
              trx,
              entries.map((entry) => waitlistEmailMessage('invite', entry)),
            );
          },
        };
        const result =
          'ids' in body
            ? await queries.inviteWaitlistEntries(trx, body.ids, options)
            : await queries.inviteMatchingWaitlist(trx, body.filter, body.except ?? [], options);
        const selection = 'ids' in body ? { requested: body.ids.length } : { scope: 'matching', filter: body.filter, except: (body.except ?? []).length };
        await recordAudit(trx, {
          action: 'invite',
          actorEmail: admin.email,
          actorId: admin.userId,
          ip: request.ip,
          // Counts only: each invited entry keeps its own invited_at.
          detail: { invited: result.invited, ...selection, skipped: result.skipped },
        });
        return result;
      });
      request.log.info({ invited: outcome.invited, skipped: outcome.skipped, actor: admin.userId }, 'waitlist invites queued');
      if (outcome.invited > 0) app.liveWaitlist.changed('invited');
      return { invited: outcome.invited, skipped: outcome.skipped, invitedAt };
    },
  );
}
