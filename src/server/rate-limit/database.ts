import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../db/database.js';
import type { Database } from '../db/schema.js';
import type { Limit, RateLimitStore, WindowState } from './store.js';

const DAY_MS = 86_400_000;
/** The prefix of the `known` keys (accountLimitKeys). */
const KNOWN = 'known:';

export interface DatabaseStoreOptions {
  /** Windows that started longer ago than this are pruned now and then; at least the longest window in use. */
  retainMs?: number;
  /** The same for the `known:` keys (an account's known client addresses, accountLimitKeys), whose window is long. */
  retainKnownMs?: number;
  /** Milliseconds since the epoch; tests may inject a clock. */
  now?: () => number;
}

/**
 * Fixed-window counters in the table auth_rate_limits, so limits hold across every instance sharing
 * the database and survive restarts (on PostgreSQL the table is UNLOGGED: see the 2026-11-24T1000
 * migration). One atomic `INSERT … ON CONFLICT DO UPDATE … RETURNING` works the same on SQLite
 * (≥ 3.35) and PostgreSQL; window starts are Unix milliseconds (bigint).
 *
 * On PostgreSQL every signup counts a hit, and a statement per hit is a round trip per signup: the
 * hits that arrive together are counted by one statement instead (batchedHits), each still getting
 * its own count. On SQLite a statement is an in-process call, so each hit runs its own.
 */
export function databaseStore(db: Kysely<Database>, options: DatabaseStoreOptions = {}): RateLimitStore {
  const now = options.now ?? Date.now;
  const retainMs = Math.max(DAY_MS, options.retainMs ?? 0);
  const retainKnownMs = Math.max(retainMs, options.retainKnownMs ?? 0);
  // substr, not LIKE: '_' (in every base64url digest) is a LIKE wildcard.
  const kindOf = sql<string>`substr(${sql.ref('key')}, 1, ${KNOWN.length})`;

  /** Drops windows older than every limit in use (the known client addresses after their own, longer window). */
  const prune = async (at: number) => {
    await db.deleteFrom('auth_rate_limits').where('window_start_ms', '<', at - retainMs).where(kindOf, '<>', KNOWN).execute();
    if (retainKnownMs > retainMs) await db.deleteFrom('auth_rate_limits').where('window_start_ms', '<', at - retainKnownMs).execute();
  };
  const batched = isPostgres(db)
    ? batchedHits(db, now, (at, hits) => {
        if (Math.random() < 0.01 * hits) void prune(at).catch(() => undefined);
      })
    : null;

  return {
    kind: 'database',
    async hit(key, limit) {
      if (batched) return batched(key, limit);
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

interface PendingHit {
  key: string;
  resolve(state: WindowState): void;
  reject(err: unknown): void;
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Group counting for PostgreSQL, like the signups' group commit: hits arriving while nothing is
 * being counted are counted right after the current turn of the event loop (setImmediate, no
 * timer); hits arriving meanwhile, by the next statement, as soon as the current one returns. One
 * statement per window length upserts every key of the batch with its number of hits (keys in
 * order, so two instances never lock the same rows in opposite orders), and the n hits of one key
 * get the counts count-n+1 … count, in the order they came: each hit still gets its own count.
 */
function batchedHits(db: Kysely<Database>, now: () => number, counted: (at: number, hits: number) => void): (key: string, limit: Limit) => Promise<WindowState> {
  let queue = new Map<number, PendingHit[]>();
  let queued = 0;
  let running = false;
  let scheduled = false;

  const upsert = async (windowMs: number, hits: PendingHit[]) => {
    const at = now();
    const cutoff = at - windowMs;
    const perKey = new Map<string, number>();
    for (const h of hits) perKey.set(h.key, (perKey.get(h.key) ?? 0) + 1);
    const keys = [...perKey.keys()].sort(compareText);
    const { rows } = await sql<{ key: string; count: number | string; window_start_ms: number | string }>`
      INSERT INTO auth_rate_limits (key, window_start_ms, count)
      SELECT k, ${at}::bigint, n FROM unnest(${keys}::text[], ${keys.map((k) => perKey.get(k)!)}::int[]) AS hits(k, n)
      ON CONFLICT (key) DO UPDATE SET
        count = CASE WHEN auth_rate_limits.window_start_ms <= ${cutoff}::bigint THEN excluded.count ELSE auth_rate_limits.count + excluded.count END,
        window_start_ms = CASE WHEN auth_rate_limits.window_start_ms <= ${cutoff}::bigint THEN excluded.window_start_ms ELSE auth_rate_limits.window_start_ms END
      RETURNING key, count, window_start_ms`.execute(db);
    const byKey = new Map(rows.map((r) => [r.key, r]));
    const given = new Map<string, number>();
    for (const h of hits) {
      const row = byKey.get(h.key);
      if (!row) {
        h.reject(new Error('rate limit: a counted key was not returned'));
        continue;
      }
      const before = given.get(h.key) ?? 0;
      given.set(h.key, before + 1);
      h.resolve({
        count: Number(row.count) - perKey.get(h.key)! + 1 + before,
        resetInMs: Math.max(0, Number(row.window_start_ms) + windowMs - at),
      });
    }
    counted(at, hits.length);
  };

  const run = async () => {
    running = true;
    try {
      while (queued > 0) {
        const batch = queue;
        queue = new Map();
        queued = 0;
        for (const [windowMs, hits] of batch) {
          try {
            await upsert(windowMs, hits);
          } catch (err) {
            for (const h of hits) h.reject(err);
          }
        }
      }
    } finally {
      running = false;
    }
  };

  return (key, limit) =>
    new Promise<WindowState>((resolve, reject) => {
      const hits = queue.get(limit.windowMs);
      if (hits) hits.push({ key, resolve, reject });
      else queue.set(limit.windowMs, [{ key, resolve, reject }]);
      queued += 1;
      if (running || scheduled) return;
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        if (!running) void run();
      });
    });
}
