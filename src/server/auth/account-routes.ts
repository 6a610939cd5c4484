import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { recordAudit } from '../audit/audit-log.js';
import { toIsoTimestamp } from '../db/database.js';
import { HttpError } from '../http/errors.js';
import { sessionLimits } from './session-limits.js';
import { deleteSessions, deleteSessionsById, listLiveSessions } from './sessions-repository.js';
import {
  ADMIN_SESSIONS_PATH,
  ADMIN_SESSIONS_REVOKE_PATH,
  revokeResultSchema,
  revokeSessionsRequestSchema,
  sessionListSchema,
} from '../../shared/admin/sessions-api.js';

/**
 * The admin's own sessions (contract: src/shared/admin/sessions-api.ts; ASVS 3.3.4): list them and
 * sign others out. Admin-only like the waitlist API: the check runs in onRequest, before the body
 * is read, and every answer is `no-store`. GoTrue's surface (/auth/v1) is left as it is.
 */
export async function adminAccountRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { db } = app.database;

  app.guardAdminScope();

  // Every role manages its own sessions.
  app.get(ADMIN_SESSIONS_PATH, { config: { role: 'viewer' }, schema: { response: { 200: sessionListSchema } } }, async (request) => {
    const admin = app.adminOf(request);
    const rows = await listLiveSessions(db, admin.userId, sessionLimits(app.config.auth));
    return {
      sessions: rows.map((row) => ({
        id: row.id,
        created_at: toIsoTimestamp(row.created_at),
        last_active_at: toIsoTimestamp(row.last_active_at ?? row.updated_at),
        ip_address: row.ip_address,
        user_agent: row.user_agent,
        aal: row.aal,
        current: row.id === admin.sessionId,
      })),
    };
  });

  app.post(
    ADMIN_SESSIONS_REVOKE_PATH,
    { config: { role: 'viewer' }, bodyLimit: 16 * 1024, schema: { body: revokeSessionsRequestSchema, response: { 200: revokeResultSchema } } },
    async (request) => {
      const admin = app.adminOf(request);
      const body = request.body;
      if ('ids' in body && body.ids.some((id) => id.toLowerCase() === admin.sessionId)) {
        throw new HttpError(400, 'current_session', 'This is the session you are using: sign out to end it.');
      }
      const revoked = await db.transaction().execute(async (trx) => {
        const ended =
          'ids' in body
            ? await deleteSessionsById(trx, admin.userId, body.ids, admin.sessionId)
            : await deleteSessions(trx, admin.userId, { except: admin.sessionId });
        await recordAudit(trx, {
          action: 'session_revoked',
          actorEmail: admin.email,
          actorId: admin.userId,
          ip: request.ip,
          detail: { sessions: 'ids' in body ? 'selected' : 'others', sessions_ended: ended, by: 'admin_api' },
        });
        return ended;
      });
      return { revoked };
    },
  );
}
