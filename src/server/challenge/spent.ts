import type { Kysely } from 'kysely';
import { rawSqliteOf } from '../db/database.js';
import type { Database } from '../db/schema.js';

/**
 * The challenges already used, in the database every instance shares (table
 * signup_challenges_spent, UNLOGGED on PostgreSQL), until they expire: a solution is good for one
 * signup whichever instance receives it. The primary key decides: of two signups with the same
 * solution, at once on two instances or not, exactly one inserts the row.
 *
 * Like the signup's group commit, the solutions that arrive together are written by one statement
 * (INSERT … ON CONFLICT DO NOTHING RETURNING), started after the current turn of the event loop. On
 * SQLite that statement commits with synchronous=NORMAL: no fsync of its own (the next signup's
 * FULL commit syncs it; a power cut could forget the last seconds' spent challenges, letting each be
 * used once more before it expires). Expired rows are deleted at most once a minute, by the same
 * connection turn.
 */
export interface SpentChallenges {
  /** Resolves to true when this call spent the challenge, false when it had been spent before. */
  spend(signature: string, expiresAt: number): Promise<boolean>;
}

interface Pending {
  signature: string;
  expiresAt: number;
  resolve(fresh: boolean): void;
  reject(err: unknown): void;
}

const PURGE_INTERVAL_MS = 60_000;
/** Rows per INSERT: two parameters each, far below both databases' limits. */
const MAX_BATCH = 1000;

export function spentChallenges(db: Kysely<Database>, now: () => number = Date.now): SpentChallenges {
  const sqlite = rawSqliteOf(db);
  let queue: Pending[] = [];
  let scheduled = false;
  let lastPurge = 0;

  const insert = async (executor: Kysely<Database>, batch: readonly Pending[]): Promise<Set<string>> => {
    const rows = await executor
      .insertInto('signup_challenges_spent')
      .values(batch.map((p) => ({ signature: p.signature, expires_at: p.expiresAt })))
      .onConflict((oc) => oc.column('signature').doNothing())
      .returning('signature')
      .execute();
    const at = now();
    if (at - lastPurge >= PURGE_INTERVAL_MS) {
      lastPurge = at;
      await executor.deleteFrom('signup_challenges_spent').where('expires_at', '<', Math.floor(at / 1000)).execute();
    }
    return new Set(rows.map((r) => r.signature));
  };

  const write = (batch: Pending[]): Promise<Set<string>> => {
    if (!sqlite) return insert(db, batch);
    return db.connection().execute(async (connection) => {
      sqlite.pragma('synchronous = NORMAL');
      try {
        return await insert(connection, batch);
      } finally {
        sqlite.pragma('synchronous = FULL');
      }
    });
  };

  const flush = () => {
    scheduled = false;
    while (queue.length > 0) {
      const batch = queue.slice(0, MAX_BATCH);
      queue = queue.slice(MAX_BATCH);
      // The same solution twice in one batch: the first is the one that counts.
      const first = new Map<string, Pending>();
      const repeats: Pending[] = [];
      for (const p of batch) {
        if (first.has(p.signature)) repeats.push(p);
        else first.set(p.signature, p);
      }
      for (const p of repeats) p.resolve(false);
      const unique = [...first.values()];
      write(unique).then(
        (inserted) => unique.forEach((p) => p.resolve(inserted.has(p.signature))),
        (err: unknown) => unique.forEach((p) => p.reject(err)),
      );
    }
  };

  return {
    spend(signature, expiresAt) {
      return new Promise<boolean>((resolve, reject) => {
        queue.push({ signature, expiresAt, resolve, reject });
        if (scheduled) return;
        scheduled = true;
        setImmediate(flush);
      });
    },
  };
}
