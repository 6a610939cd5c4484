import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// Rate-limit counters (issue 11): on PostgreSQL every signup upserts its client's counter, and on a
// durable table that is a second WAL flush per signup, beside the signup's own commit. The table
// becomes UNLOGGED: its writes skip the WAL, so a commit that only touched it does not wait for a
// flush. The price: PostgreSQL empties an unlogged table after a crash (not after a clean
// shutdown) and does not replicate it, so after a crash or a failover every window starts afresh.
// A limit that restarts once in a while is harmless; the signups themselves stay fully durable.
// SQLite has no such tables (its signups count in memory; sign-in attempts stay as they are).
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`ALTER TABLE auth_rate_limits SET UNLOGGED`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`ALTER TABLE auth_rate_limits SET LOGGED`.execute(db);
}
