import { parentPort } from 'node:worker_threads';
import { guessScore } from './guess-estimate.js';

/** A request to the estimate's worker thread (guess-estimator.ts), and its answer. */
export interface GuessRequest {
  id: number;
  password: string;
  knownWords: readonly string[];
}
export type GuessAnswer = { id: number; score: number } | { id: number; error: string };

// Answers estimates one after another; the thread that started it ends it when it is idle.
parentPort!.on('message', ({ id, password, knownWords }: GuessRequest) => {
  let answer: GuessAnswer;
  try {
    answer = { id, score: guessScore(password, knownWords) };
  } catch (err) {
    answer = { id, error: err instanceof Error ? err.message : String(err) };
  }
  parentPort!.postMessage(answer);
});
