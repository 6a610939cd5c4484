import type { Insertable, Selectable } from 'kysely';
import type { AdminRefreshTokensTable } from '../db/schema.js';
import type { Db } from './users-repository.js';

export type RefreshTokenRow = Selectable<AdminRefreshTokensTable>;

export async function insertRefreshToken(db: Db, token: Insertable<AdminRefreshTokensTable>): Promise<void> {
  await db.insertInto('admin_refresh_tokens').values(token).execute();
}

export function findRefreshTokenByHash(db: Db, tokenHash: string): Promise<Pick<RefreshTokenRow, 'id' | 'session_id'> | undefined> {
  return db.selectFrom('admin_refresh_tokens').select(['id', 'session_id']).where('token_hash', '=', tokenHash).executeTakeFirst();
}

export function findRefreshToken(db: Db, id: string): Promise<RefreshTokenRow | undefined> {
  return db.selectFrom('admin_refresh_tokens').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The session's newest token that is not revoked yet. */
export function findActiveRefreshToken(db: Db, sessionId: string): Promise<RefreshTokenRow | undefined> {
  return db
    .selectFrom('admin_refresh_tokens')
    .selectAll()
    .where('session_id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

export async function revokeRefreshToken(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('admin_refresh_tokens').set({ revoked_at: at, updated_at: at }).where('id', '=', id).execute();
}

export async function deleteSessionRefreshTokens(db: Db, sessionId: string): Promise<void> {
  await db.deleteFrom('admin_refresh_tokens').where('session_id', '=', sessionId).execute();
}

export async function deleteUserRefreshTokens(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('admin_refresh_tokens').where('user_id', '=', userId).execute();
}

/** The whole row of the token with this hash (read under the session lock while refreshing). */
export function findRefreshTokenRowByHash(db: Db, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  return db.selectFrom('admin_refresh_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}
