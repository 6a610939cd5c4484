import { sql, type Kysely } from 'kysely';
import { createPassRunner, type PassRunner } from '../runtime/pass-runner.js';
import { isPostgres } from './database.js';
import type { Database } from './schema.js';

/** How often the search index's pending list is moved into the index, ms. */
export const SEARCH_INDEX_UPKEEP_MS = 1000;

/**
 * PostgreSQL: moves the admin search's trigram index (waitlist_email_trgm_idx, migration
 * 2026-11-25T2000) pending list into the index once a second, in a statement of its own (decision 075).
 *
 * A GIN index with `fastupdate` (the default) adds new entries to a pending list, cheaply; the
 * insert that takes the list past `gin_pending_list_limit` (4 MB) moves the whole list into the
 * index itself, inside its statement. At a steady 1,000 signups/s that was one batch every ~6.2 s,
 * held 60-140 ms: the answers over 50 ms of `npm run bench:signup`. Emptied here every second, the
 * list never reaches the limit below some 6,000 signups a second, and an insert never waits for it
 * (entries keep going to the list while a cleanup runs). Searches read the list as well as the index:
 * their results do not depend on when it is emptied.
 *
 * Only the index's owner may empty its list (`gin_clean_pending_list`): without the extension (no
 * index) or under another role, a pass does nothing, and the inserts empty the list as before.
 */
export function createSearchIndexUpkeep(db: Kysely<Database>, log: { error(obj: object, msg: string): void }): PassRunner {
  const pass = async () => {
    const { rows } = await sql<{ pages: string }>`
      SELECT gin_clean_pending_list(c.oid)::text AS pages FROM pg_class c
      WHERE c.oid = to_regclass('waitlist_email_trgm_idx') AND pg_has_role(c.relowner, 'USAGE')`.execute(db);
    return Number(rows[0]?.pages ?? 0);
  };
  return createPassRunner({ pass, batchSize: Number.POSITIVE_INFINITY, pollIntervalMs: SEARCH_INDEX_UPKEEP_MS, log, failure: 'db: search index upkeep failed' });
}

/** Starts the upkeep on PostgreSQL (SQLite has no such index); `stop` before the database closes. */
export function startSearchIndexUpkeep(db: Kysely<Database>, log: { error(obj: object, msg: string): void }): PassRunner | null {
  if (!isPostgres(db)) return null;
  const upkeep = createSearchIndexUpkeep(db, log);
  upkeep.start();
  return upkeep;
}
