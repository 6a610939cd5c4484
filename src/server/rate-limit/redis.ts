import type { FastifyBaseLogger } from 'fastify';
import type * as ioredis from 'ioredis';
import type { RateLimiterRedis } from 'rate-limiter-flexible';
import { optionalModule } from '../runtime/optional-module.js';
import type { RateLimitStore } from './store.js';

/** ioredis, loaded only when REDIS_URL is set. */
const loadIoredis = optionalModule<typeof ioredis>('ioredis');
/**
 * rate-limiter-flexible's Redis limiter, loaded only when REDIS_URL is set: its own module, not
 * the package's index, which loads every store the package has (some 25 modules).
 */
const loadRateLimiterRedis = optionalModule<typeof RateLimiterRedis>('rate-limiter-flexible/lib/RateLimiterRedis.js');

export const DEFAULT_REDIS_PREFIX = 'waitlist:rl:';

export interface RedisStoreOptions {
  /** Prepended to every key, so the counters never collide with other data in the same Redis. */
  prefix?: string;
  log?: Pick<FastifyBaseLogger, 'error' | 'info'>;
  /** Longest wait for a TCP connection (start-up and each reconnect) and for any one command. */
  timeoutMs?: number;
}

/**
 * rate-limiter-flexible's counting script (SET NX with the window's expiry, INCRBY, PTTL, and an
 * expiry for a key left without one), with the expiry in milliseconds (PX, PEXPIRE) where the
 * library's has seconds: SIGNUP_RATE_LIMIT_WINDOW_MS is in milliseconds. The library passes the
 * window as ARGV[2] in what it takes for seconds; it is given milliseconds (see `windowOf`).
 */
const HIT_SCRIPT = `
redis.call('SET', KEYS[1], 0, 'PX', ARGV[2], 'NX')
local count = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {count, ttl}
`;

/** The per-hit window for the limiter, whose durations are seconds: milliseconds, for HIT_SCRIPT. */
const windowOf = (windowMs: number) => ({ customDuration: windowMs });

/**
 * Fixed-window counters in Redis (a key per window that expires with it), shared by every instance
 * pointing at the same server. Never waits for Redis: there is no offline queue, no retry of a
 * command and a command timeout, so while Redis is away every call fails fast (callers decide what
 * that means; see `withFallback` in index.ts) and the client reconnects in the background.
 * Resolves once connected, or after a failed first attempt (logged), never throws for an
 * unreachable server.
 */
export async function redisStore(url: string, options: RedisStoreOptions = {}): Promise<RateLimitStore> {
  const prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
  const timeoutMs = options.timeoutMs ?? 1000;
  const log = options.log;
  const client = new (loadIoredis().Redis)(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  // One error line per outage, not one per reconnect attempt; without a listener ioredis would
  // print every connection error to stderr itself.
  let down = false;
  client.on('error', (err: Error) => {
    if (down) return;
    down = true;
    log?.error({ err }, 'redis: connection failed; rate limits fall back until it is back');
  });
  client.on('ready', () => {
    if (down) log?.info('redis: connected again');
    down = false;
  });

  // The windows are rate-limiter-flexible's, on this client (HIT_SCRIPT becomes a command of it:
  // EVALSHA, not the script's text per hit). `penalty` counts a hit without judging it (callers
  // compare the count with their limit), so `points` plays no part; the window comes with each hit.
  const limiter = new (loadRateLimiterRedis())({
    storeClient: client,
    keyPrefix: '',
    points: 1,
    duration: 0,
    customIncrTtlLuaScript: HIT_SCRIPT,
    rejectIfRedisNotReady: true,
  });

  await client.connect().catch(() => undefined); // already reported by the error listener

  return {
    kind: 'redis',
    async hit(key, limit) {
      const state = await limiter.penalty(prefix + key, 1, windowOf(limit.windowMs));
      return { count: state.consumedPoints, resetInMs: Math.max(0, state.msBeforeNext) };
    },
    async peek(key) {
      const state = await limiter.get(prefix + key);
      return state ? { count: state.consumedPoints, resetInMs: Math.max(0, state.msBeforeNext) } : { count: 0, resetInMs: 0 };
    },
    async reset(key) {
      await limiter.delete(prefix + key);
    },
    async resetPrefix(keyPrefix) {
      // SCAN, not KEYS: it does not block the server. Glob characters in the prefix are escaped.
      const pattern = `${(prefix + keyPrefix).replace(/[*?[\]\\]/g, '\\$&')}*`;
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        if (keys.length > 0) await client.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    },
    async close() {
      if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };
}
