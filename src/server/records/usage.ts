import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { addUses, type Uses } from './versions.js';

/**
 * Uses of the kept versions, counted in memory and written in one go (docs/decisions/055): a page
 * served adds one to a counter here, nothing else, so the landing page never waits for a write.
 * Every FLUSH_INTERVAL_MS and when the server stops, the counts go to the database (first and last
 * use, count). A crash loses at most one interval's counts, never a text: the text was stored
 * before it was first served.
 */
export const FLUSH_INTERVAL_MS = 60_000;

export interface UsageLog {
  error(obj: object, msg: string): void;
}

export class UsageCounter {
  private pending = new Map<string, Uses>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly log: UsageLog,
  ) {}

  /** One use of a version now (or at `at`, ms since the epoch). */
  add(id: string, at: number = Date.now()): void {
    const use = this.pending.get(id);
    if (!use) {
      this.pending.set(id, { first: at, last: at, count: 1 });
      return;
    }
    if (at < use.first) use.first = at;
    if (at > use.last) use.last = at;
    use.count++;
  }

  /** Writes the uses counted so far; on failure they are kept for the next flush. Flushes never overlap. */
  flush(): Promise<void> {
    const next = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const taken = this.pending;
      this.pending = new Map();
      try {
        await addUses(this.db, taken);
      } catch (err) {
        for (const [id, use] of taken) {
          const again = this.pending.get(id);
          this.pending.set(id, again ? { first: Math.min(use.first, again.first), last: Math.max(use.last, again.last), count: use.count + again.count } : use);
        }
        this.log.error({ err }, 'records: could not write the uses of kept versions; kept for the next flush');
      }
    });
    this.flushing = next;
    return next;
  }

  start(intervalMs: number = FLUSH_INTERVAL_MS): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}
