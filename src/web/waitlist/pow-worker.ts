/// <reference lib="webworker" />
/**
 * The proof-of-work solver (SIGNUP_CHALLENGE=proof-of-work; decision 053), in a worker of its own so
 * the page never has a long task: finds the number n ≤ max whose SHA-256(salt + n), in hex, is the
 * challenge, with Web Crypto, a batch of digests at a time. Posts the number, or null when none is.
 * Loaded only when the setting is on and the visitor starts on the form (challenge.ts).
 */
export interface SolveRequest {
  challenge: string;
  salt: string;
  max: number;
}

/** Digests in flight at once: enough to keep Web Crypto busy, few enough to stop soon after the answer. */
const BATCH = 256;

const scope = self as unknown as DedicatedWorkerGlobalScope;

scope.onmessage = async (event: MessageEvent<SolveRequest>) => {
  const { challenge, salt, max } = event.data;
  const target = new Uint8Array(32);
  for (let i = 0; i < 32; i++) target[i] = parseInt(challenge.slice(i * 2, i * 2 + 2), 16);
  const encoder = new TextEncoder();
  for (let start = 0; start <= max; start += BATCH) {
    const count = Math.min(BATCH, max - start + 1);
    const digests = await Promise.all(
      Array.from({ length: count }, (_, i) => crypto.subtle.digest('SHA-256', encoder.encode(salt + (start + i)))),
    );
    for (let i = 0; i < count; i++) {
      const bytes = new Uint8Array(digests[i]!);
      let j = 0;
      while (j < 32 && bytes[j] === target[j]) j++;
      if (j === 32) {
        scope.postMessage(start + i);
        return;
      }
    }
  }
  scope.postMessage(null);
};
