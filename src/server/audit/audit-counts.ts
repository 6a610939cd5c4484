import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { recordAudit, type AuditInput } from './audit-log.js';

/**
 * Audit records that count repeated events instead of adding a row each (security review, finding
 * 2): the first event of a key in a window writes its record with `count: 1`; the next ones of the
 * window only count, in memory, and the count (with `last_at`) is written into that same record
 * now and then (every `flushIntervalMs`, in one transaction), and when the app closes. A burst of
 * thousands of events is one row and one update a minute, not a commit per event.
 *
 * Counts are per process: with several instances each writes its own record for a key. A crash
 * loses at most the counts of one interval; the records themselves are written before the first
 * event's answer.
 */
export interface AuditCounts {
  /** Counts one more event into the live record of `key`: true, or false when there is none (start one). */
  count(key: string): boolean;
  /** Writes the record of `key`'s first event (detail `count: 1`) and counts its next events into it until `endsAtMs`. */
  start(key: string, endsAtMs: number, input: AuditInput): Promise<void>;
  /** Writes every count that its record does not hold yet. */
  flush(): Promise<void>;
  /** A last flush; the timer stops. */
  close(): Promise<void>;
}

export interface AuditCountsOptions {
  /** Milliseconds since the epoch; tests may inject a clock. */
  now?: () => number;
  /** How often counts are written into their records; a minute unless given. */
  flushIntervalMs?: number;
  /** Records followed at once; past it the oldest is written and let go. */
  maxKeys?: number;
  /** A flush that failed (the timer's; `flush()` and `close()` reject instead). */
  onError?: (err: unknown) => void;
}

interface Counted {
  key: string;
  id: string;
  input: AuditInput;
  /** Events counted into the record, the first included. */
  count: number;
  /** What the record holds so far (0 until its insert has committed). */
  written: number;
  lastAtMs: number;
  endsAtMs: number;
}

export function auditCounts(db: Kysely<Database>, options: AuditCountsOptions = {}): AuditCounts {
  const now = options.now ?? Date.now;
  const maxKeys = options.maxKeys ?? 10_000;
  const live = new Map<string, Counted>();
  /** Records no longer followed (their window ended, or evicted) whose last count is still to be written. */
  let letGo: Counted[] = [];
  let flushes: Promise<void> = Promise.resolve();

  const behind = (entry: Counted) => entry.written > 0 && entry.count > entry.written;
  const stopFollowing = (entry: Counted) => {
    live.delete(entry.key);
    if (behind(entry)) letGo.push(entry);
  };

  async function writeCounts(): Promise<void> {
    const at = now();
    for (const entry of [...live.values()]) if (entry.endsAtMs <= at) stopFollowing(entry);
    const due = [...letGo, ...[...live.values()].filter(behind)];
    letGo = [];
    if (due.length === 0) return;
    const counts = due.map((entry) => entry.count);
    try {
      await db.transaction().execute(async (trx) => {
        for (const [i, entry] of due.entries()) {
          const detail = { ...entry.input.detail, count: counts[i], last_at: new Date(entry.lastAtMs).toISOString() };
          await trx.updateTable('audit_log').set({ detail: JSON.stringify(detail) }).where('id', '=', entry.id).execute();
        }
      });
    } catch (err) {
      // Tried again at the next flush (those still followed are found again by `behind`).
      letGo.push(...due.filter((entry) => live.get(entry.key) !== entry));
      throw err;
    }
    for (const [i, entry] of due.entries()) entry.written = Math.max(entry.written, counts[i]!);
  }

  /** One flush at a time: a call during one runs after it. */
  function flush(): Promise<void> {
    const run = flushes.then(writeCounts);
    flushes = run.catch(() => undefined);
    return run;
  }

  const timer = setInterval(() => {
    flush().catch((err: unknown) => options.onError?.(err));
  }, options.flushIntervalMs ?? 60_000);
  timer.unref();

  return {
    count(key) {
      const entry = live.get(key);
      const at = now();
      if (!entry || entry.endsAtMs <= at) return false;
      entry.count += 1;
      entry.lastAtMs = at;
      return true;
    },
    async start(key, endsAtMs, input) {
      const previous = live.get(key);
      if (previous) stopFollowing(previous);
      else if (live.size >= maxKeys) stopFollowing(live.values().next().value!);
      // Followed before its insert, so events arriving meanwhile count into it rather than start another.
      const entry: Counted = { key, id: randomUUID(), input, count: 1, written: 0, lastAtMs: now(), endsAtMs };
      live.set(key, entry);
      try {
        await recordAudit(db, { ...input, detail: { ...input.detail, count: 1 } }, entry.id);
      } catch (err) {
        if (live.get(key) === entry) live.delete(key);
        throw err;
      }
      entry.written = 1;
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
