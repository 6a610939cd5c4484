import type SQLite from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { isPostgres, rawSqliteOf, sqliteWalSync } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { WAITLIST_COLUMNS } from '../db/waitlist-entries.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';
import { heldEntry, type Solution, type SolutionSpender } from '../challenge/index.js';

/** The waitlist's inserts: a signup, a batch of them (the group commit), an import's rows. The row mapping is db/waitlist-entries.ts. */
type Db = Kysely<Database>;

/** Inserts one entry in its own (auto-committed) statement; rejects with a unique violation for a known address. */
export async function insertWaitlistEntry(db: Db, entry: WaitlistEntry): Promise<void> {
  await db.insertInto('waitlist').values(entry).execute();
}

/**
 * The signup's write: adds a new address unless it is on the list already (case-insensitively) or
 * on the suppression list (its owner erased it: it comes back only through the link e-mailed to it,
 * consent/restore.ts). Resolves to false, changing nothing, in either case: the caller then looks
 * at which it was.
 *
 * One statement on PostgreSQL (INSERT … SELECT … WHERE NOT EXISTS: one round trip, no transaction
 * needed); on SQLite, whose statements are in-process calls, two statements in the caller's
 * transaction or in one of their own.
 */
export async function insertSignup(db: Db, entry: WaitlistEntry, suppressionHash: string): Promise<boolean> {
  if (isPostgres(db)) return (await insertBatchPostgres(db, [{ entry, suppressionHash: () => suppressionHash }]))[0] === true;
  const write = async (trx: Db) => {
    const suppressed = await trx.selectFrom('waitlist_suppressions').select('email_hash').where('email_hash', '=', suppressionHash).executeTakeFirst();
    if (suppressed) return false;
    const result = await trx.insertInto('waitlist').values(entry).onConflict((oc) => oc.doNothing()).executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  };
  return db.isTransaction ? write(db) : db.transaction().execute(write);
}

/** One new signup of a batch: the entry, and the suppression hash its address removes. */
export interface SignupWrite {
  entry: WaitlistEntry;
  /** The address's suppression hash (a suppressed address is not inserted); called only when needed (an HMAC per signup is not free). */
  suppressionHash(): string;
  /**
   * The proof-of-work solution that admits it (SIGNUP_CHALLENGE=proof-of-work), spent in the same
   * transaction; one spent before is `replayed`, and the entry is then stored held (challenge_replayed).
   */
  solution?: Solution | null;
}

/** What became of a write: `inserted` (as given, or held when `replayed`), or not (a known or suppressed address). */
export interface WriteResult {
  inserted: boolean;
  /** Its solution had been spent before (or earlier in the batch). */
  replayed: boolean;
}

/**
 * Writes a batch of signups in one transaction and commits it; resolves to what became of each, by
 * index, once the commit is durable. `beforeCommit`, when given, runs inside the
 * transaction after the writes (the outbox rows of the inserted entries); if anything throws,
 * nothing is written.
 */
export type SignupBatchCommit = (
  writes: readonly SignupWrite[],
  beforeCommit?: (trx: Db, results: readonly WriteResult[], entries: readonly WaitlistEntry[]) => Promise<void>,
) => Promise<WriteResult[]>;

/**
 * Spends the batch's solutions (`spender`, in `trx`) and says, by index, which were spent before and
 * the entry each write stores: held (challenge_replayed) when its solution was replayed.
 */
async function spendSolutions(trx: Db, spender: SolutionSpender, writes: readonly SignupWrite[]): Promise<{ replayed: boolean[]; entries: WaitlistEntry[] }> {
  const withSolution = writes.flatMap((w, i) => (w.solution ? [i] : []));
  const replayed = writes.map(() => false);
  if (withSolution.length > 0) {
    const fresh = await spender.spend(trx, withSolution.map((i) => writes[i]!.solution!));
    withSolution.forEach((i, k) => (replayed[i] = !fresh[k]));
  }
  return { replayed, entries: writes.map((w, i) => (replayed[i] ? heldEntry(w.entry, 'challenge_replayed') : w.entry)) };
}

