import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { recordAudit } from '../audit/audit-log.js';
import { HttpError } from '../http/errors.js';
import { notifyEnqueued } from './outbox.js';
import { countOutbox, decodeOutboxCursor, encodeOutboxCursor, listOutboxPage, retryFailedMail } from './outbox-admin.js';
import {
  ADMIN_MAIL_PATH,
  ADMIN_OUTBOX_PATH,
  ADMIN_OUTBOX_RETRY_PATH,
  mailStatusSchema,
  outboxPageQuerySchema,
  outboxPageSchema,
  retryRequestSchema,
  retryResultSchema,
} from '../../shared/admin/mail-api.js';

/** 100,000 UUIDs as JSON are about 3.9 MB; twice that leaves room without inviting abuse. */
const IDS_BODY_LIMIT = 8 * 1024 * 1024;

/**
 * The admin e-mail API (contract: src/shared/admin/mail-api.ts): the settings and the outbox's
 * counts, its messages page by page, and retries of failed ones. Admin-only like every
 * /api/admin route: the check runs in onRequest, before the body is read.
 */
export async function adminMailRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { db } = app.database;

  app.guardAdminScope();

  // The settings and counts: no address, so a viewer sees them too.
  app.get(ADMIN_MAIL_PATH, { config: { role: 'viewer' }, schema: { response: { 200: mailStatusSchema } } }, async () => ({
    enabled: app.mail.enabled,
    confirmation: app.config.consent.confirmation,
    welcome: app.config.consent.welcome,
    from: app.config.mail?.from ?? null,
    counts: await countOutbox(db),
  }));

  app.get(
    ADMIN_OUTBOX_PATH,
    // The outbox's rows carry addresses: not for a viewer (issue 32 point 4).
    { config: { role: 'admin' }, schema: { querystring: outboxPageQuerySchema, response: { 200: outboxPageSchema } } },
    async (request) => {
      let after = null;
      if (request.query.cursor !== undefined) {
        after = decodeOutboxCursor(request.query.cursor);
        if (!after) throw new HttpError(400, 'invalid_cursor', 'The cursor is not valid. Start again from the first page.');
      }
      const page = await listOutboxPage(db, { status: request.query.status, limit: request.query.limit, after });
      return { messages: page.messages, nextCursor: page.next ? encodeOutboxCursor(page.next) : null };
    },
  );

  app.post(
    ADMIN_OUTBOX_RETRY_PATH,
    { config: { role: 'admin' }, bodyLimit: IDS_BODY_LIMIT, schema: { body: retryRequestSchema, response: { 200: retryResultSchema } } },
    async (request) => {
      const admin = app.adminOf(request);
      if (!app.mail.enabled) {
        throw new HttpError(409, 'mail_disabled', 'E-mail is off (SMTP_URL is not set): nothing could send these messages.');
      }
      // One transaction: the rows are queued again and the audit record written together, or neither.
      const retried = await db.transaction().execute(async (trx) => {
        const ids = await retryFailedMail(trx, request.body.ids, new Date());
        await recordAudit(trx, {
          action: 'mail_retry',
          actorEmail: admin.email,
          actorId: admin.userId,
          ip: request.ip,
          detail: { count: ids.length, requested: request.body.ids.length, ids },
        });
        return ids;
      });
      if (retried.length > 0) notifyEnqueued();
      request.log.info({ retried: retried.length, actor: admin.userId }, 'mail: failed messages queued again');
      return { retried: retried.length };
    },
  );
}
