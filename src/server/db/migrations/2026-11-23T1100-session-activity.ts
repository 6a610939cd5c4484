import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// When each admin session was last really used (sign-in, admin API call, PUT /user), for the
// inactivity timeout. `updated_at` keeps meaning "last sign-in or refresh": a background refresh
// by auth-js is not activity.
export async function up(db: Kysely<any>): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = isPostgres ? 'timestamptz' : 'text';
  await db.schema.alterTable('admin_sessions').addColumn('last_active_at', ts).execute();
  // Sessions that exist already count as active at their last sign-in or refresh.
  await sql`UPDATE admin_sessions SET last_active_at = updated_at WHERE last_active_at IS NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('admin_sessions').dropColumn('last_active_at').execute();
}
