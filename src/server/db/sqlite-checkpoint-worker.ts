import SQLite from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

/** What the checkpoint thread is told (sqlite-checkpointer.ts), and what it answers. */
export type CheckpointRequest = { type: 'checkpoint'; id: number } | { type: 'close' };
/** A checkpoint's answer carries its request's id (none: the thread's own start, or given by the server). */
export type CheckpointAnswer =
  | { type: 'ready' }
  | { type: 'checkpointed'; id: number; busy: number; log: number; checkpointed: number }
  | { type: 'failed'; id?: number; message: string };

// Runs the WAL checkpoints of a SQLite database on a connection of its own, in a thread of its
// own: a checkpoint copies the WAL's pages into the database file and syncs both (synchronous=FULL
// here, as SQLite's own automatic checkpoint would), and those syncs would otherwise stop the
// server's event loop for milliseconds at a time. PASSIVE: it never waits for, nor blocks, the
// server's reads and writes.
const { filename } = workerData as { filename: string };
const post = (answer: CheckpointAnswer) => parentPort!.postMessage(answer);
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

let db: SQLite.Database;
let checkpoint: SQLite.Statement;
try {
  db = new SQLite(filename, { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = FULL');
  // Never checkpoint on commit: this connection writes nothing, and it must not run a second schedule.
  db.pragma('wal_autocheckpoint = 0');
  checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  post({ type: 'ready' });
} catch (err) {
  post({ type: 'failed', message: message(err) });
  process.exit(1);
}

parentPort!.on('message', (request: CheckpointRequest) => {
  if (request.type === 'close') {
    db.close();
    parentPort!.close();
    return;
  }
  try {
    const result = checkpoint.get() as { busy: number; log: number; checkpointed: number };
    post({ type: 'checkpointed', id: request.id, ...result });
  } catch (err) {
    post({ type: 'failed', id: request.id, message: message(err) });
  }
});
