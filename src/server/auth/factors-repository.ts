import { sql, type Insertable, type Selectable, type Transaction } from 'kysely';
import { isPostgres, toIsoTimestamp } from '../db/database.js';
import type { AdminMfaChallengesTable, AdminMfaFactorsTable, AdminMfaFailuresTable, Database } from '../db/schema.js';
import type { Db } from './users-repository.js';

/** The SQL for `admin_mfa_factors`, `admin_mfa_challenges` and the assurance columns of `admin_sessions`. */
export type FactorRow = Selectable<AdminMfaFactorsTable>;
export type ChallengeRow = Selectable<AdminMfaChallengesTable>;

export async function insertFactor(db: Db, factor: Insertable<AdminMfaFactorsTable>): Promise<void> {
  await db.insertInto('admin_mfa_factors').values(factor).execute();
}

/** A user's factors, oldest first (the order of `user.factors`). */
export function listUserFactors(db: Db, userId: string): Promise<FactorRow[]> {
  return db.selectFrom('admin_mfa_factors').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
}

export async function hasVerifiedFactor(db: Db, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('admin_mfa_factors')
    .select('id')
    .where('user_id', '=', userId)
    .where('status', '=', 'verified')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The factor with this id, if it belongs to this user. */
export function findUserFactor(db: Db, id: string, userId: string): Promise<FactorRow | undefined> {
  return db.selectFrom('admin_mfa_factors').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

/** GoTrue's DeleteExpiredFactors: unverified factors created before `cutoff` that were never challenged. */
export async function deleteExpiredFactors(db: Db, cutoff: string): Promise<void> {
  await db
    .deleteFrom('admin_mfa_factors')
    .where('status', '=', 'unverified')
    .where('created_at', '<', cutoff)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('admin_mfa_challenges as c').select('c.id').whereRef('c.factor_id', '=', 'admin_mfa_factors.id'))))
    .execute();
}

/** The user's unverified factors except `keep` (after a verification). */
export async function deleteOtherUnverifiedFactors(db: Db, userId: string, keep: string): Promise<void> {
  await db.deleteFrom('admin_mfa_factors').where('user_id', '=', userId).where('status', '=', 'unverified').where('id', '!=', keep).execute();
}

/** Deletes one factor (its challenges go with it: ON DELETE CASCADE). */
export async function deleteFactor(db: Db, id: string): Promise<void> {
  await db.deleteFrom('admin_mfa_factors').where('id', '=', id).execute();
}

/** Deletes every factor of a user; returns how many. */
export async function deleteUserFactors(db: Db, userId: string): Promise<number> {
  const result = await db.deleteFrom('admin_mfa_factors').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Marks the factor verified and records the accepted time step, unless a step at least as new was
 * accepted meanwhile (a code replayed in parallel). Returns false in that case.
 */
export async function acceptFactorStep(db: Db, id: string, step: number, at: string): Promise<boolean> {
  const result = await db
    .updateTable('admin_mfa_factors')
    .set({ status: 'verified', last_verified_step: step, updated_at: at })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_verified_step', 'is', null), eb('last_verified_step', '<', step)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function insertChallenge(db: Db, challenge: Insertable<AdminMfaChallengesTable>): Promise<void> {
  await db.insertInto('admin_mfa_challenges').values(challenge).execute();
  await db.updateTable('admin_mfa_factors').set({ last_challenged_at: challenge.created_at }).where('id', '=', challenge.factor_id).execute();
}

export function findChallenge(db: Db, id: string, factorId: string): Promise<ChallengeRow | undefined> {
  return db.selectFrom('admin_mfa_challenges').selectAll().where('id', '=', id).where('factor_id', '=', factorId).executeTakeFirst();
}

export async function deleteChallenge(db: Db, id: string): Promise<void> {
  await db.deleteFrom('admin_mfa_challenges').where('id', '=', id).execute();
}

/** Records a wrong (or replayed) code; the account's failures from before `expired` go at the same time. */
export async function insertFailure(db: Db, failure: Insertable<AdminMfaFailuresTable>, expired: string): Promise<void> {
  await db.deleteFrom('admin_mfa_failures').where('user_id', '=', failure.user_id).where('created_at', '<', expired).execute();
  await db.insertInto('admin_mfa_failures').values(failure).execute();
}

/** How many wrong codes were entered against a challenge. */
export async function countChallengeFailures(db: Db, challengeId: string): Promise<number> {
  const row = await db.selectFrom('admin_mfa_failures').select((eb) => eb.fn.countAll<string | number>().as('n')).where('challenge_id', '=', challengeId).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The account's wrong codes since `since`, oldest first (their times, as ISO strings). */
export async function accountFailuresSince(db: Db, userId: string, since: string): Promise<string[]> {
  const rows = await db
    .selectFrom('admin_mfa_failures')
    .select('created_at')
    .where('user_id', '=', userId)
    .where('created_at', '>=', since)
    .orderBy('created_at')
    .execute();
  return rows.map((r) => toIsoTimestamp(r.created_at));
}

/** Forgets an account's wrong codes (`npm run admin -- unlock`); returns how many. */
export async function clearFailures(db: Db, userId: string): Promise<number> {
  const result = await db.deleteFrom('admin_mfa_failures').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Marks the challenge used; false when another request used it first. */
export async function consumeChallenge(db: Db, id: string, at: string): Promise<boolean> {
  const result = await db.updateTable('admin_mfa_challenges').set({ verified_at: at }).where('id', '=', id).where('verified_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Raises a session to aal2 with this factor and the methods list (JSON text). */
export async function raiseSession(db: Db, sessionId: string, factorId: string, amr: string, at: string): Promise<void> {
  await db.updateTable('admin_sessions').set({ aal: 'aal2', factor_id: factorId, amr, updated_at: at }).where('id', '=', sessionId).execute();
}

/** GoTrue's InvalidateSessionsWithAALLessThan(aal2), except the session named. Returns how many. */
export async function deleteOtherAal1Sessions(db: Db, userId: string, keep: string): Promise<number> {
  const result = await db
    .deleteFrom('admin_sessions')
    .where('user_id', '=', userId)
    .where('id', '!=', keep)
    .where('aal', '!=', 'aal2')
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** GoTrue's DowngradeSessionsToAAL1: the sessions the factor raised lose it (and its `totp` entry). */
export async function downgradeFactorSessions(db: Db, factorId: string): Promise<void> {
  await db.updateTable('admin_sessions').set({ aal: 'aal1', factor_id: null, amr: '[]' }).where('factor_id', '=', factorId).execute();
}

/**
 * Serialises factor changes of one user (enrolment limits): on PostgreSQL a `SELECT … FOR UPDATE` of
 * the user row; on SQLite a no-op write, which takes the database write lock first.
 */
export async function lockUserFactors(trx: Transaction<Database>, userId: string): Promise<void> {
  if (isPostgres(trx)) {
    await trx.selectFrom('admin_users').select('id').where('id', '=', userId).forUpdate().execute();
    return;
  }
  await trx.updateTable('admin_users').set({ updated_at: sql<string>`updated_at` }).where('id', '=', userId).execute();
}
