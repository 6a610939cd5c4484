import type { Kysely } from 'kysely';
import { isDatabaseUnavailable } from '../db/database.js';
import type { Database } from '../db/schema.js';
import type { MailService, TemplatedMessage } from '../mail/index.js';
import { webhookEvents, type WebhookQueue } from '../webhooks/index.js';
import type { SolutionSpender } from '../challenge/index.js';
import { signupBatchCommitter, type SignupWrite, type WriteResult } from './repository.js';

/**
 * Group commit for signups. Signups that arrive together are written in one transaction, so one
 * commit (one fsync on SQLite with synchronous=FULL, one WAL flush on PostgreSQL) acknowledges many
 * of them; each signup's promise settles only once the transaction holding it has committed, so an
 * acknowledged signup survives a crash exactly as before.
 *
 * A signup arriving while the database is not busy waits `gatherMs` (2 ms) for company before its
 * batch is written, so that at a steady, moderate rate (1,000 signups/s) several signups share a
 * commit: a commit's cost hardly depends on its size (on SQLite every index page it touches is
 * written to the WAL whole, some 16 pages for one signup, then synced), and a commit of one signup
 * cost three times the CPU per signup of a commit of four (decision 069). Signups arriving while the
 * batches under way (at most `concurrency`) are being committed are queued and all written by the
 * next transaction, started as soon as one of those ends, without waiting: under load the batch
 * grows by itself with the time a commit takes. A full batch (`maxBatch`) never waits.
 *
 * The batch only takes the fast path: new addresses. An address already on the list (or repeated
 * in the batch) comes back not inserted and the caller handles it on its own afterwards (service.ts).
 * A signup's proof-of-work solution is spent in the batch's transaction (challenge/spent.ts); one
 * spent before comes back `replayed`, its entry stored held and sent nothing. A
 * batch that fails as a whole rejects every signup it held with the error; the caller retries each
 * alone, so a row that cannot be written fails only its own request.
 */

export interface SignupBatchItem extends SignupWrite {
  /** The e-mail this entry causes when it is inserted (confirmation or welcome), queued in the same transaction. */
  mail: TemplatedMessage | null;
}

/** Settings and hooks of the group commit that tests use (app option `signupBatch`). */
export interface SignupBatchHooks {
  /**
   * Called inside each batch's transaction after its writes, before COMMIT (tests hold the commit
   * here to show that no signup is answered before it).
   */
  beforeCommit?(size: number): void | Promise<void>;
  /** Batches under way at once (see SignupBatcherOptions); 1 makes the batches' composition predictable. */
  concurrency?: number;
  /** See SignupBatcherOptions.gatherMs. */
  gatherMs?: number;
}

export interface SignupBatcherOptions {
  db: Kysely<Database>;
  mail: Pick<MailService, 'enqueueMany'>;
  /** app.webhooks: each inserted entry's `signup.created` event is queued in the batch's transaction. */
  webhooks: Pick<WebhookQueue, 'wants' | 'enqueue'>;
  /** Spends the signups' proof-of-work solutions in the batch's transaction. */
  spender: SolutionSpender;
  log: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  hooks?: SignupBatchHooks;
  /** Most signups per transaction (a bigger queue is written by consecutive transactions). */
  maxBatch?: number;
  /**
   * Batches under way at once (2): while one waits for its commit to reach the disk (the WAL sync
   * on SQLite, the round trip and WAL flush on PostgreSQL), the next can already be written.
   */
  concurrency?: number;
  /** How long the first signup of a batch waits for others to share its commit, ms (2; 0: the next turn of the event loop). */
  gatherMs?: number;
}

/** The default of SignupBatcherOptions.gatherMs. */
export const GATHER_MS = 2;

interface Pending {
  item: SignupBatchItem;
  resolve(result: WriteResult): void;
  reject(err: unknown): void;
}

export interface SignupBatcher {
  /** Resolves once the batch holding `item` has committed: inserted or not (the address was known), its solution replayed or not. */
  submit(item: SignupBatchItem): Promise<WriteResult>;
}

export function createSignupBatcher(options: SignupBatcherOptions): SignupBatcher {
  const { db, mail, webhooks, spender, log, hooks } = options;
  const maxBatch = options.maxBatch ?? 1000;
  const concurrency = options.concurrency ?? hooks?.concurrency ?? 2;
  const gatherMs = options.gatherMs ?? hooks?.gatherMs ?? GATHER_MS;
  const commit = signupBatchCommitter(db, spender);
  let queue: Pending[] = [];
  let underWay = 0;
  let scheduled = false;

  const commitBatch = (items: readonly SignupBatchItem[]) => {
    const events = webhooks.wants('signup.created');
    // Without e-mail, webhooks or a hook the batch is its writes alone (on PostgreSQL without solutions: one statement, one round trip).
    if (!hooks?.beforeCommit && !events && !items.some((item) => item.mail)) return commit(items);
    return commit(items, async (trx, results, entries) => {
      // A held entry (no valid solution, or one replayed) is no signup yet: no e-mail, and its event comes when an admin approves it.
      const isCreated = (i: number) => results[i]!.inserted && entries[i]!.status !== 'held';
      const messages: TemplatedMessage[] = items.flatMap((item, i) => (item.mail && isCreated(i) ? [item.mail] : []));
      if (messages.length > 0) await mail.enqueueMany(trx, messages);
      if (events) {
        const created = entries.filter((_, i) => isCreated(i));
        if (created.length > 0) await webhooks.enqueue(trx, created.map((entry) => webhookEvents.signupCreated(entry)));
      }
      await hooks?.beforeCommit?.(items.length);
    });
  };

  const settle = (batch: Pending[], results: WriteResult[] | null, err?: unknown) => {
    if (results) {
      batch.forEach((p, i) => p.resolve(results[i]!));
      return;
    }
    // Logged once per batch; each request then gets its own answer (signup.ts).
    if (isDatabaseUnavailable(err)) log.error({ err, signups: batch.length }, 'waitlist signup batch: database unavailable');
    else log.warn({ err, signups: batch.length }, 'waitlist signup batch failed; writing its signups one by one');
    for (const p of batch) p.reject(err);
  };

  /** Starts batches while there is a queue and room; each one that ends starts the next. */
  const pump = () => {
    while (queue.length > 0 && underWay < concurrency) {
      const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch);
      queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch);
      underWay += 1;
      commitBatch(batch.map((p) => p.item)).then(
        (results) => settle(batch, results),
        (err: unknown) => settle(batch, null, err),
      ).finally(() => {
        underWay -= 1;
        pump();
      });
    }
  };

  return {
    submit(item) {
      return new Promise<WriteResult>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        // The first signup of a batch waits gatherMs for company (a full queue goes at once); while
        // batches are under way, the queue waits for one to end, which starts the next at once.
        if (queue.length >= maxBatch && underWay < concurrency) {
          pump();
          return;
        }
        if (scheduled || underWay >= concurrency) return;
        scheduled = true;
        const go = () => {
          scheduled = false;
          pump();
        };
        if (gatherMs > 0) setTimeout(go, gatherMs);
        else setImmediate(go);
      });
    },
  };
}
