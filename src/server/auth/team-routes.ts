import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { toIsoTimestamp } from '../db/database.js';
import { HttpError } from '../http/errors.js';
import { listAdmins } from './admins.js';
import { RoleChangeError, setAdminRole } from './admin-roles.js';
import {
  ADMIN_TEAM_PATH,
  ADMIN_TEAM_ROLE_PATH,
  LAST_OWNER_CODE,
  setRoleRequestSchema,
  teamListSchema,
  teamMemberSchema,
} from '../../shared/admin/team-api.js';
import { findUserById } from './users-repository.js';

/**
 * The owner's Team section (contract: src/shared/admin/team-api.ts): every admin with its role, and
 * a role changed (audited; never the last owner's). Owner-only, declared on each route.
 */
export async function adminTeamRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { db } = app.database;
  app.guardAdminScope();

  app.get(ADMIN_TEAM_PATH, { config: { role: 'owner' }, schema: { response: { 200: teamListSchema } } }, async (request) => {
    const me = app.adminOf(request);
    const admins = await listAdmins(db);
    return {
      admins: admins.map((a) => ({ id: a.id, email: a.email, role: a.role, created_at: a.createdAt, last_sign_in_at: a.lastSignInAt, you: a.id === me.userId })),
    };
  });

  app.post(
    ADMIN_TEAM_ROLE_PATH,
    { config: { role: 'owner' }, bodyLimit: 4 * 1024, schema: { body: setRoleRequestSchema, response: { 200: teamMemberSchema } } },
    async (request) => {
      const me = app.adminOf(request);
      const id = request.body.id.toLowerCase();
      try {
        await setAdminRole(db, { id }, request.body.role, { by: 'admin_api', userId: me.userId, email: me.email, ip: request.ip });
      } catch (err) {
        if (err instanceof RoleChangeError) {
          throw err.kind === 'not_found' ? new HttpError(404, 'not_found', 'No such admin.') : new HttpError(409, LAST_OWNER_CODE, err.message);
        }
        throw err;
      }
      request.log.info({ actor: me.userId, admin: id, role: request.body.role }, 'admin role set');
      const row = await findUserById(db, id);
      if (!row) throw new HttpError(404, 'not_found', 'No such admin.');
      return {
        id: row.id,
        email: row.email,
        role: row.role,
        created_at: toIsoTimestamp(row.created_at),
        last_sign_in_at: row.last_sign_in_at ? toIsoTimestamp(row.last_sign_in_at) : null,
        you: row.id === me.userId,
      };
    },
  );
}
