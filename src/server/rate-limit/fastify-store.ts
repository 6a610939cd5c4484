import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { limitKey, type LimitKind, type RateLimitStore } from './store.js';

/**
 * A `store` for @fastify/rate-limit that counts in a RateLimitStore. The plugin keeps doing what
 * it does well (the per-address key with IPv6 grouped by /64, the X-RateLimit-* and Retry-After
 * headers, the 429 built by `errorResponseBuilder`); only the counting moves. The key is hashed
 * like every other limiter key (`<kind>:<sha256>`), so no address is stored in clear.
 */
export function fastifyRateLimitStore(store: RateLimitStore, kind: LimitKind): FastifyRateLimitStoreCtor {
  return class implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void {
      store.hit(limitKey(kind, key), { max, windowMs: timeWindow }).then(
        (state) => callback(null, { current: state.count, ttl: state.resetInMs }),
        (err: unknown) => callback(err instanceof Error ? err : new Error(String(err))),
      );
    }

    child(): FastifyRateLimitStore {
      return this;
    }
  };
}
