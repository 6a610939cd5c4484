import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// TOTP multi-factor authentication (GoTrue's mfa_factors / mfa_challenges), and the assurance level
// of each session: `aal`, the factor that raised it, and the methods used after the password (`amr`).
export async function up(db: Kysely<any>): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = isPostgres ? 'uuid' : 'text';
  const ts = isPostgres ? 'timestamptz' : 'text';

  await db.schema
    .createTable('admin_mfa_factors')
    .ifNotExists()
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('user_id', id, (c) => c.notNull().references('admin_users.id').onDelete('cascade'))
    .addColumn('friendly_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('factor_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    // Sealed with the secret box (context `totp:<factor id>`), never plain text.
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('last_challenged_at', ts)
    // The newest TOTP time step accepted, so a code is used at most once (ASVS 2.8.4).
    .addColumn('last_verified_step', 'bigint')
    .execute();
  await sql`CREATE UNIQUE INDEX IF NOT EXISTS admin_mfa_factors_user_name_idx ON admin_mfa_factors (user_id, friendly_name)`.execute(db);

  await db.schema
    .createTable('admin_mfa_challenges')
    .ifNotExists()
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('factor_id', id, (c) => c.notNull().references('admin_mfa_factors.id').onDelete('cascade'))
    .addColumn('ip_address', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('verified_at', ts)
    .execute();
  await sql`CREATE INDEX IF NOT EXISTS admin_mfa_challenges_factor_id_idx ON admin_mfa_challenges (factor_id)`.execute(db);

  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  await db.schema.alterTable('admin_sessions').addColumn('aal', 'text', (c) => c.notNull().defaultTo('aal1')).execute();
  await db.schema.alterTable('admin_sessions').addColumn('factor_id', id).execute();
  // JSON list of {method, timestamp} added after the password sign-in (the password entry is created_at).
  await db.schema.alterTable('admin_sessions').addColumn('amr', 'text', (c) => c.notNull().defaultTo('[]')).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['amr', 'factor_id', 'aal']) {
    await db.schema.alterTable('admin_sessions').dropColumn(column).execute();
  }
  await db.schema.dropTable('admin_mfa_challenges').ifExists().execute();
  await db.schema.dropTable('admin_mfa_factors').ifExists().execute();
}
