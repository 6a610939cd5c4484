import type SQLite from 'better-sqlite3';
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../runtime/module-worker.js';
import type { CheckpointAnswer, CheckpointRequest } from './sqlite-checkpoint-worker.js';

/**
 * WAL checkpoints off the event loop, for the server's SQLite connection.
 *
 * SQLite checkpoints on its own at the commit that takes the WAL past 1,000 pages: that commit
 * copies the pages into the database file and syncs it and the WAL, on the calling thread. In the
 * server that is the event loop, stopped for 10-20 ms about once a second under a stream of
 * signups (the slowest commits, and every request waiting behind them). Here the connection's own
 * checkpoints are turned off (wal_autocheckpoint=0) and a worker thread with a connection of its
 * own (sqlite-checkpoint-worker.ts) runs a PASSIVE checkpoint every INTERVAL_MS while this
 * connection has written since the last one. Durability does not change: a checkpoint only copies
 * committed, synced frames, and syncs the database file before the WAL can be reused, as SQLite's
 * own does; it just runs elsewhere.
 *
 * Each round is two passes or more (decisions 067, 070). A PASSIVE checkpoint never reaches the end
 * of a WAL that is written to while it runs, and SQLite starts the WAL over from its beginning only
 * when a checkpoint has copied every frame in it; under a steady stream of signups that never
 * happened, and the WAL grew by some 12 kB a signup without end (hundreds of MB in a minute, each
 * page read slower as the WAL index grew). So passes run with signups going on, each copying what
 * was written during the one before, until one is short (SHORT_PASS_MS) or MAX_OPEN_PASSES have run;
 * then a last pass runs while `hold` keeps the server's connection idle (Kysely's connection mutex:
 * queries and the group commit wait, asynchronously, the event loop runs on), so it copies the few
 * frames written meanwhile and reaches the end: the next write starts the WAL over. Only that pass
 * has a short time limit: the others hold nothing, however long a large WAL takes to copy (a thread
 * that answers nothing for a minute is taken for stuck).
 *
 * If the thread cannot start or is lost, the connection goes back to SQLite's own checkpoints (a
 * warning is logged), so the WAL never grows without bound.
 */
export const INTERVAL_MS = 1_000;
/** The longest the connection is held for a checkpoint's last pass, should the thread not answer. */
const HELD_LIMIT_MS = 2_000;
/** A pass this short leaves little for the held pass: a few ms of writes. */
const SHORT_PASS_MS = 50;
/** Passes with writes going on before the held one, however long they take (below STUCK_MS). */
const MAX_OPEN_PASSES = 4;
/** A pass not answered in this long: the thread is taken for stuck, and SQLite checkpoints on commit again. */
const STUCK_MS = 60_000;
/** The answer a request gets when the thread does not answer within its limit. */
const NO_ANSWER: CheckpointAnswer = { type: 'failed', message: 'no answer in time' };
/** SQLite's default, restored when the thread is lost. */
const AUTOCHECKPOINT_PAGES = 1_000;

export interface CheckpointLog {
  warn(obj: object, msg: string): void;
}

export interface SqliteCheckpointer {
  /** Resolves once the thread has closed its connection and ended. */
  close(): Promise<void>;
  /** Tests: how many checkpoints the thread has run. */
  checkpoints(): number;
  /** Tests: the next checkpoint's answer (it runs now, whether or not anything was written). */
  checkpointNow(): Promise<CheckpointAnswer>;
  /** Tests: ends the thread as if it had crashed. */
  crashForTest(): Promise<void>;
}

/** Runs `work` while the server's connection does nothing else (openDatabase: Kysely's `db.connection()`). */
export type ConnectionHold = <T>(work: () => Promise<T>) => Promise<T>;

