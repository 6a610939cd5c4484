import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// The number of entries on PostgreSQL without reading them (issue 10). The admin's count line
// needs the whole list's count on every first page, and count(*) reads a whole index: 0.15-0.5 s
// at 1,000,000 entries on two cores, more than the rest of the page. SQLite's count of the same
// list takes ~17 ms, so it keeps count(*).
//
// Every statement that inserts or deletes entries adds a row to waitlist_count_delta with the
// number of rows it added (or minus those it removed), from its transition table; the count is
// their sum. Rows are only ever appended, never updated, so concurrent writers (signup batches of
// several instances, an admin deleting 100,000 entries in one transaction) never wait for each
// other on a counter. The sum, read in one snapshot, is exactly count(*) in that snapshot. Every
// 256th delta folds the deltas no other transaction holds into one (SKIP LOCKED: it waits for no
// one), so the table stays a few hundred rows. TRUNCATE (which locks out every writer) empties it.
// pg_dump creates triggers after loading data, so a restored database holds each row once.
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  // Writers of an instance still running the previous version wait until the triggers exist, so
  // no entry falls between the count below and the first delta.
  await sql`LOCK TABLE waitlist IN SHARE MODE`.execute(db);
  await sql`CREATE TABLE waitlist_count_delta (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, n bigint NOT NULL)`.execute(db);
  await sql`INSERT INTO waitlist_count_delta (n) SELECT count(*) FROM waitlist`.execute(db);
  await sql`
    CREATE FUNCTION waitlist_count_add(k bigint) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE
      delta_id bigint;
    BEGIN
      IF k = 0 THEN
        RETURN;
      END IF;
      INSERT INTO waitlist_count_delta (n) VALUES (k) RETURNING id INTO delta_id;
      IF delta_id % 256 = 0 THEN
        WITH folded AS (
          DELETE FROM waitlist_count_delta
          WHERE id IN (SELECT d.id FROM waitlist_count_delta d FOR UPDATE SKIP LOCKED)
          RETURNING n
        )
        INSERT INTO waitlist_count_delta (n) SELECT sum(n) FROM folded HAVING count(*) > 0;
      END IF;
    END
    $$`.execute(db);
  await sql`
    CREATE FUNCTION waitlist_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM waitlist_count_add((SELECT count(*) FROM waitlist_inserted));
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE FUNCTION waitlist_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM waitlist_count_add(-(SELECT count(*) FROM waitlist_deleted));
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE FUNCTION waitlist_count_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM waitlist_count_delta;
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`CREATE TRIGGER waitlist_count_insert AFTER INSERT ON waitlist REFERENCING NEW TABLE AS waitlist_inserted FOR EACH STATEMENT EXECUTE FUNCTION waitlist_count_inserted()`.execute(db);
  await sql`CREATE TRIGGER waitlist_count_delete AFTER DELETE ON waitlist REFERENCING OLD TABLE AS waitlist_deleted FOR EACH STATEMENT EXECUTE FUNCTION waitlist_count_deleted()`.execute(db);
  await sql`CREATE TRIGGER waitlist_count_truncate AFTER TRUNCATE ON waitlist FOR EACH STATEMENT EXECUTE FUNCTION waitlist_count_truncated()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`DROP TRIGGER IF EXISTS waitlist_count_truncate ON waitlist`.execute(db);
  await sql`DROP TRIGGER IF EXISTS waitlist_count_delete ON waitlist`.execute(db);
  await sql`DROP TRIGGER IF EXISTS waitlist_count_insert ON waitlist`.execute(db);
  await sql`DROP FUNCTION IF EXISTS waitlist_count_truncated()`.execute(db);
  await sql`DROP FUNCTION IF EXISTS waitlist_count_deleted()`.execute(db);
  await sql`DROP FUNCTION IF EXISTS waitlist_count_inserted()`.execute(db);
  await sql`DROP FUNCTION IF EXISTS waitlist_count_add(bigint)`.execute(db);
  await sql`DROP TABLE IF EXISTS waitlist_count_delta`.execute(db);
}
