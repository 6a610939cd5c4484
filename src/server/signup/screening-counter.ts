import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ScreeningReason } from '../../shared/waitlist/screening.js';

/**
 * Held and refused signups, counted per UTC hour and reason in signup_screening (decision 052),
 * for the insight panel (insights/screening.ts reads them).
 *
 * `countScreening` is the one place that writes the table: an upsert per (hour, reason). The
 * signup path does not call it per signup: `app.signupScreening.count(reason)` adds to counts in
 * memory, which are written every FLUSH_MS (and when the server closes), so a flood of refused
 * requests (the rate limit's 429s) costs the database one statement a second, not one per request.
 */
export async function countScreening(db: Kysely<Database>, reason: ScreeningReason, n = 1, at: Date = new Date()): Promise<void> {
  await upsertCounts(db, [{ hour: hourOf(at), reason, n }]);
}

/** Hours since 1970-01-01T00:00Z: the table's `hour`. */
export const hourOf = (at: Date): number => Math.floor(at.getTime() / 3_600_000);

async function upsertCounts(db: Kysely<Database>, rows: Array<{ hour: number; reason: string; n: number }>): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('signup_screening')
    .values(rows)
    .onConflict((oc) => oc.columns(['hour', 'reason']).doUpdateSet({ n: sql<number>`signup_screening.n + excluded.n` }))
    .execute();
}

export interface ScreeningCounter {
  /** One more held or refused signup for `reason`, now (written within FLUSH_MS). */
  count(reason: ScreeningReason): void;
  /** Writes the counts gathered so far (tests; the server on close). */
  flush(): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Held and refused signups by reason (signup/screening-counter.ts). */
    signupScreening: ScreeningCounter;
  }
}

const FLUSH_MS = 1_000;

export interface ScreeningCounterOptions {
  now?: () => Date;
  log: { warn(obj: object, msg: string): void };
}

export function createScreeningCounter(db: Kysely<Database>, options: ScreeningCounterOptions): ScreeningCounter & { close(): Promise<void> } {
  const now = options.now ?? (() => new Date());
  let pending = new Map<string, { hour: number; reason: ScreeningReason; n: number }>();
  let timer: NodeJS.Timeout | null = null;
  let writing: Promise<void> = Promise.resolve();

  async function write(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = null;
    const rows = [...pending.values()];
    pending = new Map();
    try {
      await upsertCounts(db, rows);
    } catch (err) {
      // Kept for the next write (a database outage); the counts are few, one per hour and reason.
      for (const row of rows) add(row.hour, row.reason, row.n);
      options.log.warn({ err }, 'signup screening: could not write the counts; will try again');
    }
  }

  function add(hour: number, reason: ScreeningReason, n: number): void {
    const key = `${hour}:${reason}`;
    const row = pending.get(key);
    if (row) row.n += n;
    else pending.set(key, { hour, reason, n });
    if (!timer) {
      timer = setTimeout(() => void flush(), FLUSH_MS);
      timer.unref();
    }
  }

  function flush(): Promise<void> {
    writing = writing.then(write);
    return writing;
  }

  return {
    count: (reason) => add(hourOf(now()), reason, 1),
    flush,
    async close() {
      await flush();
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}

/** Decorates `app.signupScreening`; its counts are written before the database closes. */
export function registerScreeningCounter(app: FastifyInstance): void {
  const counter = createScreeningCounter(app.database.db, { log: app.log });
  app.decorate('signupScreening', counter);
  app.addHook('preClose', async () => counter.close());
}
