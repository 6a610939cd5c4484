import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// The spent proof-of-work solutions (challenge/spent.ts) are keyed by (expires_at, signature), in
// one b-tree (WITHOUT ROWID on SQLite), instead of a random signature key plus an expiry index.
// A solution is now spent in the signup's own group-commit transaction; with a random key each one
// dirtied a page of its own in two indexes, which every commit wrote whole to the WAL (as the
// waitlist's random ids did, decision 068): 20-23 µs of CPU a row against 2-3 µs appended in expiry
// order, in a loop of 50-row commits. The pair is as unique as the signature alone: the signature is
// the HMAC of the challenge, the challenge the SHA-256 of the salt that carries the expiry, so one
// signature has one expiry. Expired rows are deleted by the key's prefix. The rows are copied over.

/** Rebuilds the table with `columns` and primary key `key` (by expiry: one b-tree, WITHOUT ROWID on SQLite), rows copied. */
async function rebuild(db: Kysely<any>, columns: string, key: string, byExpiry: boolean): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const table = isPostgres ? sql.raw('CREATE UNLOGGED TABLE') : sql.raw('CREATE TABLE');
  const suffix = !isPostgres && byExpiry ? sql.raw(' WITHOUT ROWID') : sql.raw('');
  await sql`${table} signup_challenges_spent_next (${sql.raw(columns)}, PRIMARY KEY (${sql.raw(key)}))${suffix}`.execute(db);
  await sql`INSERT INTO signup_challenges_spent_next (signature, expires_at) SELECT signature, expires_at FROM signup_challenges_spent`.execute(db);
  await db.schema.dropTable('signup_challenges_spent').execute();
  await db.schema.alterTable('signup_challenges_spent_next').renameTo('signup_challenges_spent').execute();
  // PostgreSQL keeps the index's name through a table's rename: the key gets the table's usual one.
  if (isPostgres) await sql`ALTER INDEX signup_challenges_spent_next_pkey RENAME TO signup_challenges_spent_pkey`.execute(db);
  if (!byExpiry) await sql`CREATE INDEX signup_challenges_spent_expires_idx ON signup_challenges_spent (expires_at)`.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const expiry = isPostgres ? 'bigint' : 'integer';
  await rebuild(db, `expires_at ${expiry} NOT NULL, signature text NOT NULL`, 'expires_at, signature', true);
}

export async function down(db: Kysely<any>): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const expiry = isPostgres ? 'bigint' : 'integer';
  await rebuild(db, `signature text NOT NULL, expires_at ${expiry} NOT NULL`, 'signature', false);
}
