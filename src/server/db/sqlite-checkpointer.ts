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
 * Each round is two passes (decision 067). A PASSIVE checkpoint never reaches the end of a WAL that
 * is written to while it runs, and SQLite starts the WAL over from its beginning only when a
 * checkpoint has copied every frame in it; under a steady stream of signups that never happened, and
 * the WAL grew by some 12 kB a signup without end (hundreds of MB in a minute, each page read
 * slower as the WAL index grew). So the first pass copies what was written, with signups going on;
 * then the second pass runs while `hold` keeps the server's connection idle (Kysely's connection
 * mutex: queries and the group commit wait, asynchronously, the event loop runs on), and so copies
 * the few frames written during the first and reaches the end: the next write starts the WAL over.
 *
 * If the thread cannot start or is lost, the connection goes back to SQLite's own checkpoints (a
 * warning is logged), so the WAL never grows without bound.
 */
export const INTERVAL_MS = 1_000;
/** The longest the connection is held for a checkpoint's second pass, should the thread not answer. */
const HELD_LIMIT_MS = 2_000;
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
  let inFlight = false;
  /** The timer's two passes under way, if any. */
  let round: Promise<void> | null = null;
  let closed = false;
  let done = 0;
  const answered: Array<(answer: CheckpointAnswer) => void> = [];

  const fallBack = (reason: string) => {
    if (closed || !worker) return;
    worker = null;
    clearInterval(timer);
    if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    log.warn({ reason }, 'sqlite: the checkpoint thread is gone; checkpoints run on commit again');
    for (const resolve of answered.splice(0)) resolve({ type: 'failed', message: reason });
  };

  const send = (request: CheckpointRequest) => worker?.postMessage(request);

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
    inFlight = false;
    if (answer.type === 'checkpointed') done += 1;
    if (answer.type === 'failed') log.warn({ reason: answer.message }, 'sqlite: checkpoint failed; it is tried again');
    answered.shift()?.(answer);
  });
  started.on('error', (err) => fallBack(err.message));
  started.on('exit', (code) => fallBack(`checkpoint thread exited with code ${code}`));

  /** One checkpoint by the thread; resolves to its answer (failed: no thread, or none within HELD_LIMIT_MS). */
  const checkpoint = () =>
    new Promise<CheckpointAnswer>((resolve) => {
      if (!worker) {
        resolve({ type: 'failed', message: 'no thread' });
        return;
      }
      answered.push(resolve);
      send({ type: 'checkpoint' });
      // The connection is never held longer than this, whatever the thread does.
      setTimeout(() => resolve({ type: 'failed', message: 'no answer in time' }), HELD_LIMIT_MS).unref();
    });

  const timer = setInterval(() => {
    if (inFlight || round || !sqlite.open) return;
    const changes = totalChanges.get() as number;
    if (changes === lastChanges) return;
    lastChanges = changes;
    inFlight = true;
    round = (async () => {
      // The bulk, with writes going on; then the rest with the connection idle, to the WAL's end.
      const first = await checkpoint();
      if (first.type === 'checkpointed' && hold && worker && !closed) {
        inFlight = true;
        await hold(checkpoint);
      }
    })().finally(() => (round = null));
  }, INTERVAL_MS);
  timer.unref();

  return {
    close: () => {
      closed = true;
      clearInterval(timer);
      for (const resolve of answered.splice(0)) resolve({ type: 'failed', message: 'closed' });
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
    checkpointNow: () =>
      new Promise<CheckpointAnswer>((resolve) => {
        if (!worker) {
          resolve({ type: 'failed', message: 'no thread' });
          return;
        }
        answered.push(resolve);
        inFlight = true;
        send({ type: 'checkpoint' });
      }),
    crashForTest: async () => {
      const exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
      await started.terminate();
      await exited;
    },
  };
}
