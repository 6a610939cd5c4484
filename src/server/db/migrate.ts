import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { rawSqliteOf } from './database.js';
import * as createWaitlist from './migrations/2026-11-22T0600-create-waitlist.js';
import * as createAdminAuth from './migrations/2026-11-22T0700-create-admin-auth.js';
import * as addMfa from './migrations/2026-11-23T1000-add-mfa.js';
import * as sessionActivity from './migrations/2026-11-23T1100-session-activity.js';
import * as createMailOutbox from './migrations/2026-11-23T1300-create-mail-outbox.js';
import * as consent from './migrations/2026-11-24T0900-consent.js';
import * as unloggedRateLimits from './migrations/2026-11-24T1000-unlogged-rate-limits.js';
import * as attribution from './migrations/2026-11-25T0900-attribution.js';
import * as emailTrigramIndex from './migrations/2026-11-25T2000-email-trigram-index.js';
import * as emailDomainIndex from './migrations/2026-11-27T0700-email-domain-index.js';
import * as waitlistRollup from './migrations/2026-11-27T0900-waitlist-rollup.js';
import * as exportDownloads from './migrations/2026-11-27T2000-export-downloads.js';
import * as outboxLeaseToken from './migrations/2026-11-28T0900-outbox-lease-token.js';
import * as mfaFailures from './migrations/2026-11-28T0910-mfa-failures.js';
import * as secretBoxKeys from './migrations/2026-11-28T0920-secret-box-keys.js';
import * as suppressionKeyCheck from './migrations/2026-11-29T0200-suppression-key-check.js';
import * as signupScreening from './migrations/2026-11-29T0300-signup-screening.js';
import * as heldSignups from './migrations/2026-11-29T0400-held-signups.js';
import * as records from './migrations/2026-11-29T0500-records.js';
import * as webhooks from './migrations/2026-11-29T0600-webhooks.js';
import * as adminRoles from './migrations/2026-11-29T0700-admin-roles.js';
import * as apiKeys from './migrations/2026-11-29T0800-api-keys.js';
import * as offeringLists from './migrations/2026-11-29T0900-offering-lists.js';
import * as spentByExpiry from './migrations/2026-11-29T1000-spent-challenges-by-expiry.js';
import * as plannedSignupInsert from './migrations/2026-11-29T1100-planned-signup-insert.js';
import * as rollupFoldedAfterSignups from './migrations/2026-11-29T1200-rollup-folded-after-signups.js';

/** Every migration, by name; names sort in the order they must run. */
export const MIGRATIONS: Record<string, Migration> = {
  '2026-11-22T0600-create-waitlist': createWaitlist,
  '2026-11-22T0700-create-admin-auth': createAdminAuth,
  '2026-11-23T1000-add-mfa': addMfa,
  '2026-11-23T1100-session-activity': sessionActivity,
  '2026-11-23T1300-create-mail-outbox': createMailOutbox,
  '2026-11-24T0900-consent': consent,
  '2026-11-24T1000-unlogged-rate-limits': unloggedRateLimits,
  '2026-11-25T0900-attribution': attribution,
  '2026-11-25T2000-email-trigram-index': emailTrigramIndex,
  '2026-11-27T0700-email-domain-index': emailDomainIndex,
  '2026-11-27T0900-waitlist-rollup': waitlistRollup,
  '2026-11-27T2000-export-downloads': exportDownloads,
  '2026-11-28T0900-outbox-lease-token': outboxLeaseToken,
  '2026-11-28T0910-mfa-failures': mfaFailures,
  '2026-11-28T0920-secret-box-keys': secretBoxKeys,
  '2026-11-29T0200-suppression-key-check': suppressionKeyCheck,
  '2026-11-29T0300-signup-screening': signupScreening,
  '2026-11-29T0400-held-signups': heldSignups,
  '2026-11-29T0500-records': records,
  '2026-11-29T0600-webhooks': webhooks,
  '2026-11-29T0700-admin-roles': adminRoles,
  '2026-11-29T0800-api-keys': apiKeys,
  '2026-11-29T0900-offering-lists': offeringLists,
  '2026-11-29T1000-spent-challenges-by-expiry': spentByExpiry,
  '2026-11-29T1100-planned-signup-insert': plannedSignupInsert,
  '2026-11-29T1200-rollup-folded-after-signups': rollupFoldedAfterSignups,
};

/** How long a starting instance waits for another one that is migrating the same SQLite file. */
const SQLITE_MIGRATION_WAIT_MS = 60_000;

async function runMigrator(db: Kysely<any>, migrations: Record<string, Migration>): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrations };
  const migrator = new Migrator({ db, provider, migrationTableName: 'app_migrations', migrationLockTableName: 'app_migrations_lock' });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const cause = error instanceof Error ? error.message : String(error ?? '');
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${cause}`.replace(/\s+/g, ' ').trim());
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Applies every pending migration, all or nothing, and safely when several instances start at once.
 * PostgreSQL: Kysely takes an advisory lock and runs the batch in one transaction.
 * SQLite: Kysely does neither, so the whole batch runs inside BEGIN IMMEDIATE, which holds the
 * database's write lock (other processes wait) and rolls every DDL statement back on failure.
 */
export async function migrateToLatest(db: Kysely<any>, migrations: Record<string, Migration> = MIGRATIONS): Promise<string[]> {
  const sqlite = rawSqliteOf(db);
  if (!sqlite) return runMigrator(db, migrations);

  const previousTimeout = sqlite.pragma('busy_timeout', { simple: true }) as number;
  sqlite.pragma(`busy_timeout = ${SQLITE_MIGRATION_WAIT_MS}`);
  try {
    sqlite.exec('BEGIN IMMEDIATE');
  } finally {
    sqlite.pragma(`busy_timeout = ${previousTimeout}`);
  }
  // Defensive mode off for the batch only: a migration may widen a CHECK by editing the schema
  // table in place (SQLite's documented procedure; migration 2026-11-29T0400).
  sqlite.unsafeMode(true);
  try {
    const applied = await runMigrator(db, migrations);
    sqlite.exec('COMMIT');
    return applied;
  } catch (err) {
    if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
    throw err;
  } finally {
    sqlite.unsafeMode(false);
  }
}