export function startSqliteCheckpointer(sqlite: SQLite.Database, log: CheckpointLog, hold?: ConnectionHold): SqliteCheckpointer {
  const totalChanges = sqlite.prepare('SELECT total_changes() AS n').pluck();
  let worker: Worker | null = null;
  let lastChanges = -1;
  /** The timer's passes under way, if any. */
  let round: Promise<void> | null = null;
  let closed = false;
  let done = 0;
  let nextId = 0;
  /** Requests sent and not yet answered (or given up on), by id. */
  const pending = new Map<number, (answer: CheckpointAnswer) => void>();
  const settleAll = (message: string) => {
    for (const resolve of pending.values()) resolve({ type: 'failed', message });
    pending.clear();
  };

  const fallBack = (reason: string) => {
    if (closed || !worker) return;
    worker = null;
    clearInterval(timer);
    if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    log.warn({ reason }, 'sqlite: the checkpoint thread is gone; checkpoints run on commit again');
    settleAll(reason);
  };

  try {
    // The thread allocates next to nothing: the smallest young generation V8 allows (2 MB less RSS).
    const resourceLimits = { maxYoungGenerationSizeMb: 1 };
    worker = startModuleWorker(import.meta.url, 'sqlite-checkpoint-worker', { workerData: { filename: sqlite.name }, resourceLimits });
  } catch (err) {
    log.warn({ err }, 'sqlite: no checkpoint thread; checkpoints run on commit');
    return { close: async () => {}, checkpoints: () => 0, checkpointNow: async () => ({ type: 'failed', message: 'no thread' }), crashForTest: async () => {} };
  }
  const started = worker;
  started.unref();
  sqlite.pragma('wal_autocheckpoint = 0');
  started.on('message', (answer: CheckpointAnswer) => {
    if (answer.type === 'ready') return;
    if (answer.type === 'checkpointed') done += 1;
    if (answer.type === 'failed') log.warn({ reason: answer.message }, 'sqlite: checkpoint failed; it is tried again');
    if (answer.id === undefined) return;
    const resolve = pending.get(answer.id);
    pending.delete(answer.id);
    resolve?.(answer);
  });
  started.on('error', (err) => fallBack(err.message));
  started.on('exit', (code) => fallBack(`checkpoint thread exited with code ${code}`));

  /**
   * One checkpoint by the thread; resolves to its answer, or to failed: no thread, or none within
   * `limitMs`. An answer that comes after the limit is dropped; its pass still counts.
   */
  const checkpoint = (limitMs: number) =>
    new Promise<CheckpointAnswer>((resolve) => {
      if (!worker) {
        resolve({ type: 'failed', message: 'no thread' });
        return;
      }
      const id = nextId++;
      const timer = setTimeout(() => {
        if (pending.delete(id)) resolve(NO_ANSWER);
      }, limitMs).unref();
      pending.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      worker.postMessage({ type: 'checkpoint', id } satisfies CheckpointRequest);
    });

  const timer = setInterval(() => {
    if (round || !sqlite.open) return;
    const changes = totalChanges.get() as number;
    if (changes === lastChanges) return;
    lastChanges = changes;
    round = (async () => {
      // The bulk, with writes going on, until a pass is short; then the rest with the connection idle, to the WAL's end.
      for (let pass = 1; ; pass++) {
        const began = performance.now();
        const answer = await checkpoint(STUCK_MS);
        if (answer === NO_ANSWER) {
          // Alive but not answering (a hung disk): SQLite's own checkpoints rather than a WAL without end.
          fallBack(`no checkpoint answer in ${STUCK_MS / 1000} s`);
          void started.terminate();
        }
        if (answer.type !== 'checkpointed' || closed || !worker) return;
        if (performance.now() - began < SHORT_PASS_MS || pass >= MAX_OPEN_PASSES) break;
      }
      if (!hold) return;
      const held = await hold(() => checkpoint(HELD_LIMIT_MS));
      if (held === NO_ANSWER) log.warn({ heldMs: HELD_LIMIT_MS }, 'sqlite: a held checkpoint pass took too long; the connection was let go');
    })().finally(() => (round = null));
  }, INTERVAL_MS);
  timer.unref();

  return {
    close: () => {
      closed = true;
      clearInterval(timer);
      settleAll('closed');
      if (!worker) return Promise.resolve();
      const ending = worker;
      worker = null;
      return new Promise<void>((resolve) => {
        const kill = setTimeout(() => void ending.terminate(), 10_000);
        ending.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        ending.postMessage({ type: 'close' } satisfies CheckpointRequest);
      });
    },
    checkpoints: () => done,
    checkpointNow: () => checkpoint(STUCK_MS),
    crashForTest: async () => {
      const exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
      await started.terminate();
      await exited;
    },
  };
}
