import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// Interest lists per offering (issue 31, decision 063): the portal's waitlist stays list 0; offering
// lists ("testing the waters", 17 CFR 227.206) are rows of `lists`, and their entries live in the
// same `waitlist` table under their own list_id, so every e-mail, link, record and admin action
// works on them as it does on the portal's entries.
//
// - `waitlist.list_id` (NOT NULL DEFAULT 0) and `waitlist.intended_amount` (a band key, null):
//   adding a column with a constant default rewrites no row on either database.
// - Every index of the table is rebuilt with list_id first, under its own name: the portal's
//   queries (`list_id = 0`) read the same ranges as before, an offering list's read only its own.
//   The address is unique per list: (list_id, lower(email)). PostgreSQL's trigram index stays as it
//   was (a GIN index cannot lead with an integer without btree_gin); a search's matches are
//   filtered by list_id. At 1,000,000 entries the rebuild takes seconds, once, at start.
// - PostgreSQL's rollup (migration 2026-11-27T0900) gains list_id, and its functions key on it.
const INDEXES = (pg: boolean) => [
  'CREATE UNIQUE INDEX waitlist_email_lower_key ON waitlist (list_id, lower(email))',
  'CREATE INDEX waitlist_created_at_id_idx ON waitlist (list_id, created_at DESC, id DESC)',
  'CREATE INDEX waitlist_country_created_idx ON waitlist (list_id, country, created_at DESC, id DESC)',
  'CREATE INDEX waitlist_source_created_idx ON waitlist (list_id, source, created_at DESC, id DESC)',
  'CREATE INDEX waitlist_campaign_created_idx ON waitlist (list_id, utm_campaign, created_at DESC, id DESC)',
  'CREATE INDEX waitlist_status_created_idx ON waitlist (list_id, status, created_at DESC, id DESC)',
  pg
    ? "CREATE INDEX waitlist_email_domain_idx ON waitlist (list_id, (CASE WHEN strpos(email, '@') > 0 THEN reverse(split_part(reverse(lower(email)), '@', 1)) END), created_at DESC, id DESC) INCLUDE (email)"
    : "CREATE INDEX waitlist_email_domain_idx ON waitlist (list_id, (substr(lower(email), nullif(length(rtrim(lower(email), replace(lower(email), '@', ''))), 0) + 1)), created_at DESC, id DESC)",
  // The insight panel's sums by band of an offering list (portal entries have none).
  'CREATE INDEX waitlist_list_amount_idx ON waitlist (list_id, intended_amount) WHERE intended_amount IS NOT NULL',
];
const INDEX_NAMES = ['waitlist_email_lower_key', 'waitlist_created_at_id_idx', 'waitlist_country_created_idx', 'waitlist_source_created_idx', 'waitlist_campaign_created_idx', 'waitlist_status_created_idx', 'waitlist_email_domain_idx'];

export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  await sql`CREATE TABLE lists (
    id integer PRIMARY KEY,
    slug text NOT NULL UNIQUE,
    kind text NOT NULL CHECK (kind IN ('portal', 'testing-the-waters')),
    state text NOT NULL CHECK (state IN ('draft', 'open', 'closed')),
    name text NOT NULL,
    description text NOT NULL,
    amount_bands text,
    created_at ${sql.raw(pg ? 'timestamptz' : 'text')} NOT NULL,
    updated_at ${sql.raw(pg ? 'timestamptz' : 'text')} NOT NULL
  )`.execute(db);
  const now = new Date().toISOString();
  await sql`INSERT INTO lists (id, slug, kind, state, name, description, amount_bands, created_at, updated_at)
    VALUES (0, 'portal', 'portal', 'open', '', '', NULL, ${now}, ${now})`.execute(db);
  if (pg) await sql`LOCK TABLE waitlist IN SHARE MODE`.execute(db);
  await sql`ALTER TABLE waitlist ADD COLUMN list_id integer NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE waitlist ADD COLUMN intended_amount text`.execute(db);
  for (const name of INDEX_NAMES) await sql`DROP INDEX IF EXISTS ${sql.raw(name)}`.execute(db);
  for (const statement of INDEXES(pg)) await sql.raw(statement).execute(db);
  if (pg) await rollupByList(db);
}

/** The rollup's rows and functions keyed by list too (the 2026-11-27T0900 functions, with list_id); exported for its test. */
export async function rollupByList(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE waitlist_rollup ADD COLUMN list_id integer NOT NULL DEFAULT 0`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION waitlist_rollup_list_keys(list_id integer, created_at timestamptz, status text, country text, source text, campaign text, confirmed_at timestamptz)
    RETURNS TABLE (list_id integer, day date, dim smallint, value text) LANGUAGE sql IMMUTABLE AS $$
      SELECT list_id, (created_at AT TIME ZONE 'UTC')::date, k.dim, k.value
      FROM (VALUES (1::smallint, status), (2::smallint, country), (3::smallint, source), (4::smallint, campaign),
                   (5::smallint, CASE WHEN confirmed_at IS NOT NULL THEN '' END)) AS k (dim, value)
      WHERE k.dim <> 5 OR k.value IS NOT NULL
    $$`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION waitlist_rollup_fold(days date[]) RETURNS void LANGUAGE sql AS $$
      WITH folded AS (
        DELETE FROM waitlist_rollup
        WHERE id IN (SELECT r.id FROM waitlist_rollup r WHERE r.day = ANY (days) FOR UPDATE SKIP LOCKED)
        RETURNING list_id, day, dim, value, n
      )
      INSERT INTO waitlist_rollup (list_id, day, dim, value, n)
      SELECT list_id, day, dim, value, sum(n) FROM folded GROUP BY list_id, day, dim, value HAVING sum(n) <> 0
    $$`.execute(db);
  const trigger = (name: string, body: string) =>
    sql`
      CREATE OR REPLACE FUNCTION ${sql.raw(name)}() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        days date[];
      BEGIN
        WITH deltas AS (${sql.raw(body)}),
        added AS (
          INSERT INTO waitlist_rollup (list_id, day, dim, value, n)
          SELECT list_id, day, dim, value, sum(s) FROM deltas GROUP BY list_id, day, dim, value HAVING sum(s) <> 0
          RETURNING day
        )
        SELECT array_agg(DISTINCT day) INTO days FROM added;
        PERFORM waitlist_rollup_added(days);
        RETURN NULL;
      END
      $$`.execute(db);
  const keys = (table: string, sign: string) =>
    `SELECT k.list_id, k.day, k.dim, k.value, ${sign}1 AS s FROM ${table} w, LATERAL waitlist_rollup_list_keys(w.list_id, w.created_at, w.status, w.country, w.source, w.utm_campaign, w.confirmed_at) k`;
  await trigger('waitlist_rollup_inserted', keys('waitlist_rollup_new', '+'));
  await trigger('waitlist_rollup_deleted', keys('waitlist_rollup_old', '-'));
  await trigger('waitlist_rollup_updated', `${keys('waitlist_rollup_new', '+')} UNION ALL ${keys('waitlist_rollup_old', '-')}`);
  await sql`DROP FUNCTION waitlist_rollup_keys(timestamptz, text, text, text, text, timestamptz)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('2026-11-29T0900-offering-lists cannot be undone: restore the backup taken before it');
}
