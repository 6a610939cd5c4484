import { sql, type Insertable, type Selectable, type Transaction, type Updateable } from 'kysely';
import { isPostgres } from '../db/database.js';
import type { AdminSessionsTable, Database } from '../db/schema.js';
import type { SessionLimits } from './session-limits.js';
import type { Db } from './users-repository.js';

export type SessionRow = Selectable<AdminSessionsTable>;

/** Which of a user's sessions to delete: all of them, one, or all but one. */
export type SessionSelection = { only: string } | { except: string } | 'all';

export async function insertSession(db: Db, session: Insertable<AdminSessionsTable>): Promise<void> {
  await db.insertInto('admin_sessions').values(session).execute();
}

/** The session with this id, if it belongs to this user. */
export function findUserSession(db: Db, id: string, userId: string): Promise<SessionRow | undefined> {
  return db.selectFrom('admin_sessions').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

/**
 * Reads the session under the per-session write lock, so refreshes of one session run one at a time:
 * on PostgreSQL a `SELECT … FOR UPDATE` of the session row; on SQLite a no-op write first, which takes
 * the database write lock before anything is read (no stale snapshot, no lock upgrade).
 */
export async function lockSession(trx: Transaction<Database>, id: string): Promise<SessionRow | undefined> {
  if (isPostgres(trx)) {
    // Like GoTrue, give up after 5 s of contention instead of queueing forever.
    await sql`SET LOCAL lock_timeout = '5s'`.execute(trx);
    return trx.selectFrom('admin_sessions').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  }
  await trx.updateTable('admin_sessions').set({ updated_at: sql<string>`updated_at` }).where('id', '=', id).execute();
  return trx.selectFrom('admin_sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateSession(db: Db, id: string, changes: Updateable<AdminSessionsTable>): Promise<void> {
  await db.updateTable('admin_sessions').set(changes).where('id', '=', id).execute();
}

/**
 * Signs out those of `ids` that are sessions of this user, except `keep` (the caller's own).
 * Another user's id or an unknown one is ignored. Returns how many ended.
 */
export async function deleteSessionsById(db: Db, userId: string, ids: readonly string[], keep: string): Promise<number> {
  const lower = [...new Set(ids.map((id) => id.toLowerCase()))].filter((id) => id !== keep);
  if (lower.length === 0) return 0;
  const result = await db.deleteFrom('admin_sessions').where('user_id', '=', userId).where('id', 'in', lower).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Signs sessions of a user out (their refresh tokens go with them: ON DELETE CASCADE). Returns how many. */
export async function deleteSessions(db: Db, userId: string, which: SessionSelection): Promise<number> {
  let query = db.deleteFrom('admin_sessions').where('user_id', '=', userId);
  if (which !== 'all' && 'only' in which) query = query.where('id', '=', which.only);
  if (which !== 'all' && 'except' in which) query = query.where('id', '!=', which.except);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Records real use of the session (for the inactivity timeout). Writes at most once per
 * `resolutionMs`: the row is only updated when its mark is older than `at - resolutionMs`.
 */
export async function touchSession(db: Db, id: string, at: string, resolutionMs: number): Promise<void> {
  const staleBefore = new Date(new Date(at).getTime() - resolutionMs).toISOString();
  await db
    .updateTable('admin_sessions')
    .set({ last_active_at: at })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_active_at', 'is', null), eb('last_active_at', '<', staleBefore)]))
    .execute();
}

/**
 * Deletes the user's sessions (all users' when `userId` is null) that began before `startedBefore`
 * or were last used before `idleBefore`. Returns how many.
 */
export async function deleteExpiredSessions(db: Db, userId: string | null, startedBefore: string, idleBefore: string): Promise<number> {
  let query = db
    .deleteFrom('admin_sessions')
    .where((eb) =>
      eb.or([
        eb('created_at', '<', startedBefore),
        eb('last_active_at', '<', idleBefore),
        eb.and([eb('last_active_at', 'is', null), eb('updated_at', '<', idleBefore)]),
      ]),
    );
  if (userId !== null) query = query.where('user_id', '=', userId);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The user's sessions, newest sign-in first. */
export function listUserSessions(db: Db, userId: string): Promise<SessionRow[]> {
  return db.selectFrom('admin_sessions').selectAll().where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id').execute();
}

/** The user's sessions still within `limits` at `now`, newest sign-in first; the ended ones are deleted first. */
export async function listLiveSessions(db: Db, userId: string, limits: SessionLimits, now = Date.now()): Promise<SessionRow[]> {
  const iso = (ms: number) => new Date(ms).toISOString();
  await deleteExpiredSessions(db, userId, iso(now - limits.maxAgeSeconds * 1000), iso(now - limits.inactivitySeconds * 1000));
  return listUserSessions(db, userId);
}
