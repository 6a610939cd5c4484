import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { auditEmailHash, recordAudit } from '../audit/audit-log.js';
import { HttpError } from '../http/errors.js';
import * as queries from './admin-repository.js';
import { waitlistEmailMessage } from './emails/index.js';
import {
  ADMIN_DELETE_PATH,
  ADMIN_EXPORT_PATH,
  ADMIN_INVITE_PATH,
  ADMIN_WAITLIST_PATH,
  deleteRequestSchema,
  deleteResultSchema,
  EXPORT_FILE_NAMES,
  exportRequestSchema,
  inviteRequestSchema,
  inviteResultSchema,
  MAIL_DISABLED_CODE,
  waitlistPageQuerySchema,
  waitlistPageSchema,
} from '../../shared/admin/waitlist-api.js';
import { CSV_CONTENT_TYPE } from '../../shared/csv.js';
import { isKnownTimeZone } from '../../shared/waitlist/display.js';
import { waitlistCsvChunks } from '../../shared/waitlist/csv.js';

/** 100,000 UUIDs as JSON are about 3.9 MB; twice that leaves room without inviting abuse. */
const IDS_BODY_LIMIT = 8 * 1024 * 1024;

/** Pulls the first item now and replays it, so errors in the first read surface before streaming starts. */
async function startIteration<T>(source: AsyncGenerator<T>): Promise<AsyncGenerator<T>> {
  const first = await source.next();
  return (async function* () {
    if (first.done) return;
    yield first.value;
    yield* source;
  })();
}

/**
 * The admin waitlist API (contract: src/shared/admin/waitlist-api.ts). Every route in this scope
 * is admin-only: the check runs in onRequest, before the body is read or validated, so an
 * anonymous caller can neither make the server parse megabytes of JSON nor learn the schema.
 */
export async function adminWaitlistRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { db } = app.database;

  app.guardAdminScope();

  app.get(
    ADMIN_WAITLIST_PATH,
    { schema: { querystring: waitlistPageQuerySchema, response: { 200: waitlistPageSchema } } },
    async (request) => {
      let after = null;
      if (request.query.cursor !== undefined) {
        after = queries.decodeCursor(request.query.cursor);
        if (!after) throw new HttpError(400, 'invalid_cursor', 'The cursor is not valid. Start again from the first page.');
      }
      const [page, total] = await Promise.all([
        queries.listWaitlistPage(db, { limit: request.query.limit, after }),
        queries.countWaitlist(db),
      ]);
      return { entries: page.entries, total, nextCursor: page.next ? queries.encodeCursor(page.next) : null };
    },
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
          // Ids and keyed hashes, never the addresses: the log must not keep what was erased.
          detail: {
            count: rows.length,
            requested: request.body.ids.length,
            ids: rows.map((r) => r.id),
            email_hashes: rows.map((r) => auditEmailHash(app.secretBox, r.email)),
          },
        });
        return rows;
      });
      request.log.info({ deleted: deleted.length, actor: admin.userId }, 'waitlist entries deleted');
      return { deleted };
    },
  );

  app.post(
    ADMIN_INVITE_PATH,
    { bodyLimit: IDS_BODY_LIMIT, schema: { body: inviteRequestSchema, response: { 200: inviteResultSchema } } },
    async (request) => {
      const admin = app.adminOf(request);
      if (!app.mail.enabled) {
        throw new HttpError(409, MAIL_DISABLED_CODE, 'E-mail is off: set SMTP_URL, MAIL_FROM and PUBLIC_URL to send invites.');
      }
      const invitedAt = new Date().toISOString();
      // One transaction: the statuses, the queued e-mails and the audit record, or none of them.
      const outcome = await db.transaction().execute(async (trx) => {
        const result = await queries.inviteWaitlistEntries(trx, request.body.ids, {
          invitedAt,
          queue: async (entries) => {
            // Only the template's name and the entry's id are stored; the worker renders each invite when it sends it.
            await app.mail.enqueueMany(
              trx,
              entries.map((entry) => waitlistEmailMessage('invite', entry)),
            );
          },
        });
        await recordAudit(trx, {
          action: 'invite',
          actorEmail: admin.email,
          actorId: admin.userId,
          ip: request.ip,
          // Counts only: each invited entry keeps its own invited_at.
          detail: { invited: result.invited.length, requested: request.body.ids.length, skipped: result.skipped },
        });
        return result;
      });
      request.log.info({ invited: outcome.invited.length, skipped: outcome.skipped, actor: admin.userId }, 'waitlist invites queued');
      return { invited: outcome.invited.length, skipped: outcome.skipped, invitedAt };
    },
  );

  app.post(
    ADMIN_EXPORT_PATH,
    {
      bodyLimit: IDS_BODY_LIMIT,
      // No body at all means "everything, in UTC", the same as `{}`.
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
      schema: { body: exportRequestSchema },
    },
    async (request, reply) => {
      const admin = app.adminOf(request);
      const body = request.body;
      const timeZone = body.timeZone ?? 'UTC';
      if (!isKnownTimeZone(timeZone)) {
        throw new HttpError(400, 'invalid_time_zone', `Unknown time zone "${timeZone}". Use an IANA name such as Europe/Berlin.`);
      }
      const scope = body.ids ? 'selected' : 'all';
      // The first batch is read before any byte is sent, so a database failure at the start is a
      // proper 500 answer rather than a cut-off download.
      const batches = await startIteration(body.ids ? queries.iterateSelectedWaitlist(db, body.ids) : queries.iterateAllWaitlist(db));

      // Rows are read, formatted and sent one batch at a time; the audit record is written once
      // the stream ends (or stops early), with the number of rows actually written.
      let rows = 0;
      let completed = false;
      async function* file(): AsyncGenerator<string> {
        try {
          for await (const chunk of waitlistCsvChunks(batches, timeZone, (n) => (rows += n))) yield chunk;
          completed = true;
        } finally {
          try {
            await recordAudit(db, {
              action: 'export',
              actorEmail: admin.email,
              actorId: admin.userId,
              ip: request.ip,
              detail: { count: rows, scope, timeZone, ...(completed ? {} : { incomplete: true }) },
            });
          } catch (err) {
            request.log.error({ err }, 'could not record the export in the audit log');
          }
        }
      }

      return reply
        .type(CSV_CONTENT_TYPE)
        .header('content-disposition', `attachment; filename="${EXPORT_FILE_NAMES[scope]}"`)
        .send(Readable.from(file(), { objectMode: false }));
    },
  );
}
