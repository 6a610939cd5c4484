/// <reference lib="webworker" />
/**
 * The proof-of-work solver (SIGNUP_CHALLENGE=proof-of-work; decision 053), in a worker of its own so
 * the page never has a long task: posts the number n ≤ max whose SHA-256(salt + n) is the challenge
 * (pow-search.ts), or null when none is. Loaded only when the setting is on and the visitor starts
 * on the form (challenge.ts).
 */
import { searchRange } from './pow-search.js';

export interface SolveRequest {
  challenge: string;
  salt: string;
  max: number;
}

const scope = self as unknown as DedicatedWorkerGlobalScope;

scope.onmessage = (event: MessageEvent<SolveRequest>) => {
  const { challenge, salt, max } = event.data;
  scope.postMessage(searchRange(challenge, salt, 0, max));
};
