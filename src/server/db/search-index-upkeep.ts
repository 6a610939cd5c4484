import { sql, type Kysely } from 'kysely';
import { createPassRunner, type PassRunner } from '../runtime/pass-runner.js';
import { isPostgres } from './database.js';
import type { Database } from './schema.js';

/** How often the search index's pending list is moved into the index, ms. */
export const SEARCH_INDEX_UPKEEP_MS = 1000;

export interface SearchIndexUpkeepLog {
  error(obj: object, msg: string): void;
  warn(msg: string): void;
}

/**
 * PostgreSQL: moves the admin search's trigram index (waitlist_email_trgm_idx, migration
 * 2026-11-25T2000) pending list into the index once a second, in a statement of its own (decision 075).
 *
 * A GIN index with `fastupdate` (the default) adds new entries to a pending list, cheaply; the
 * insert that takes the list past `gin_pending_list_limit` (4 MB) moves the whole list into the
 * index itself, inside its statement. At a steady 1,000 signups/s that was one batch every ~6.2 s
 * held for 60-140 ms, and the answers queued behind it. Emptied here every second, the list stays
 * far below the limit at such rates (~650 kB a second at 1,000 signups/s), and inserts go on adding
 * to it while a cleanup runs. Searches read the list as well as the index: their results do not
 * depend on when it is emptied.
 *
 * Only the index's owner may empty its list (`gin_clean_pending_list`), and not on a standby:
 * without the extension (no index), on a standby or under another role, a pass does nothing and
 * the inserts empty the list as before; another role is warned of once.
 */
export function createSearchIndexUpkeep(db: Kysely<Database>, log: SearchIndexUpkeepLog): PassRunner {
  let warned = false;
  const pass = async () => {
    const { rows } = await sql<{ pages: string | null; owner: boolean }>`
      SELECT CASE WHEN pg_has_role(c.relowner, 'USAGE') AND NOT pg_is_in_recovery() THEN gin_clean_pending_list(c.oid) END::text AS pages,
             pg_has_role(c.relowner, 'USAGE') AS owner
      FROM pg_class c WHERE c.oid = to_regclass('waitlist_email_trgm_idx')`.execute(db);
    const row = rows[0];
    if (row && !row.owner && !warned) {
      warned = true;
      log.warn("db: this database role does not own the search index waitlist_email_trgm_idx, so signups' inserts empty its pending list (decision 075); run the server as the role that ran the migrations");
    }
    return Number(row?.pages ?? 0);
  };
  return createPassRunner({ pass, batchSize: Number.POSITIVE_INFINITY, pollIntervalMs: SEARCH_INDEX_UPKEEP_MS, log, failure: 'db: search index upkeep failed' });
}

/** Starts the upkeep on PostgreSQL (SQLite has no such index); `stop` before the database closes. */
export function startSearchIndexUpkeep(db: Kysely<Database>, log: SearchIndexUpkeepLog): PassRunner | null {
  if (!isPostgres(db)) return null;
  const upkeep = createSearchIndexUpkeep(db, log);
  upkeep.start();
  return upkeep;
}
