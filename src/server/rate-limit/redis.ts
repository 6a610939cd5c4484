import type { FastifyBaseLogger } from 'fastify';
import type * as ioredis from 'ioredis';
import { optionalModule } from '../runtime/optional-module.js';
import type { RateLimitStore } from './store.js';

/** ioredis, loaded only when REDIS_URL is set. */
const loadIoredis = optionalModule<typeof ioredis>('ioredis');

export const DEFAULT_REDIS_PREFIX = 'waitlist:rl:';

export interface RedisStoreOptions {
  /** Prepended to every key, so the counters never collide with other data in the same Redis. */
  prefix?: string;
  log?: Pick<FastifyBaseLogger, 'error' | 'info'>;
  /** Longest wait for a TCP connection (start-up and each reconnect) and for any one command. */
  timeoutMs?: number;
}

/**
 * INCR and, on the first hit of a window, PEXPIRE in one script, so a window can never be left
 * without an expiry (and so never end) whatever happens between the two. A key without a TTL
 * (written by something else) gets one too.
 */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

const PEEK_SCRIPT = `
local count = redis.call('GET', KEYS[1])
if not count then return {0, 0} end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = 0 end
return {tonumber(count), ttl}
`;

function asPair(reply: unknown): [number, number] {
  if (!Array.isArray(reply) || reply.length !== 2) throw new Error(`unexpected Redis reply: ${JSON.stringify(reply)}`);
  return [Number(reply[0]), Number(reply[1])];
}

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

  await client.connect().catch(() => undefined); // already reported by the error listener

  return {
    kind: 'redis',
    async hit(key, limit) {
      const [count, ttl] = asPair(await client.eval(HIT_SCRIPT, 1, prefix + key, String(limit.windowMs)));
      return { count, resetInMs: Math.max(0, ttl) };
    },
    async peek(key) {
      const [count, ttl] = asPair(await client.eval(PEEK_SCRIPT, 1, prefix + key));
      return { count, resetInMs: Math.max(0, ttl) };
    },
    async reset(key) {
      await client.del(prefix + key);
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
