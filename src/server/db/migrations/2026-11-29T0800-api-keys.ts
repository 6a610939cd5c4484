import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// API keys (issue 32 point 2): one row per key of the versioned API (/api/v1). Only the SHA-256 of
// the key is kept (token_hash), with its first characters for people to tell keys apart
// (token_prefix); its scopes (comma-separated), optional expiry and revocation, and when it was last
// used (written at most once a minute per key and instance, not on every request).
// Export downloads may now be made by a key instead of an admin's session: user_id and session_id
// become optional and api_key_id names the key (exactly one of the two owners, by a check). SQLite
// cannot drop a NOT NULL, so there the table (a day of rows at most) is rebuilt with its rows.
export async function up(db: Kysely<any>): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = isPostgres ? 'uuid' : 'text';
  const ts = isPostgres ? 'timestamptz' : 'text';
  await db.schema
    .createTable('api_keys')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('token_prefix', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('rate_limit', 'integer', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('created_by', id, (c) => c.references('admin_users.id').onDelete('set null'))
    .addColumn('expires_at', ts)
    .addColumn('revoked_at', ts)
    .addColumn('last_used_at', ts)
    .execute();
  await sql`CREATE INDEX api_keys_created_at_idx ON api_keys (created_at DESC, id DESC)`.execute(db);

  const owner = sql`CHECK ((api_key_id IS NULL) <> (user_id IS NULL) AND (user_id IS NULL) = (session_id IS NULL))`;
  if (isPostgres) {
    await sql`ALTER TABLE export_downloads ALTER COLUMN user_id DROP NOT NULL, ALTER COLUMN session_id DROP NOT NULL,
      ADD COLUMN api_key_id uuid REFERENCES api_keys (id) ON DELETE CASCADE,
      ADD CONSTRAINT export_downloads_owner_check ${owner}`.execute(db);
    return;
  }
  await db.schema
    .createTable('export_downloads_next')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('ticket_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.references('admin_users.id').onDelete('cascade'))
    .addColumn('session_id', 'text')
    .addColumn('api_key_id', 'text', (c) => c.references('api_keys.id').onDelete('cascade'))
    .addColumn('request', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('ready').check(sql`status IN ('ready', 'running', 'done', 'failed')`))
    .addColumn('rows', 'integer')
    .addColumn('message', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('heartbeat_at', 'text')
    .addColumn('finished_at', 'text')
    .addCheckConstraint('export_downloads_owner_check', sql`(api_key_id IS NULL) <> (user_id IS NULL) AND (user_id IS NULL) = (session_id IS NULL)`)
    .execute();
  await sql`INSERT INTO export_downloads_next (id, ticket_hash, user_id, session_id, request, status, rows, message, created_at, expires_at, heartbeat_at, finished_at)
    SELECT id, ticket_hash, user_id, session_id, request, status, rows, message, created_at, expires_at, heartbeat_at, finished_at FROM export_downloads`.execute(db);
  await db.schema.dropTable('export_downloads').execute();
  await sql`ALTER TABLE export_downloads_next RENAME TO export_downloads`.execute(db);
  await sql`CREATE INDEX export_downloads_created_at_idx ON export_downloads (created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('export_downloads').where('api_key_id', 'is not', null).execute();
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  if (isPostgres) {
    await sql`ALTER TABLE export_downloads DROP CONSTRAINT export_downloads_owner_check, DROP COLUMN api_key_id,
      ALTER COLUMN user_id SET NOT NULL, ALTER COLUMN session_id SET NOT NULL`.execute(db);
  } else {
    await db.schema
      .createTable('export_downloads_prev')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('ticket_hash', 'text', (c) => c.notNull().unique())
      .addColumn('user_id', 'text', (c) => c.notNull().references('admin_users.id').onDelete('cascade'))
      .addColumn('session_id', 'text', (c) => c.notNull())
      .addColumn('request', 'text')
      .addColumn('status', 'text', (c) => c.notNull().defaultTo('ready').check(sql`status IN ('ready', 'running', 'done', 'failed')`))
      .addColumn('rows', 'integer')
      .addColumn('message', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('heartbeat_at', 'text')
      .addColumn('finished_at', 'text')
      .execute();
    await sql`INSERT INTO export_downloads_prev SELECT id, ticket_hash, user_id, session_id, request, status, rows, message, created_at, expires_at, heartbeat_at, finished_at FROM export_downloads`.execute(db);
    await db.schema.dropTable('export_downloads').execute();
    await sql`ALTER TABLE export_downloads_prev RENAME TO export_downloads`.execute(db);
    await sql`CREATE INDEX export_downloads_created_at_idx ON export_downloads (created_at)`.execute(db);
  }
  await db.schema.dropTable('api_keys').execute();
}
