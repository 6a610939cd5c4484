import type { Limit, RateLimitStore, WindowState } from './store.js';

export interface MemoryStoreOptions {
  /** Most keys kept; beyond it the oldest window is dropped (bounded memory under a flood of addresses). */
  maxKeys?: number;
  /** Milliseconds since the epoch; tests may inject a clock. */
  now?: () => number;
}

interface Entry {
  key: string;
  count: number;
  startMs: number;
  endMs: number;
}

/**
 * Counters in this process only: right for a single instance (SQLite), wrong for several.
 *
 * A Map finds a key's window; a queue keeps the windows in the order they started, so the oldest
 * are found at its front: expired ones are swept from there as hits arrive, and past `maxKeys` the
 * oldest live one is dropped. (Not by iterating the Map from its start: after many deletions V8
 * walks over every deleted slot to find the first live entry, which under a steady churn of
 * addresses made each hit cost some 20 µs.) A window that was reset or replaced stays in the queue
 * until the sweep reaches it, and is then skipped.
 */
export function memoryStore(options: MemoryStoreOptions = {}): RateLimitStore {
  const maxKeys = options.maxKeys ?? 10_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  let queue: Array<Entry | undefined> = [];
  let head = 0;

  const isLive = (entry: Entry) => entries.get(entry.key) === entry;
  const shift = () => {
    queue[head] = undefined;
    head += 1;
    // Drop the consumed front now and then, so the queue stays about as long as the live windows.
    if (head >= 1024 && head * 2 >= queue.length) {
      queue = queue.slice(head);
      head = 0;
    }
  };
  const sweep = (at: number) => {
    for (let budget = 100; budget > 0 && head < queue.length; budget--) {
      const entry = queue[head]!;
      if (isLive(entry)) {
        if (entry.endMs > at) break;
        entries.delete(entry.key);
      }
      shift();
    }
  };
  const dropOldest = () => {
    while (head < queue.length) {
      const entry = queue[head]!;
      shift();
      if (isLive(entry)) {
        entries.delete(entry.key);
        return;
      }
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
      if (entries.size >= maxKeys) dropOldest();
      const fresh: Entry = { key, count: 1, startMs: at, endMs: at + limit.windowMs };
      entries.set(key, fresh);
      queue.push(fresh);
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
      queue = [];
      head = 0;
    },
  };
}
