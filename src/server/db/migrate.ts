import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import * as createWaitlist from './migrations/2026-11-22T0600-create-waitlist.js';

/** Every migration, by name; names sort in the order they must run. */
const migrations: Record<string, Migration> = {
  '2026-11-22T0600-create-waitlist': createWaitlist,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider, migrationTableName: 'app_migrations', migrationLockTableName: 'app_migrations_lock' });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const cause = error instanceof Error ? error.message : String(error ?? '');
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${cause}`.trim());
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
