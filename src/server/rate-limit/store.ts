import { createHash } from 'node:crypto';

/** A fixed window: at most `max` hits per `windowMs`, the window starting at the first hit. */
export interface Limit {
  max: number;
  windowMs: number;
}

export interface WindowState {
  /** Hits in the current window, this one included (0 from `peek` when no window is live). */
  count: number;
  /** Milliseconds until the current window ends. */
  resetInMs: number;
}

/**
 * Fixed-window counters behind every rate limit of the app (signups, sign-in brute force).
 * Implementations: `memoryStore` (one process), `databaseStore` (table auth_rate_limits, shared by
 * every instance on the database) and `redisStore` (shared through Redis, counted by
 * rate-limiter-flexible; why the other two are our own: docs/decisions/018). Pick one with
 * `createRateLimitStores` (index.ts).
 */
export interface RateLimitStore {
  readonly kind: 'memory' | 'database' | 'redis';
  /** Counts one hit and returns the state of the current window (a new window once the last has passed). */
  hit(key: string, limit: Limit): Promise<WindowState>;
  /** The current state without counting. */
  peek(key: string, limit: Limit): Promise<WindowState>;
  /** Forgets the key's window (e.g. after a successful sign-in). */
  reset(key: string): Promise<void>;
  /** Forgets every window whose key starts with `prefix` (e.g. all of an account's per-client counters). */
  resetPrefix(prefix: string): Promise<void>;
  /** Releases what the store holds (a Redis connection); the store is unusable afterwards. */
  close(): Promise<void>;
}

/**
 * `link`: the e-mail link routes (confirm, unsubscribe, erase) per client address. `known`: a client
 * address an account signed in from (accountLimitKeys), remembered KNOWN_CLIENT_WINDOW_MS.
 */
export type LimitKind = 'signup' | 'ip' | 'account' | 'user_update' | 'link' | 'known';

/** How long a client address an account signed in from counts as the account's own (accountLimitKeys `known`). */
export const KNOWN_CLIENT_WINDOW_MS = 30 * 86_400_000;

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest('base64url');

/** Keys never hold raw addresses or emails, and stay short whatever the input. */
export function limitKey(kind: LimitKind, value: string): string {
  return `${kind}:${digest(value)}`;
}

/**
 * The sign-in counters of one account (lower-cased email): `account` counts its failures from
 * anywhere (they slow sign-in down), `client(address)` its attempts from one client address (they
 * block that client only), and every key of the account starts with `prefix`, so one
 * `resetPrefix` clears them all (`npm run admin -- unlock`). `known(address)` marks a client
 * address the account signed in from (not a counter, and outside `prefix`: an unlock keeps it).
 */
export function accountLimitKeys(email: string): { account: string; prefix: string; client(address: string): string; known(address: string): string } {
  const account = limitKey('account', email);
  return {
    account,
    prefix: account,
    client: (address) => `${account}:${digest(address)}`,
    known: (address) => `${limitKey('known', email)}:${digest(address)}`,
  };
}

/**
 * Counts a hit unless the key's window is already full: a key at its limit is answered from a read
 * (`peek`), so a client refused again and again costs no write (security review, finding 2). Past
 * the limit a further hit would change nothing a check reads: the count only grows and the window
 * keeps its end. `over`: this request is past the limit (refused from the read, or counted past it
 * by hits that raced it).
 */
export async function hitUnlessOver(store: RateLimitStore, key: string, limit: Limit): Promise<WindowState & { over: boolean }> {
  const current = await store.peek(key, limit);
  if (current.count >= limit.max) return { ...current, over: true };
  const state = await store.hit(key, limit);
  return { ...state, over: state.count > limit.max };
}

/** Seconds for a Retry-After header (at least 1). */
export function retryAfterSeconds(state: WindowState): number {
  return Math.max(1, Math.ceil(state.resetInMs / 1000));
}
