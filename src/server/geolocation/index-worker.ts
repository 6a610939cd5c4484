import { parentPort, workerData } from 'node:worker_threads';
import { locationFromRecord } from './mmdb-record.js';
import { writeRangeIndex, type BuildResult } from './range-index-build.js';
import type { IndexIdentity } from './range-index-format.js';

/** What the worker tells the thread that started it (mmdb.ts). */
export type IndexWorkerMessage =
  | { type: 'started' }
  | { type: 'built'; result: BuildResult }
  | { type: 'failed'; name: string; message: string; syscall?: string; code?: string };

// Builds one lookup index in a worker thread: reading a whole MMDB file and walking its tree takes
// a few hundred MB that the server's own heap would keep after the build. The thread's memory is
// returned when it ends.
const { identity, file } = workerData as { identity: IndexIdentity; file: string };
const post = (message: IndexWorkerMessage) => parentPort!.postMessage(message);
try {
  const result = writeRangeIndex(identity, file, locationFromRecord, () => post({ type: 'started' }));
  post({ type: 'built', result });
} catch (err) {
  const e: NodeJS.ErrnoException = err instanceof Error ? err : new Error(String(err));
  post({ type: 'failed', name: e.name, message: e.message, syscall: e.syscall, code: e.code });
}
