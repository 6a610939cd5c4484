import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * Fixed-window counters kept in the database (table auth_rate_limits), so limits hold across every
 * instance sharing it. One atomic `INSERT … ON CONFLICT DO UPDATE … RETURNING` per hit works the
 * same on SQLite (≥ 3.35) and PostgreSQL; window starts are Unix milliseconds (bigint).
 */
export interface WindowState {
  count: number;
  /** Milliseconds until the current window ends. */
  resetInMs: number;
}

export interface Limit {
  max: number;
  windowMs: number;
}

/** Keys never hold raw addresses or emails, and stay short whatever the input. */
export function limitKey(kind: 'ip' | 'account', value: string): string {
  return `${kind}:${createHash('sha256').update(value, 'utf8').digest('base64url')}`;
}

/** Counts one hit and returns the count in the current window (the window restarts once it has passed). */
export async function hit(db: Kysely<Database>, key: string, limit: Limit, now = Date.now()): Promise<WindowState> {
  const cutoff = now - limit.windowMs;
  const row = await db
    .insertInto('auth_rate_limits')
    .values({ key, window_start_ms: now, count: 1 })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        count: sql<number>`CASE WHEN ${sql.ref('auth_rate_limits.window_start_ms')} <= ${cutoff} THEN 1 ELSE ${sql.ref('auth_rate_limits.count')} + 1 END`,
        window_start_ms: sql<number>`CASE WHEN ${sql.ref('auth_rate_limits.window_start_ms')} <= ${cutoff} THEN ${now} ELSE ${sql.ref('auth_rate_limits.window_start_ms')} END`,
      }),
    )
    .returning(['count', 'window_start_ms'])
    .executeTakeFirstOrThrow();
  if (Math.random() < 0.01) void prune(db, now).catch(() => undefined);
  return { count: Number(row.count), resetInMs: Math.max(0, Number(row.window_start_ms) + limit.windowMs - now) };
}

/** The current count without counting (0 when there is no live window). */
export async function peek(db: Kysely<Database>, key: string, limit: Limit, now = Date.now()): Promise<WindowState> {
  const row = await db.selectFrom('auth_rate_limits').select(['count', 'window_start_ms']).where('key', '=', key).executeTakeFirst();
  const start = row ? Number(row.window_start_ms) : 0;
  if (!row || start <= now - limit.windowMs) return { count: 0, resetInMs: 0 };
  return { count: Number(row.count), resetInMs: Math.max(0, start + limit.windowMs - now) };
}

export async function reset(db: Kysely<Database>, key: string): Promise<void> {
  await db.deleteFrom('auth_rate_limits').where('key', '=', key).execute();
}

/** Drops windows older than a day (no limit here is longer). */
async function prune(db: Kysely<Database>, now: number): Promise<void> {
  await db.deleteFrom('auth_rate_limits').where('window_start_ms', '<', now - 86_400_000).execute();
}

/** Seconds for a Retry-After header (at least 1). */
export function retryAfterSeconds(state: WindowState): number {
  return Math.max(1, Math.ceil(state.resetInMs / 1000));
}
