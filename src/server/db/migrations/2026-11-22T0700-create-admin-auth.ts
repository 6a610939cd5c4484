import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// Admin accounts, their sessions and refresh tokens, the shared JWT signing keys, brute-force
// counters and the audit log. Names avoid Supabase's `auth.users`/`auth.sessions`.
export async function up(db: Kysely<any>): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = isPostgres ? 'uuid' : 'text';
  const ts = isPostgres ? 'timestamptz' : 'text';

  await db.schema
    .createTable('admin_users')
    .ifNotExists()
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('user_metadata', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('last_sign_in_at', ts)
    .execute();

  await db.schema
    .createTable('admin_sessions')
    .ifNotExists()
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('user_id', id, (c) => c.notNull().references('admin_users.id').onDelete('cascade'))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('ip_address', 'text')
    .execute();
  await sql`CREATE INDEX IF NOT EXISTS admin_sessions_user_id_idx ON admin_sessions (user_id)`.execute(db);

  await db.schema
    .createTable('admin_refresh_tokens')
    .ifNotExists()
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('session_id', id, (c) => c.notNull().references('admin_sessions.id').onDelete('cascade'))
    .addColumn('user_id', id, (c) => c.notNull().references('admin_users.id').onDelete('cascade'))
    .addColumn('parent_id', id)
    .addColumn('revoked_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await sql`CREATE INDEX IF NOT EXISTS admin_refresh_tokens_session_id_idx ON admin_refresh_tokens (session_id)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS admin_refresh_tokens_user_id_idx ON admin_refresh_tokens (user_id)`.execute(db);

  await db.schema
    .createTable('auth_signing_keys')
    .ifNotExists()
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('generation', 'integer', (c) => c.notNull().unique())
    .addColumn('algorithm', 'text', (c) => c.notNull())
    .addColumn('private_jwk', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('retired_at', ts)
    .execute();

  await db.schema
    .createTable('auth_rate_limits')
    .ifNotExists()
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('window_start_ms', 'bigint', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .execute();
  await sql`CREATE INDEX IF NOT EXISTS auth_rate_limits_window_idx ON auth_rate_limits (window_start_ms)`.execute(db);

  await db.schema
    .createTable('audit_log')
    .ifNotExists()
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actor_email', 'text')
    .addColumn('actor_id', 'text')
    .addColumn('ip_address', 'text')
    .addColumn('detail', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
  await sql`CREATE INDEX IF NOT EXISTS audit_log_created_at_idx ON audit_log (created_at DESC, id DESC)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['audit_log', 'auth_rate_limits', 'auth_signing_keys', 'admin_refresh_tokens', 'admin_sessions', 'admin_users']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
