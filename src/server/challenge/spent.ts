import type SQLite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { rawSqliteOf } from '../db/database.js';
import type { Database } from '../db/schema.js';

/** A solution that verified (pow.ts): the challenge's signature, its identity, and its expiry (Unix seconds). */
export interface Solution {
  signature: string;
  expiresAt: number;
}

/**
 * The challenges already used, in the database every instance shares (table
 * signup_challenges_spent, UNLOGGED on PostgreSQL), until they expire: a solution is good for one
 * signup whichever instance receives it. The primary key (expires_at, signature), as unique as the
 * signature and appended to in expiry order (migration 2026-11-29T1000), decides: of two signups
 * with the same solution, at once on two instances or not, exactly one inserts the row.
 *
 * A solution is spent by the write that stores the signup it admits (decision 071): in the group
 * commit's transaction on SQLite, by a statement just before the batch's insert on PostgreSQL (which
 * gives the solutions back if that insert fails, see giveBack), in a signup's own transaction when it
 * is written alone. So a signup is never stored without spending its solution, and the spent rows
 * cost no commit of their own (on SQLite a commit of its own per turn of the event loop cost about a
 * third of the signups/s, issue 28). A known address's solution is spent all the same. Expired rows
 * are deleted at most once a minute, by one of those writes.
 */
export interface SolutionSpender {
  /**
   * Inserts the solutions' signatures in the transaction `trx`; resolves, by index, to true for each
   * solution this call spent, false for one spent before (on any instance) or earlier in the list.
   */
  spend(trx: Kysely<Database>, solutions: readonly Solution[]): Promise<boolean[]>;
  /** Deletes the rows of solutions spent by a statement of their own whose signups were then not written (PostgreSQL's batch). */
  giveBack(db: Kysely<Database>, solutions: readonly Solution[]): Promise<void>;
}

const PURGE_INTERVAL_MS = 60_000;
/** Rows per INSERT: two parameters each, far below both databases' limits. */
const MAX_ROWS = 1000;

/**
 * `db`: the app's database. On SQLite a solution is one prepared INSERT on its one connection, run
 * inside the caller's transaction (a statement of as many rows as the batch, compiled and prepared
 * for each batch, cost more than all the single-row runs: +40 µs a signup at 100 connections); on
 * PostgreSQL one INSERT … RETURNING for them all (one round trip).
 */
export function solutionSpender(db: Kysely<Database>, now: () => number = Date.now): SolutionSpender {
  let lastPurge = 0;
  const purgeDue = () => {
    const at = now();
    if (at - lastPurge < PURGE_INTERVAL_MS) return null;
    lastPurge = at;
    return Math.floor(at / 1000);
  };
  const sqlite = rawSqliteOf(db);
  if (sqlite) {
    let statements: { insert: SQLite.Statement; purge: SQLite.Statement } | undefined;
    return {
      giveBack,
      async spend(_trx, solutions) {
        const s = (statements ??= {
          insert: sqlite.prepare('INSERT INTO signup_challenges_spent (expires_at, signature) VALUES (?, ?) ON CONFLICT DO NOTHING'),
          purge: sqlite.prepare('DELETE FROM signup_challenges_spent WHERE expires_at < ?'),
        });
        // The caller's transaction is on this connection (SQLite's one); a repeat in the list finds the row of the first.
        const fresh = solutions.map((solution) => s.insert.run(solution.expiresAt, solution.signature).changes === 1);
        const purgeBefore = purgeDue();
        if (purgeBefore !== null) s.purge.run(purgeBefore);
        return fresh;
      },
    };
  }
  return {
    giveBack,
    async spend(trx, solutions) {
      // The same solution twice in the list: the first one counts. In key order, so that two
      // instances spending overlapping solutions lock them in the same order (no deadlock).
      const firsts = new Map<string, Solution>();
      for (const s of solutions) if (!firsts.has(s.signature)) firsts.set(s.signature, s);
      const unique = [...firsts.values()].sort((a, b) => a.expiresAt - b.expiresAt || (a.signature < b.signature ? -1 : a.signature > b.signature ? 1 : 0));
      const fresh = new Set<string>();
      for (let i = 0; i < unique.length; i += MAX_ROWS) {
        const rows = await trx
          .insertInto('signup_challenges_spent')
          .values(unique.slice(i, i + MAX_ROWS).map((s) => ({ signature: s.signature, expires_at: s.expiresAt })))
          .onConflict((oc) => oc.columns(['expires_at', 'signature']).doNothing())
          .returning('signature')
          .execute();
        for (const row of rows) fresh.add(row.signature);
      }
      const purgeBefore = purgeDue();
      if (purgeBefore !== null) await trx.deleteFrom('signup_challenges_spent').where('expires_at', '<', purgeBefore).execute();
      // Each fresh signature once, to its first solution.
      return solutions.map((s) => fresh.delete(s.signature));
    },
  };
}

async function giveBack(db: Kysely<Database>, solutions: readonly Solution[]): Promise<void> {
  for (let i = 0; i < solutions.length; i += MAX_ROWS) {
    const rows = solutions.slice(i, i + MAX_ROWS);
    await db
      .deleteFrom('signup_challenges_spent')
      .where((eb) => eb.or(rows.map((s) => eb.and([eb('expires_at', '=', s.expiresAt), eb('signature', '=', s.signature)]))))
      .execute();
  }
}
