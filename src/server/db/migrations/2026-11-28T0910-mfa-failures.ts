import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// Wrong second-factor codes (security review, finding 1): one row per wrong or replayed TOTP code,
// so a challenge is used up after 5 of them and an account's verification is refused after 10
// within an hour (until the hour has passed or `npm run admin -- unlock`). Rows older than the hour
// are deleted as new ones come; the challenge id is kept without a foreign key (a challenge may be
// deleted when it expires, its failures still count for the account).
export async function up(db: Kysely<any>): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = isPostgres ? 'uuid' : 'text';
  const ts = isPostgres ? 'timestamptz' : 'text';
  await db.schema
    .createTable('admin_mfa_failures')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('user_id', id, (c) => c.notNull().references('admin_users.id').onDelete('cascade'))
    .addColumn('factor_id', id, (c) => c.notNull())
    .addColumn('challenge_id', id, (c) => c.notNull())
    .addColumn('ip_address', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await sql`CREATE INDEX admin_mfa_failures_user_created_idx ON admin_mfa_failures (user_id, created_at)`.execute(db);
  await sql`CREATE INDEX admin_mfa_failures_challenge_idx ON admin_mfa_failures (challenge_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('admin_mfa_failures').ifExists().execute();
}
