import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { auditEmailHash } from '../audit/audit-log.js';
import { scrubDeletedRowsSoon } from '../db/database.js';
import { HttpError } from '../http/errors.js';
import { deleteMatchingWaitlist, deleteWaitlistEntries, inviteSelection } from './repository.js';
import { readWaitlistPage } from './list.js';
import {
  auditedAction,
  auditedSelection,
  checkQueryFilter,
  IDS_BODY_LIMIT,
  selectionOf,
  selectionRouteOptions,
} from './selection.js';
import { waitlistEmailMessage } from '../consent/index.js';
import { webhookEvents } from '../webhooks/index.js';
import {
  ADMIN_DELETE_MATCHING_PATH,
  ADMIN_DELETE_PATH,
  ADMIN_INVITE_PATH,
  ADMIN_WAITLIST_PATH,
  deleteMatchingResultSchema,
  deleteRequestSchema,
  deleteResultSchema,
  inviteRequestSchema,
  inviteResultSchema,
  MAIL_DISABLED_CODE,
  matchingSelectionSchema,
  waitlistPageQuerySchema,
  waitlistPageSchema,
} from '../../shared/admin/waitlist-api.js';

/**
 * The admin waitlist API (contract: src/shared/admin/waitlist-api.ts). Every route in this scope
 * is admin-only and declares the least role it needs (a viewer reads; deleting and inviting need
 * an admin): the check runs in onRequest, before the body is read or validated, so an anonymous
 * caller can neither make the server parse megabytes of JSON nor learn the schema.
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
  /**
   * In a delete's transaction: the deleted entries' stored webhook events go (they held the
   * addresses) and each deletion raises `signup.erased` (the id only).
   */
  const erasedEvents = async (trx: Kysely<Database>, rows: ReadonlyArray<{ id: string }>) => {
    if (rows.length === 0) return;
    const ids = rows.map((r) => r.id);
    await app.webhooks.forgetEntries(trx, ids);
    const at = new Date().toISOString();
    await app.webhooks.enqueue(trx, ids.map((id) => webhookEvents.signupErased(id, at, 'admin')));
  };
  /** After a delete has committed: open admin pages refresh and the deleted rows leave the disk. */
  const deletedRows = (request: FastifyRequest) => {
    app.liveWaitlist.changed('deleted');
    scrubDeletedRowsSoon(db, request.log);
  };

  app.get(
    ADMIN_WAITLIST_PATH,
    { config: { role: 'viewer' }, preValidation: checkQueryFilter, schema: { querystring: waitlistPageQuerySchema, response: { 200: waitlistPageSchema } } },
    async (request) => readWaitlistPage(db, request.query),
  );

  app.post(
    ADMIN_DELETE_PATH,
    { config: { role: 'admin' }, bodyLimit: IDS_BODY_LIMIT, schema: { body: deleteRequestSchema, response: { 200: deleteResultSchema } } },
    async (request) => {
      const admin = app.adminOf(request);
      // The rows go and the audit record is written together, or neither.
      const deleted = await auditedAction(db, { admin, ip: request.ip }, 'delete', async (trx, audit) => {
        const rows = await deleteWaitlistEntries(trx, request.body.ids);
        await erasedEvents(trx, rows);
        await audit({ count: rows.length, ...auditedSelection(request.body, app.secretBox), ...erasedRows(rows) });
        return rows;
      });
      request.log.info({ deleted: deleted.length, actor: admin.userId }, 'waitlist entries deleted');
      if (deleted.length > 0) deletedRows(request);
      return { deleted };
    },
  );

  app.post(
    ADMIN_DELETE_MATCHING_PATH,
    { config: { role: 'admin' }, ...selectionRouteOptions(matchingSelectionSchema, deleteMatchingResultSchema) },
    async (request) => {
      const admin = app.adminOf(request);
      const { filter } = request.body;
      const except = request.body.except ?? [];
      // Every matching row goes with its audit records, or nothing does. The audit keeps ids and
      // keyed hashes like a named delete, one record per batch (at most ID_CHUNK_SIZE ids each, so
      // no record grows with the list), then one with the filter and count.
      const deleted = await auditedAction(db, { admin, ip: request.ip }, 'delete', async (trx, audit) => {
        let parts = 0;
        const count = await deleteMatchingWaitlist(trx, filter, except, async (rows) => {
          parts++;
          await erasedEvents(trx, rows);
          await audit({ scope: 'matching', part: parts, count: rows.length, ...erasedRows(rows) });
        });
        await audit({ ...auditedSelection({ filter, except }, app.secretBox), count, parts });
        return count;
      });
      request.log.info({ deleted, actor: admin.userId }, 'matching waitlist entries deleted');
      if (deleted > 0) deletedRows(request);
      return { deleted };
    },
  );

  app.post(
    ADMIN_INVITE_PATH,
    { config: { role: 'admin' }, ...selectionRouteOptions(inviteRequestSchema, inviteResultSchema) },
    async (request) => {
      const admin = app.adminOf(request);
      if (!app.mail.enabled) {
        throw new HttpError(409, MAIL_DISABLED_CODE, 'E-mail is off: set SMTP_URL, MAIL_FROM and PUBLIC_URL to send invites.');
      }
      const selection = selectionOf(request.body);
      const invitedAt = new Date().toISOString();
      // The statuses, the queued e-mails and the audit record, or none of them.
      const outcome = await auditedAction(db, { admin, ip: request.ip }, 'invite', async (trx, audit) => {
        const result = await inviteSelection(trx, selection, {
          invitedAt,
          // Only the template's name and the entry's id are stored; the worker renders each invite when it sends it.
          queue: async (entries) => {
            await app.mail.enqueueMany(trx, entries.map((entry) => waitlistEmailMessage('invite', entry)));
            await app.webhooks.enqueue(trx, entries.map((entry) => webhookEvents.inviteSent(entry, invitedAt)));
          },
        });
        // Counts only: each invited entry keeps its own invited_at.
        await audit({ invited: result.invited, ...auditedSelection(selection, app.secretBox), skipped: result.skipped });
        return result;
      });
      request.log.info({ invited: outcome.invited, skipped: outcome.skipped, actor: admin.userId }, 'waitlist invites queued');
      if (outcome.invited > 0) app.liveWaitlist.changed('invited');
      return { invited: outcome.invited, skipped: outcome.skipped, invitedAt };
    },
  );
}
