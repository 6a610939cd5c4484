import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// Export downloads (issue 10): the admin page asks for an export with its access token, gets a
// one-time ticket, and lets the browser download the file itself with a plain form POST of that
// ticket (no JavaScript reads the bytes). A row per download: who asked and for what, until the
// ticket is used (the request is cleared then), then how it went, which the page polls for its
// toast; while it runs, heartbeat_at shows the server is still sending it. Only the ticket's SHA-256
// is kept, so a dump of the table cannot start a download. An unused ticket's request is cleared
// when it expires, and rows live a day at most (a sweep every minute).
export async function up(db: Kysely<any>): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = isPostgres ? 'uuid' : 'text';
  const ts = isPostgres ? 'timestamptz' : 'text';
  await db.schema
    .createTable('export_downloads')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('ticket_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', id, (c) => c.notNull().references('admin_users.id').onDelete('cascade'))
    .addColumn('session_id', id, (c) => c.notNull())
    .addColumn('request', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('ready').check(sql`status IN ('ready', 'running', 'done', 'failed')`))
    .addColumn('rows', 'integer')
    .addColumn('message', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('heartbeat_at', ts)
    .addColumn('finished_at', ts)
    .execute();
  await sql`CREATE INDEX export_downloads_created_at_idx ON export_downloads (created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('export_downloads').ifExists().execute();
}
