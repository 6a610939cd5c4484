import type { FastifyReply, FastifyRequest } from 'fastify';
import { rateLimitAddress } from '../geolocation/ip.js';
import { limitKey, type LimitKind, type RateLimitStore, type WindowState } from './store.js';

export interface ClientRateLimit {
  /** Where the hits count (app.rateLimits.signups: memory, database or Redis). */
  store: RateLimitStore;
  /** Keeps this limit's counters apart from the others in the same store. */
  kind: LimitKind;
  max: number;
  windowMs: number;
  /** What a request past the limit is refused with (passed to the route's error handler). */
  error(): Error;
  /** What a failing store is answered with; the store's own error (a 500) by default. */
  storeError?(err: unknown, reply: FastifyReply): Error;
}

type Done = (err?: Error) => void;

/**
 * A per-client-address fixed-window limit as a route hook (`onRequest: clientRateLimitHook(…)`),
 * answering like @fastify/rate-limit did: `x-ratelimit-limit`, `-remaining` and `-reset` (seconds)
 * on every counted request, and past the limit `retry-after` too, with the request refused by
 * `error()`. The client is `request.ip` (which honours TRUST_PROXY) as rateLimitAddress counts it:
 * IPv4-mapped IPv6 folded to IPv4, IPv6 grouped by /64 (one client usually owns a whole /64).
 *
 * Cheaper per request than the plugin: the address is grouped by string work, not by building
 * ip-address objects, and the in-memory store (SQLite) keys by the address itself rather than by
 * its SHA-256; stores that persist keys (database, Redis) keep the hashed `<kind>:<sha256>`, so no
 * address is ever stored in clear.
 */
export function clientRateLimitHook(limit: ClientRateLimit): (request: FastifyRequest, reply: FastifyReply, done: Done) => void {
  const { store, kind, max, windowMs } = limit;
  const window = { max, windowMs };
  const memory = store.kind === 'memory';
  const prefix = `${kind}:`;
  return function clientRateLimit(request, reply, done) {
    const address = rateLimitAddress(request.ip ?? '');
    const key = memory ? prefix + address : limitKey(kind, address);
    store.hit(key, window).then(
      (state: WindowState) => done(answerLimit(reply, max, state) ? undefined : limit.error()),
      (err: unknown) => done(limit.storeError ? limit.storeError(err, reply) : err instanceof Error ? err : new Error(String(err))),
    );
  };
}

/**
 * The rate-limit headers of a counted request (`x-ratelimit-limit`, `-remaining`, `-reset` in
 * seconds, and `retry-after` past the limit); true while the window is within `max`.
 */
export function answerLimit(reply: FastifyReply, max: number, state: WindowState): boolean {
  const resetSeconds = Math.ceil(state.resetInMs / 1000);
  reply.header('x-ratelimit-limit', max);
  if (state.count <= max) {
    reply.header('x-ratelimit-remaining', max - state.count).header('x-ratelimit-reset', resetSeconds);
    return true;
  }
  reply.header('x-ratelimit-remaining', 0).header('x-ratelimit-reset', resetSeconds).header('retry-after', resetSeconds);
  return false;
}
