import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// PostgreSQL: the group commit's insert (signup/repository.ts) becomes a function whose plan each
// connection keeps (decision 073). Sent as text, the statement was parsed and planned again at
// every batch: for an insert into a table of ten indexes, a statement trigger and ON CONFLICT, some
// 220 µs of a backend's CPU per statement (pgbench at 570/s, one row each: 740 µs against 520),
// which at a steady 1,000 signups/s is a batch of one or two. PL/pgSQL keeps a statement's plan for
// the session, and `plan_cache_mode = force_generic_plan` on the function makes it one plan for all
// parameters: left to choose, PostgreSQL planned every call afresh (594-670 µs), because the generic
// plan's estimate for unnest() of an array parameter (10 rows) costs more than a custom plan's.
//
// The insert's columns are the entry's fields as of this migration (WAITLIST_ENTRY_FIELDS): a field
// added later needs a migration that replaces the function (tests/server/db/migrations.test.ts
// compares them).
const WAITLIST_COLUMNS = [
  'id', 'email', 'created_at', 'ip_address', 'country', 'city', 'region', 'status', 'consent_version',
  'confirmation_sent_at', 'confirmed_at', 'confirmed_ip', 'invited_at', 'unsubscribed_at', 'utm_source',
  'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'referrer', 'landing_path', 'source',
  'consent_record', 'held_reason',
];

export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  const columns = WAITLIST_COLUMNS.map((c) => `"${c}"`).join(', ');
  const fromRows = WAITLIST_COLUMNS.map((c) => `r."${c}"`).join(', ');
  // The batch's new, unsuppressed rows (ids, hashes: each row's suppression hash by id), inserted
  // in the order given; returns the ids inserted.
  await sql`
    CREATE FUNCTION waitlist_insert_batch(rows json, ids uuid[], hashes text[]) RETURNS SETOF uuid
    LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
    BEGIN
      RETURN QUERY
      INSERT INTO waitlist (${sql.raw(columns)})
      SELECT ${sql.raw(fromRows)}
      FROM json_populate_recordset(NULL::waitlist, rows) AS r
      WHERE r.id <> ALL (
        SELECT h.id FROM unnest(ids, hashes) AS h(id, email_hash)
        JOIN waitlist_suppressions s ON s.email_hash = h.email_hash
      )
      ON CONFLICT DO NOTHING
      RETURNING waitlist.id;
    END
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`DROP FUNCTION IF EXISTS waitlist_insert_batch(json, uuid[], text[])`.execute(db);
}