/**
 * The group commit's transaction (batcher.ts): insertSignup for many addresses at once.
 * Each entry is inserted unless its address is already on the list (case-insensitively), earlier in
 * the same batch, or suppressed. One not inserted changes nothing for that entry: the caller then
 * looks at the stored one (or the suppression), after the commit.
 *
 * SQLite: BEGIN IMMEDIATE (the write lock from the start) on Kysely's one connection, held through
 * db.connection() so no other query can run inside it; then prepared statements on the raw
 * connection (prepared once, not compiled and prepared per request): one INSERT per solution into
 * the spent list, a suppression lookup per entry only when the suppression list is not empty,
 * then one INSERT per entry. The commit's fsync (what
 * synchronous=FULL does in WAL mode) is done on the thread pool instead of the event loop: COMMIT
 * runs with synchronous=NORMAL (no sync), then the WAL file is fdatasync'ed and only then does the
 * promise resolve, so nothing is acknowledged before it is on disk, while the server goes on
 * reading and answering requests during the sync. (Until then another reader could see the rows;
 * any later FULL commit on the connection syncs them anyway.)
 *
 * PostgreSQL: one statement for the whole batch (the rows as one JSON array, the suppressed ones
 * left out by a join on their hashes) in address order, so that two instances inserting overlapping batches lock the
 * same keys in the same order and cannot deadlock; before it, one for the batch's solutions, if any.
 * Without `beforeCommit` each runs on its own (its own transaction: one round trip), else inside
 * BEGIN … COMMIT with what `beforeCommit` adds.
 *
 * The solutions (SIGNUP_CHALLENGE=proof-of-work) are spent before the entries are written: a write
 * whose solution was spent before (or earlier in the batch) stores its entry held, as
 * `challenge_replayed`, and comes back `replayed`.
 */
export function signupBatchCommitter(db: Db, spender: SolutionSpender): SignupBatchCommit {
  const sqlite = rawSqliteOf(db);
  if (sqlite) {
    type Statements = Record<'normal' | 'full' | 'begin' | 'commit' | 'rollback' | 'anySuppression' | 'suppressed' | 'insert', SQLite.Statement>;
    let statements: Statements | undefined;
    const syncWal = sqliteWalSync(sqlite);
    return async (writes, beforeCommit) => {
      const written = await db.connection().execute(async (connection) => {
        const s = (statements ??= {
          normal: sqlite.prepare('PRAGMA synchronous = NORMAL'),
          full: sqlite.prepare('PRAGMA synchronous = FULL'),
          begin: sqlite.prepare('BEGIN IMMEDIATE'),
          commit: sqlite.prepare('COMMIT'),
          rollback: sqlite.prepare('ROLLBACK'),
          anySuppression: sqlite.prepare('SELECT 1 FROM waitlist_suppressions LIMIT 1'),
          suppressed: sqlite.prepare('SELECT 1 FROM waitlist_suppressions WHERE email_hash = ?'),
          insert: sqlite.prepare(
            `INSERT INTO waitlist (${WAITLIST_COLUMNS.join(', ')}) VALUES (${WAITLIST_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT DO NOTHING`,
          ),
        });
        // NORMAL: this COMMIT writes the WAL without syncing it; syncWal does that off the event loop.
        if (syncWal) s.normal.run();
        try {
          s.begin.run();
          try {
            const { replayed, entries } = await spendSolutions(connection, spender, writes);
            const anySuppressed = s.anySuppression.get() !== undefined;
            const results = writes.map((write, i): WriteResult => {
              const inserted = anySuppressed && s.suppressed.get(write.suppressionHash()) !== undefined
                ? false
                : s.insert.run(WAITLIST_COLUMNS.map((column) => entries[i]![column])).changes === 1;
              return { inserted, replayed: replayed[i]! };
            });
            await beforeCommit?.(connection, results, entries);
            s.commit.run();
            return results;
          } catch (err) {
            if (sqlite.inTransaction) s.rollback.run();
            throw err;
          }
        } finally {
          if (syncWal) s.full.run();
        }
      });
      await syncWal?.();
      return written;
    };
  }
  const write = async (executor: Db, writes: readonly SignupWrite[], beforeCommit?: Parameters<SignupBatchCommit>[1]) => {
    const { replayed, entries } = await spendSolutions(executor, spender, writes);
    let inserted: boolean[];
    try {
      inserted = await insertBatchPostgres(executor, writes.map((w, i) => ({ ...w, entry: entries[i]! })));
    } catch (err) {
      // Outside a transaction the spend has committed: give the batch's solutions back, so that its
      // signups, retried one by one (service.ts), spend them again instead of being held as replays.
      // (If that fails too the database is failing: those signups are answered 503 or held.)
      if (!executor.isTransaction) await spender.giveBack(executor, writes.flatMap((w, i) => (w.solution && !replayed[i] ? [w.solution] : []))).catch(() => undefined);
      throw err;
    }
    const results = inserted.map((ok, i) => ({ inserted: ok, replayed: replayed[i]! }));
    await beforeCommit?.(executor, results, entries);
    return results;
  };
  // Without beforeCommit, no transaction: the solutions' spend and the insert are a statement (and
  // a round trip) each, where BEGIN … COMMIT around them would make four.
  return (writes, beforeCommit) => (beforeCommit ? db.transaction().execute((trx) => write(trx, writes, beforeCommit)) : write(db, writes));
}

