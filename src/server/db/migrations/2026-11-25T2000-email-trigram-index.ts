import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// The admin's search (issue 10) on PostgreSQL: `lower(email) LIKE '%text%'` (or '%@domain') cannot
// use a B-tree, so every search count read the whole table (a parallel scan: about 0.15 s and three
// processes at 1,000,000 entries). A trigram GIN index (pg_trgm, part of PostgreSQL's contrib and a
// "trusted" extension since version 13, so the database's owner may create it) answers it from the
// index: a rare address in a millisecond, a large domain in about half the time on one process.
// Where pg_trgm is not installed or may not be created, the index is skipped and the search works
// as before. SQLite has no such index; its search scans the small lower(email) index instead.
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  const available = await sql<{ installed: string | null }>`
    SELECT installed_version AS installed FROM pg_available_extensions WHERE name = 'pg_trgm'`.execute(db);
  if (available.rows.length === 0) return;
  if (available.rows[0]!.installed === null) {
    // The migration runs in a transaction: a refused CREATE EXTENSION must not abort it.
    await sql`SAVEPOINT pg_trgm_extension`.execute(db);
    try {
      await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`.execute(db);
      await sql`RELEASE SAVEPOINT pg_trgm_extension`.execute(db);
    } catch {
      await sql`ROLLBACK TO SAVEPOINT pg_trgm_extension`.execute(db);
      return;
    }
  }
  // The operator class is looked up where the extension lives (it may be another schema than ours).
  const opclass = await sql<{ schema: string }>`
    SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`.execute(db);
  const schema = opclass.rows[0]?.schema ?? 'public';
  await sql`CREATE INDEX waitlist_email_trgm_idx ON waitlist USING gin (lower(email) ${sql.id(schema)}.gin_trgm_ops)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  // The extension stays: other objects may use it.
  await sql`DROP INDEX IF EXISTS waitlist_email_trgm_idx`.execute(db);
}
