import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// PostgreSQL: the signups' batch insert no longer folds the rollup inline (decision 074). Every 64th
// statement on the waitlist folded the days it touched (2026-11-27T0900): deleting the day's rows,
// some 300 groups plus the deltas since the last fold, and writing one per group, inside that
// statement. At a steady 1,000 signups/s that is one batch in 64 (~9 a second), and in
// `npm run bench:signup` those batches were most of the answers over 10 ms (484 of ~33,000 batches
// over 10 ms in 60 s; 28 with no fold at all).
//
// waitlist_insert_batch (2026-11-29T1100) now runs with `waitlist.rollup_fold = 'deferred'`, and a
// deferred statement folds only every 4,096th (a bound on the deltas if no server folds); the
// servers fold today's and yesterday's rows once a second instead, in a transaction of their own
// (insights/rollup-fold.ts). Every other writer (an admin's delete, an import, an update, SQL from
// outside) folds as before.

/** waitlist_rollup_added, folding the days a statement touched every `every`th statement (an SQL expression). */
const foldEvery = (every: string) => sql`
  CREATE OR REPLACE FUNCTION waitlist_rollup_added(days date[]) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    IF days IS NOT NULL AND nextval('waitlist_rollup_statements') % (${sql.raw(every)}) = 0 THEN
      PERFORM waitlist_rollup_fold(days);
    END IF;
  END
  $$`;

export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`ALTER FUNCTION waitlist_insert_batch(json, uuid[], text[]) SET waitlist.rollup_fold = 'deferred'`.execute(db);
  await foldEvery(`CASE WHEN current_setting('waitlist.rollup_fold', true) = 'deferred' THEN 4096 ELSE 64 END`).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`ALTER FUNCTION waitlist_insert_batch(json, uuid[], text[]) RESET waitlist.rollup_fold`.execute(db);
  // As 2026-11-27T0900 wrote it.
  await foldEvery('64').execute(db);
}
