import type { FastifyBaseLogger } from 'fastify';
import type { AppConfig } from '../config.js';
import type { DatabaseHandle } from '../db/database.js';
import { databaseStore } from './database.js';
import { memoryStore } from './memory.js';
import { redisStore } from './redis.js';
import { KNOWN_CLIENT_WINDOW_MS, type RateLimitStore } from './store.js';

export { databaseStore } from './database.js';
export { memoryStore } from './memory.js';
export { DEFAULT_REDIS_PREFIX, redisStore } from './redis.js';
export { accountLimitKeys, hitUnlessOver, KNOWN_CLIENT_WINDOW_MS, limitKey, overLimitMemo, retryAfterSeconds, type OverLimitMemo, type Limit, type LimitKind, type RateLimitStore, type WindowState } from './store.js';

type Log = Pick<FastifyBaseLogger, 'error' | 'info'>;

/** At most one error line per this interval while a store keeps failing. */
const FAILURE_LOG_INTERVAL_MS = 30_000;

/**
 * `primary`, but when one of its calls fails (Redis unreachable, timed out) the call is logged and
 * answered by `fallback` instead: a limiter outage never turns a request into a 5xx, and the limit
 * still holds, only less widely, while it lasts.
 */
export function withFallback(primary: RateLimitStore, fallback: RateLimitStore, log: Log, purpose: string): RateLimitStore {
  let lastLoggedAt = -Infinity;
  let suppressed = 0;
  const failed = (err: unknown) => {
    const at = Date.now();
    if (at - lastLoggedAt < FAILURE_LOG_INTERVAL_MS) {
      suppressed += 1;
      return;
    }
    log.error({ err, suppressed }, `rate limit store (${primary.kind}) failed: counting ${purpose} in ${fallback.kind} meanwhile`);
    lastLoggedAt = at;
    suppressed = 0;
  };
  return {
    kind: primary.kind,
    hit: (key, limit) =>
      primary.hit(key, limit).catch((err: unknown) => {
        failed(err);
        return fallback.hit(key, limit);
      }),
    peek: (key, limit) =>
      primary.peek(key, limit).catch((err: unknown) => {
        failed(err);
        return fallback.peek(key, limit);
      }),
    reset: (key) =>
      primary.reset(key).catch((err: unknown) => {
        failed(err);
        return fallback.reset(key);
      }),
    // Both: while the primary was away, some of the counters went to the fallback.
    resetPrefix: async (prefix) => {
      await fallback.resetPrefix(prefix);
      await primary.resetPrefix(prefix);
    },
    close: async () => {
      await Promise.all([primary.close(), fallback.close()]);
    },
  };
}

export interface RateLimitStores {
  /** Signups per client address (waitlist/routes.ts). */
  signups: RateLimitStore;
  /** Password sign-in attempts per client address and per account (auth/service.ts). */
  signIn: RateLimitStore;
  /** The e-mail caps (mail/caps.ts): Redis (the database while it fails), else the database, even on SQLite (a restart keeps them). */
  mailCaps: RateLimitStore;
  close(): Promise<void>;
}

/**
 * Where the rate-limit counters live, chosen once at start-up:
 *
 * - `REDIS_URL` set: Redis for both signups and sign-in, shared by every instance. If Redis is
 *   unreachable at a hit, the hit is logged (error) and counted in a fallback instead of failing or
 *   being waved through: signups in this process's memory (the limit then holds per instance),
 *   sign-in attempts in the database (still shared). Failing closed would turn a Redis outage into
 *   an outage of signups and lock every admin out; failing fully open would drop the brute-force
 *   protection exactly when nobody is watching it.
 * - PostgreSQL (several instances possible): the database (table auth_rate_limits) for both.
 * - SQLite (one instance by design): signups in memory, so a signup costs one write on the
 *   single-writer database, not two; sign-in attempts in the database, so a restart does not
 *   hand an attacker a fresh budget.
 */
export async function createRateLimitStores(config: AppConfig, database: DatabaseHandle, log: Log): Promise<RateLimitStores> {
  const retainMs = Math.max(
    config.signupRateLimit.windowMs,
    config.auth.accountFailureLimit.windowMs,
    config.auth.ipAttemptLimit.windowMs,
  );
  const inDatabase = databaseStore(database.db, { retainMs, retainKnownMs: KNOWN_CLIENT_WINDOW_MS });

  if (config.redisUrl) {
    const redis = await redisStore(config.redisUrl, { log });
    const memory = memoryStore();
    return {
      signups: withFallback(redis, memory, log, 'signups'),
      signIn: withFallback(redis, inDatabase, log, 'sign-in attempts'),
      mailCaps: withFallback(redis, inDatabase, log, 'e-mail caps'),
      close: async () => {
        await Promise.all([redis.close(), memory.close()]);
      },
    };
  }
  if (database.dialect === 'postgres') {
    return { signups: inDatabase, signIn: inDatabase, mailCaps: inDatabase, close: async () => {} };
  }
  const memory = memoryStore();
  return { signups: memory, signIn: inDatabase, mailCaps: inDatabase, close: () => memory.close() };
}
