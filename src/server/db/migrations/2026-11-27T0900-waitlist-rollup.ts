import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// The admin's insight panel and whole-list count on PostgreSQL without reading every entry (issue
// 10). Unfiltered (or filtered by dates only), the panel is five GROUP BYs over the whole list: at
// 1,000,000 entries about 1 s of two cores, repeated every few seconds while live signups arrive;
// the count line's count(*), on every first page, took 0.15-0.5 s. SQLite answers the panel from
// its indexes in ~0.5 s and counts in ~17 ms, and keeps doing so.
//
// waitlist_rollup holds, per UTC day of created_at, the number of entries per status (dim 1),
// country (2), source (3), utm_campaign (4), and with confirmed_at set (5, value ''), as rows of
// deltas written by statement triggers from their transition tables: an insert adds its rows'
// groups, a delete subtracts them, an update subtracts the old rows' and adds the new rows' (netting
// to nothing when no counted column changed). The whole list's count is dim 1 summed. Appended,
// never updated, so writers never wait for each other (an admin deleting 100,000 entries in one
// transaction would otherwise hold back every signup batch until it commits); the readers sum a few
// thousand rows at most. Every 64th statement folds the days it touched into one row per group,
// skipping rows another fold holds (SKIP LOCKED). TRUNCATE (which locks out every writer) empties
// it. pg_dump creates triggers after loading data, so a restored database holds each row once.
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  // Writers of an instance still running the previous version wait until the triggers exist, so
  // no entry falls between the first sums below and the first delta.
  await sql`LOCK TABLE waitlist IN SHARE MODE`.execute(db);
  await sql`CREATE TABLE waitlist_rollup (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    day date NOT NULL,
    dim smallint NOT NULL,
    value text,
    n bigint NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX waitlist_rollup_day_idx ON waitlist_rollup (day)`.execute(db);
  await sql`CREATE SEQUENCE waitlist_rollup_statements`.execute(db);
  await sql`
    CREATE FUNCTION waitlist_rollup_keys(created_at timestamptz, status text, country text, source text, campaign text, confirmed_at timestamptz)
    RETURNS TABLE (day date, dim smallint, value text) LANGUAGE sql IMMUTABLE AS $$
      SELECT (created_at AT TIME ZONE 'UTC')::date, k.dim, k.value
      FROM (VALUES (1::smallint, status), (2::smallint, country), (3::smallint, source), (4::smallint, campaign),
                   (5::smallint, CASE WHEN confirmed_at IS NOT NULL THEN '' END)) AS k (dim, value)
      WHERE k.dim <> 5 OR k.value IS NOT NULL
    $$`.execute(db);
  await sql`
    INSERT INTO waitlist_rollup (day, dim, value, n)
    SELECT k.day, k.dim, k.value, count(*)
    FROM waitlist w, LATERAL waitlist_rollup_keys(w.created_at, w.status, w.country, w.source, w.utm_campaign, w.confirmed_at) k
    GROUP BY k.day, k.dim, k.value`.execute(db);
  await sql`
    CREATE FUNCTION waitlist_rollup_fold(days date[]) RETURNS void LANGUAGE sql AS $$
      WITH folded AS (
        DELETE FROM waitlist_rollup
        WHERE id IN (SELECT r.id FROM waitlist_rollup r WHERE r.day = ANY (days) FOR UPDATE SKIP LOCKED)
        RETURNING day, dim, value, n
      )
      INSERT INTO waitlist_rollup (day, dim, value, n)
      SELECT day, dim, value, sum(n) FROM folded GROUP BY day, dim, value HAVING sum(n) <> 0
    $$`.execute(db);
  // Each trigger passes its deltas (grouped, zero sums dropped) here; every 64th statement folds.
  await sql`
    CREATE FUNCTION waitlist_rollup_added(days date[]) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      IF days IS NOT NULL AND nextval('waitlist_rollup_statements') % 64 = 0 THEN
        PERFORM waitlist_rollup_fold(days);
      END IF;
    END
    $$`.execute(db);
  const trigger = (name: string, body: string) =>
    sql`
      CREATE FUNCTION ${sql.raw(name)}() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        days date[];
      BEGIN
        WITH deltas AS (${sql.raw(body)}),
        added AS (
          INSERT INTO waitlist_rollup (day, dim, value, n)
          SELECT day, dim, value, sum(s) FROM deltas GROUP BY day, dim, value HAVING sum(s) <> 0
          RETURNING day
        )
        SELECT array_agg(DISTINCT day) INTO days FROM added;
        PERFORM waitlist_rollup_added(days);
        RETURN NULL;
      END
      $$`.execute(db);
  const keys = (table: string, sign: string) =>
    `SELECT k.day, k.dim, k.value, ${sign}1 AS s FROM ${table} w, LATERAL waitlist_rollup_keys(w.created_at, w.status, w.country, w.source, w.utm_campaign, w.confirmed_at) k`;
  await trigger('waitlist_rollup_inserted', keys('waitlist_rollup_new', '+'));
  await trigger('waitlist_rollup_deleted', keys('waitlist_rollup_old', '-'));
  await trigger('waitlist_rollup_updated', `${keys('waitlist_rollup_new', '+')} UNION ALL ${keys('waitlist_rollup_old', '-')}`);
  await sql`
    CREATE FUNCTION waitlist_rollup_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM waitlist_rollup;
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`CREATE TRIGGER waitlist_rollup_insert AFTER INSERT ON waitlist REFERENCING NEW TABLE AS waitlist_rollup_new FOR EACH STATEMENT EXECUTE FUNCTION waitlist_rollup_inserted()`.execute(db);
  await sql`CREATE TRIGGER waitlist_rollup_delete AFTER DELETE ON waitlist REFERENCING OLD TABLE AS waitlist_rollup_old FOR EACH STATEMENT EXECUTE FUNCTION waitlist_rollup_deleted()`.execute(db);
  await sql`CREATE TRIGGER waitlist_rollup_update AFTER UPDATE ON waitlist REFERENCING OLD TABLE AS waitlist_rollup_old NEW TABLE AS waitlist_rollup_new FOR EACH STATEMENT EXECUTE FUNCTION waitlist_rollup_updated()`.execute(db);
  await sql`CREATE TRIGGER waitlist_rollup_truncate AFTER TRUNCATE ON waitlist FOR EACH STATEMENT EXECUTE FUNCTION waitlist_rollup_truncated()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const name of ['truncate', 'update', 'delete', 'insert']) await sql`DROP TRIGGER IF EXISTS ${sql.raw(`waitlist_rollup_${name}`)} ON waitlist`.execute(db);
  for (const name of ['truncated()', 'updated()', 'deleted()', 'inserted()', 'added(date[])', 'fold(date[])', 'keys(timestamptz, text, text, text, text, timestamptz)']) {
    await sql`DROP FUNCTION IF EXISTS ${sql.raw(`waitlist_rollup_${name}`)}`.execute(db);
  }
  await sql`DROP SEQUENCE IF EXISTS waitlist_rollup_statements`.execute(db);
  await sql`DROP TABLE IF EXISTS waitlist_rollup`.execute(db);
}
