import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../runtime/module-worker.js';
import type { GuessAnswer, GuessRequest } from './guess-estimate-worker.js';

/**
 * The password guessability estimate, run in a worker thread (guess-estimate-worker.ts) so that
 * zxcvbn's dictionaries (about 30 MB of heap, plus the thread's own few MB) are held only while
 * passwords are being checked: the thread starts on the first estimate (about half a second to
 * load and rank the dictionaries), answers the estimates that follow, and ends after a minute
 * without one, returning all of that memory. A server that only takes signups never loads them.
 *
 * When no worker thread can start, or the thread is lost with estimates waiting, those estimates run
 * in this thread instead (the module then stays loaded): a password is always checked.
 */

/** How long the thread waits for another estimate before it ends (tests shorten it). */
let idleMs = 60_000;

interface Waiting {
  request: GuessRequest;
  resolve(score: number): void;
  reject(err: Error): void;
}

let worker: Worker | null = null;
let idleTimer: NodeJS.Timeout | null = null;
let nextId = 1;
const waiting = new Map<number, Waiting>();

function stopWorker(): void {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = null;
  const ending = worker;
  worker = null;
  estimateWaitingHere();
  void ending?.terminate();
}

/** The thread is gone: what it had not answered is estimated here. */
function estimateWaitingHere(): void {
  const pending = [...waiting.values()];
  waiting.clear();
  for (const w of pending) estimateInThisThread(w.request.password, w.request.knownWords).then(w.resolve, w.reject);
}

function startWorker(): Worker {
  const started = startModuleWorker(import.meta.url, 'guess-estimate-worker');
  started.on('message', (answer: GuessAnswer) => {
    const w = waiting.get(answer.id);
    if (!w) return;
    waiting.delete(answer.id);
    if ('error' in answer) w.reject(new Error(`password estimate failed: ${answer.error}`));
    else w.resolve(answer.score);
    if (waiting.size === 0 && worker === started) {
      // Idle: the thread never keeps the process alive, and ends after idleMs.
      started.unref();
      idleTimer = setTimeout(stopWorker, idleMs);
      idleTimer.unref();
    }
  });
  const lost = () => {
    if (worker !== started) return;
    worker = null;
    estimateWaitingHere();
  };
  started.on('error', lost);
  started.on('exit', lost);
  return started;
}

async function estimateInThisThread(password: string, knownWords: readonly string[]): Promise<number> {
  const { guessScore } = await import('./guess-estimate.js');
  return guessScore(password, knownWords);
}

/** zxcvbn's score (0 to 4) of `password`, `knownWords` counting as words an attacker tries first. */
export function estimateGuessScore(password: string, knownWords: readonly string[]): Promise<number> {
  if (!worker) {
    try {
      worker = startWorker();
    } catch {
      return estimateInThisThread(password, knownWords);
    }
  }
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = null;
  const id = nextId++;
  const request: GuessRequest = { id, password, knownWords };
  // While an estimate is waiting the thread keeps the process alive (a CLI awaiting it).
  worker.ref();
  return new Promise<number>((resolve, reject) => {
    waiting.set(id, { request, resolve, reject });
    worker!.postMessage(request);
  });
}

/** Whether the estimate's thread is running (tests). */
export function guessEstimatorRunning(): boolean {
  return worker !== null;
}

/**
 * Ends the thread now; estimates still waiting are finished in this thread. Tests use it, and
 * `idleMs` to shorten the wait before an idle thread ends; a server shutting down need not call
 * it: an idle thread never holds the process up.
 */
export function stopGuessEstimator(options: { idleMs?: number } = {}): void {
  stopWorker();
  if (options.idleMs !== undefined) idleMs = options.idleMs;
}
