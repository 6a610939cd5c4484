import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { RateLimitStore } from './store.js';

const DAY_MS = 86_400_000;

export interface DatabaseStoreOptions {
  /** Windows that started longer ago than this are pruned now and then; at least the longest window in use. */
  retainMs?: number;
  /** Milliseconds since the epoch; tests may inject a clock. */
  now?: () => number;
}

/**
 * Fixed-window counters in the table auth_rate_limits, so limits hold across every instance sharing
 * the database and survive restarts. One atomic `INSERT … ON CONFLICT DO UPDATE … RETURNING` per
 * hit works the same on SQLite (≥ 3.35) and PostgreSQL; window starts are Unix milliseconds (bigint).
 */
export function databaseStore(db: Kysely<Database>, options: DatabaseStoreOptions = {}): RateLimitStore {
  const now = options.now ?? Date.now;
  const retainMs = Math.max(DAY_MS, options.retainMs ?? 0);

  /** Drops windows older than every limit in use. */
  const prune = async (at: number) => {
    await db.deleteFrom('auth_rate_limits').where('window_start_ms', '<', at - retainMs).execute();
  };

  return {
    kind: 'database',
    async hit(key, limit) {
      const at = now();
      const cutoff = at - limit.windowMs;
      const row = await db
        .insertInto('auth_rate_limits')
        .values({ key, window_start_ms: at, count: 1 })
        .onConflict((oc) =>
          oc.column('key').doUpdateSet({
            count: sql<number>`CASE WHEN ${sql.ref('auth_rate_limits.window_start_ms')} <= ${cutoff} THEN 1 ELSE ${sql.ref('auth_rate_limits.count')} + 1 END`,
            window_start_ms: sql<number>`CASE WHEN ${sql.ref('auth_rate_limits.window_start_ms')} <= ${cutoff} THEN ${at} ELSE ${sql.ref('auth_rate_limits.window_start_ms')} END`,
          }),
        )
        .returning(['count', 'window_start_ms'])
        .executeTakeFirstOrThrow();
      if (Math.random() < 0.01) void prune(at).catch(() => undefined);
      return { count: Number(row.count), resetInMs: Math.max(0, Number(row.window_start_ms) + limit.windowMs - at) };
    },
    async peek(key, limit) {
      const at = now();
      const row = await db.selectFrom('auth_rate_limits').select(['count', 'window_start_ms']).where('key', '=', key).executeTakeFirst();
      const start = row ? Number(row.window_start_ms) : 0;
      if (!row || start <= at - limit.windowMs) return { count: 0, resetInMs: 0 };
      return { count: Number(row.count), resetInMs: Math.max(0, start + limit.windowMs - at) };
    },
    async reset(key) {
      await db.deleteFrom('auth_rate_limits').where('key', '=', key).execute();
    },
    async resetPrefix(prefix) {
      // substr, not LIKE: '_' (in every base64url digest) is a LIKE wildcard.
      await db.deleteFrom('auth_rate_limits').where(sql<string>`substr(${sql.ref('key')}, 1, ${prefix.length})`, '=', prefix).execute();
    },
    // The database handle belongs to the app, which closes it.
    async close() {},
  };
}
