import type { Limit, RateLimitStore, WindowState } from './store.js';

export interface MemoryStoreOptions {
  /** Most keys kept; beyond it the oldest window is dropped (bounded memory under a flood of addresses). */
  maxKeys?: number;
  /** Milliseconds since the epoch; tests may inject a clock. */
  now?: () => number;
}

interface Entry {
  count: number;
  startMs: number;
  endMs: number;
}

/**
 * Counters in this process only: right for a single instance (SQLite), wrong for several.
 * A Map keeps insertion order and a restarted window is re-inserted, so the first entries are the
 * oldest windows: expired ones are swept from the front as hits arrive.
 */
export function memoryStore(options: MemoryStoreOptions = {}): RateLimitStore {
  const maxKeys = options.maxKeys ?? 10_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();

  const sweep = (at: number) => {
    let budget = 100;
    for (const [key, entry] of entries) {
      if (budget-- === 0 || entry.endMs > at) break;
      entries.delete(key);
    }
  };
  const live = (key: string, limit: Limit, at: number): Entry | undefined => {
    const entry = entries.get(key);
    // The window length is the caller's: a window counts as over once `windowMs` has passed.
    return entry && entry.startMs + limit.windowMs > at ? entry : undefined;
  };
  const state = (entry: Entry, limit: Limit, at: number): WindowState => ({
    count: entry.count,
    resetInMs: Math.max(0, entry.startMs + limit.windowMs - at),
  });

  return {
    kind: 'memory',
    async hit(key, limit) {
      const at = now();
      sweep(at);
      const entry = live(key, limit, at);
      if (entry) {
        entry.count += 1;
        return state(entry, limit, at);
      }
      entries.delete(key);
      if (entries.size >= maxKeys) {
        const oldest = entries.keys().next();
        if (!oldest.done) entries.delete(oldest.value);
      }
      const fresh = { count: 1, startMs: at, endMs: at + limit.windowMs };
      entries.set(key, fresh);
      return state(fresh, limit, at);
    },
    async peek(key, limit) {
      const at = now();
      const entry = live(key, limit, at);
      return entry ? state(entry, limit, at) : { count: 0, resetInMs: 0 };
    },
    async reset(key) {
      entries.delete(key);
    },
    async resetPrefix(prefix) {
      for (const key of [...entries.keys()]) if (key.startsWith(prefix)) entries.delete(key);
    },
    async close() {
      entries.clear();
    },
  };
}
