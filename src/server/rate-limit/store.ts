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
 * `api_key`: an API key's requests (src/server/api); `api_auth`: refused API keys per client address.
 * `link`: the e-mail link routes (confirm, unsubscribe, erase) per client address. `known`: a client
 * address an account signed in from (accountLimitKeys), remembered KNOWN_CLIENT_WINDOW_MS.
 */
export type LimitKind = 'signup' | 'challenge' | 'ip' | 'account' | 'user_update' | 'link' | 'known' | 'api_key' | 'api_auth' | MailCapKind;

/** The e-mail caps' counters (mail/caps.ts): per recipient address, per recipient domain, per client address. */
export type MailCapKind = 'mail_address' | 'mail_domain' | 'mail_client';

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
 * Keys found over their limit twice in a row, remembered in this process until their window ends,
 * so a client refused again and again is answered from memory, without even a read (the first
 * refusals read, the rest do not). Only for keys nothing resets before their window ends (the
 * per-IP counters: `npm run admin -- unlock` clears an account's counters, never an address's). At
 * most `maxKeys`, the oldest forgotten first.
 */
export interface OverLimitMemo {
  /** The window's state while `key` is known to be over its limit, else null. */
  get(key: string, now: number): WindowState | null;
  /** `key` was found over its limit: remembered from the second time on. */
  remember(key: string, state: WindowState, now: number): void;
}

export function overLimitMemo(maxKeys = 10_000): OverLimitMemo {
  const ends = new Map<string, { count: number; endMs: number; seen: number }>();
  return {
    get(key, now) {
      const over = ends.get(key);
      if (!over || over.seen < 2) return null;
      if (over.endMs > now) return { count: over.count, resetInMs: over.endMs - now };
      ends.delete(key);
      return null;
    },
    remember(key, state, now) {
      const previous = ends.get(key);
      const seen = previous && previous.endMs > now ? previous.seen + 1 : 1;
      ends.delete(key);
      if (ends.size >= maxKeys) ends.delete(ends.keys().next().value!);
      ends.set(key, { count: state.count, endMs: now + state.resetInMs, seen });
    },
  };
}

/**
 * Counts a hit unless the key's window is already full: a key at its limit is answered from a read
 * (`peek`), or from `memo` without one, so a client refused again and again costs no write
 * (security review, finding 2). Past the limit a further hit would change nothing a check reads:
 * the count only grows and the window keeps its end. `over`: this request is past the limit
 * (refused from the read, or counted past it by hits that raced it); `remembered`: refused from `memo`.
 */
export async function hitUnlessOver(
  store: RateLimitStore,
  key: string,
  limit: Limit,
  memo?: { memo: OverLimitMemo; now: () => number },
): Promise<WindowState & { over: boolean; remembered: boolean }> {
  const known = memo?.memo.get(key, memo.now());
  if (known) return { ...known, over: true, remembered: true };
  const current = await store.peek(key, limit);
  const state = current.count >= limit.max ? current : await store.hit(key, limit);
  const over = state.count > limit.max || state === current;
  if (over) memo?.memo.remember(key, state, memo.now());
  return { ...state, over, remembered: false };
}

/** Seconds for a Retry-After header (at least 1). */
export function retryAfterSeconds(state: WindowState): number {
  return Math.max(1, Math.ceil(state.resetInMs / 1000));
}
