import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// The table keeps the original product's shape so an existing database can be adopted.
export async function up(db: Kysely<any>): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('waitlist')
    .ifNotExists()
    .addColumn('id', isPostgres ? 'uuid' : 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('created_at', isPostgres ? 'timestamptz' : 'text', (c) => c.notNull())
    .addColumn('ip_address', 'text')
    .addColumn('country', 'text')
    .addColumn('city', 'text')
    .addColumn('region', 'text')
    .execute();
  await sql`CREATE UNIQUE INDEX IF NOT EXISTS waitlist_email_lower_key ON waitlist (lower(email))`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS waitlist_created_at_id_idx ON waitlist (created_at DESC, id DESC)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('waitlist').ifExists().execute();
}
