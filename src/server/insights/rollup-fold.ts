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
 * ms); every other writer still folds as it writes. A pass that finds no row added since the last
 * one does nothing but read the highest id. Several instances may fold at once: a fold skips the
 * rows another one holds (waitlist_rollup_fold, SKIP LOCKED). Folding changes no sum, so a pass
 * missed (a crash, a failed pass) only leaves the readers a few more rows to add up.
 */
export function createRollupFolder(db: Kysely<Database>, log: { error(obj: object, msg: string): void }): PassRunner {
  const highestId = async () => (await sql<{ id: string | null }>`SELECT max(id)::text AS id FROM waitlist_rollup`.execute(db)).rows[0]?.id ?? null;
  /** The highest id after the last fold (whose own rows have new ids). */
  let folded: string | null = null;
  const pass = async () => {
    const id = await highestId();
    if (id === null || id === folded) return 0;
    await sql`SELECT waitlist_rollup_fold(ARRAY[d, d - 1]) FROM (SELECT (now() AT TIME ZONE 'UTC')::date AS d) AS today`.execute(db);
    folded = await highestId();
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
