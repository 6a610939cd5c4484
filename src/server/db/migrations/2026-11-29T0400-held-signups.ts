import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// Bots held (issue 28, point 4; decision 053): a signup without a valid proof-of-work solution is
// stored with the status `held` and the reason in `held_reason`, until an admin approves or rejects
// it; the challenges already used are remembered until they expire, in a table every instance sees.
//
// The status CHECK gains 'held'. PostgreSQL replaces the constraint (one scan of the table under the
// migration's lock). SQLite cannot alter a constraint; widening a CHECK changes nothing on disk,
// which is the case SQLite's documentation ("Making Other Kinds Of Table Schema Changes") allows to
// be done by editing the table's SQL text in place under writable_schema, with schema_version
// bumped: instant at any size, where the 12-step rebuild would copy every row and index. migrate.ts
// turns better-sqlite3's defensive mode off for the migrations' transaction so this is allowed.
const OLD_CHECK = "status IN ('pending', 'joined', 'confirmed', 'invited', 'unsubscribed')";
const NEW_CHECK = "status IN ('pending', 'joined', 'confirmed', 'invited', 'unsubscribed', 'held')";

export async function up(db: Kysely<any>): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.alterTable('waitlist').addColumn('held_reason', 'text').execute();
  if (isPostgres) {
    await sql`ALTER TABLE waitlist DROP CONSTRAINT waitlist_status_check, ADD CONSTRAINT waitlist_status_check CHECK (${sql.raw(NEW_CHECK)})`.execute(db);
    // Written once per signup with the challenge on, read only to refuse a replay: its writes skip
    // the WAL (a crash empties it, letting the challenges of the last few minutes be used again).
    await sql`CREATE UNLOGGED TABLE signup_challenges_spent (signature text PRIMARY KEY, expires_at bigint NOT NULL)`.execute(db);
  } else {
    await rewriteSqliteStatusCheck(db, OLD_CHECK, NEW_CHECK);
    await db.schema
      .createTable('signup_challenges_spent')
      .addColumn('signature', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'integer', (c) => c.notNull())
      .execute();
  }
  await sql`CREATE INDEX signup_challenges_spent_expires_idx ON signup_challenges_spent (expires_at)`.execute(db);
}

/** The waitlist table's SQL text with the status CHECK `from` replaced by `to`, in place (see above). */
async function rewriteSqliteStatusCheck(db: Kysely<any>, from: string, to: string): Promise<void> {
  const table = await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'waitlist'`.execute(db);
  const text = table.rows[0]?.sql ?? '';
  if (!text.includes(from)) throw new Error(`waitlist: the status CHECK is not ${from}`);
  const version = await sql<{ schema_version: number }>`PRAGMA schema_version`.execute(db);
  await sql`PRAGMA writable_schema = ON`.execute(db);
  try {
    await sql`UPDATE sqlite_master SET sql = ${text.replace(from, to)} WHERE type = 'table' AND name = 'waitlist'`.execute(db);
    await sql.raw(`PRAGMA schema_version = ${Number(version.rows[0]!.schema_version) + 1}`).execute(db);
  } finally {
    await sql`PRAGMA writable_schema = OFF`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.dropTable('signup_challenges_spent').ifExists().execute();
  await db.deleteFrom('waitlist').where('status', '=', 'held').execute();
  if (isPostgres) {
    await sql`ALTER TABLE waitlist DROP CONSTRAINT waitlist_status_check, ADD CONSTRAINT waitlist_status_check CHECK (${sql.raw(OLD_CHECK)})`.execute(db);
  } else {
    await rewriteSqliteStatusCheck(db, NEW_CHECK, OLD_CHECK);
  }
  await db.schema.alterTable('waitlist').dropColumn('held_reason').execute();
}