/**
 * PostgreSQL: inserts the batch's new, unsuppressed addresses in one statement, in address order;
 * resolves to which were inserted, by index. The rows travel as one JSON array (JSON.stringify is
 * native; array literals escaped element by element cost more), read back by column name; the
 * suppressed ones are found by joining their hashes (by entry id) to the suppression list. The
 * statement is the function waitlist_insert_batch, planned once per connection (migration
 * 2026-11-29T1100, decision 073), not text planned again at every batch.
 */
async function insertBatchPostgres(executor: Db, writes: readonly SignupWrite[]): Promise<boolean[]> {
  const ordered = [...writes].sort((a, b) => compareText(a.entry.email.toLowerCase(), b.entry.email.toLowerCase()));
  const { rows } = await sql<{ id: string }>`
    SELECT id FROM waitlist_insert_batch(
      ${JSON.stringify(ordered.map((w) => w.entry))}::json,
      ${ordered.map((w) => w.entry.id)}::uuid[],
      ${ordered.map((w) => w.suppressionHash())}::text[]
    ) AS inserted(id)`.execute(executor);
  const ids = new Set(rows.map((r) => r.id));
  return writes.map((w) => ids.has(w.entry.id));
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Rows per multi-row INSERT: 22 parameters each, far below SQLite's 32,766 and PostgreSQL's 65,535. */
export const INSERT_CHUNK_SIZE = 500;

/**
 * Bulk insert (the CSV import): inserts the entries in multi-row statements, silently skipping any
 * whose e-mail is already stored (case-insensitively, by the unique index) or inserted by an
 * earlier chunk, and returns how many rows were inserted. Runs on the connection or transaction
 * it is given; callers wanting all-or-nothing pass a transaction.
 */
export async function insertWaitlistEntriesSkippingDuplicates(db: Db, entries: readonly WaitlistEntry[]): Promise<number> {
  let inserted = 0;
  for (let i = 0; i < entries.length; i += INSERT_CHUNK_SIZE) {
    const result = await db
      .insertInto('waitlist')
      .values(entries.slice(i, i + INSERT_CHUNK_SIZE))
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    inserted += Number(result.numInsertedOrUpdatedRows ?? 0n);
  }
  return inserted;
}
