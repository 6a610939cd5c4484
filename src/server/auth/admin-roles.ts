import type { Kysely } from 'kysely';
import { recordAudit } from '../audit/audit-log.js';
import { isPostgres } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { ADMIN_ROLES, isAdminRole, type AdminRole } from '../../shared/admin/roles.js';
import type { Db } from './users-repository.js';

/**
 * Admin roles in the database (issue 32 point 4): who is what, changing a role (CLI and the owner's
 * Team section) and the one rule that guards it: there is always an owner while there are admins.
 */

export class RoleChangeError extends Error {
  constructor(
    public readonly kind: 'not_found' | 'last_owner',
    message: string,
  ) {
    super(message);
    this.name = 'RoleChangeError';
  }
}

export const LAST_OWNER_MESSAGE = 'This is the last owner: make another admin an owner first, so the team always has one.';

/** A role given by a person (the CLI's argument): one of the three names, any case. */
export function parseRole(value: string): AdminRole | null {
  const role = value.trim().toLowerCase();
  return isAdminRole(role) ? role : null;
}

export const ROLE_NAMES = ADMIN_ROLES.join(', ');

/**
 * Within a transaction that may take the owner role from someone: on PostgreSQL, locks the owners'
 * rows, so two demotions of the last two owners run one after the other and the second sees one
 * owner left (SQLite runs one writer at a time anyway). Resolves to the number of owners.
 */
export async function lockOwners(trx: Db): Promise<number> {
  // In id order: two transactions lock the same rows in the same order, so they queue, never deadlock.
  let query = trx.selectFrom('admin_users').select('id').where('role', '=', 'owner').orderBy('id');
  if (isPostgres(trx)) query = query.forUpdate();
  return (await query.execute()).length;
}

/** Who changes a role: the CLI, or an owner through the admin API (audited as the actor). */
export type RoleChangeActor = { by: 'cli' } | { by: 'admin_api'; userId: string; email: string; ip: string | null };

export interface RoleChange {
  id: string;
  email: string;
  from: AdminRole;
  to: AdminRole;
}

/**
 * Gives the admin `target` (an id or a stored, lower-cased e-mail) the role `to`, audited
 * (`role_changed`: the admin's id, the old and the new role, who did it; no address of the target,
 * no secret). Refuses to take the owner role from the last owner. A role set to what it already is
 * changes and audits nothing. Takes effect on the admin's next request (the guard reads the role
 * from the database each time); tokens carry the new role from their next refresh.
 */
export async function setAdminRole(db: Kysely<Database>, target: { id: string } | { email: string }, to: AdminRole, actor: RoleChangeActor): Promise<RoleChange> {
  return db.transaction().execute(async (trx) => {
    const owners = await lockOwners(trx);
    let query = trx.selectFrom('admin_users').select(['id', 'email', 'role']);
    query = 'id' in target ? query.where('id', '=', target.id) : query.where('email', '=', target.email);
    const row = await query.executeTakeFirst();
    if (!row) throw new RoleChangeError('not_found', 'id' in target ? 'No such admin.' : `No admin with the e-mail ${target.email}.`);
    const change: RoleChange = { id: row.id, email: row.email, from: row.role, to };
    if (row.role === to) return change;
    if (row.role === 'owner' && owners <= 1) throw new RoleChangeError('last_owner', LAST_OWNER_MESSAGE);
    await trx.updateTable('admin_users').set({ role: to, updated_at: new Date().toISOString() }).where('id', '=', row.id).execute();
    await recordAudit(trx, {
      action: 'role_changed',
      ...(actor.by === 'cli'
        ? { actorEmail: row.email, actorId: row.id, ip: null }
        : { actorEmail: actor.email, actorId: actor.userId, ip: actor.ip }),
      detail: { admin_id: row.id, from: row.role, to, by: actor.by },
    });
    return change;
  });
}

/** The role of the admin with this id, from the database (undefined when there is none). */
export async function roleOf(db: Db, id: string): Promise<AdminRole | undefined> {
  const row = await db.selectFrom('admin_users').select('role').where('id', '=', id).executeTakeFirst();
  return row?.role;
}
