import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { createPassRunner, type PassRunner } from '../runtime/pass-runner.js';

/** How often the rollup's recent days are folded, ms. */
export const ROLLUP_FOLD_MS = 1000;

/**
 * PostgreSQL: folds the rollup's (waitlist_rollup) rows of today and yesterday (UTC) into one per
 * group, once a second, in a transaction of its own. The signups' batch inserts leave their deltas
 * unfolded (decision 074: a fold inside a signup's statement held that batch's answers for 5-60
 * ms); every other writer still folds as it writes. A pass that finds no write since the last one
 * (the triggers' statement counter unchanged) does nothing else. Several instances may fold at
 * once: a fold skips the rows another one holds (waitlist_rollup_fold, SKIP LOCKED). Folding
 * changes no sum, so a pass missed (a crash, a failed pass) only leaves the readers a few more rows
 * to add up.
 */
export function createRollupFolder(db: Kysely<Database>, log: { error(obj: object, msg: string): void }): PassRunner {
  // The triggers' statement counter: every write to the waitlist advances it, a fold does not (a
  // fold writes new rows of its own, so the table's highest id would make instances refold each other).
  const writes = async () => (await sql<{ n: string }>`SELECT last_value::text AS n FROM waitlist_rollup_statements`.execute(db)).rows[0]?.n ?? null;
  /** The counter as read before the last fold. */
  let folded: string | null = null;
  const pass = async () => {
    const n = await writes();
    if (n === folded) return 0;
    await sql`SELECT waitlist_rollup_fold(ARRAY[d, d - 1]) FROM (SELECT (now() AT TIME ZONE 'UTC')::date AS d) AS today`.execute(db);
    folded = n;
    return 1;
  };
  return createPassRunner({ pass, batchSize: Number.POSITIVE_INFINITY, pollIntervalMs: ROLLUP_FOLD_MS, log, failure: 'insights: rollup fold failed' });
}

/** Starts the folder on PostgreSQL (SQLite has no rollup); it stops before the database closes. */
export function registerRollupFolder(app: FastifyInstance): void {
  if (!isPostgres(app.database.db)) return;
  const folder = createRollupFolder(app.database.db, app.log);
  folder.start();
  app.addHook('preClose', async () => folder.stop());
}
