import {
  CHALLENGE_ALGORITHM,
  CHALLENGE_META,
  CHALLENGE_PATH,
  challengeExpiresAt,
  type ChallengeSolution,
  type SignupChallenge,
} from '../../shared/waitlist/challenge-contract.js';

/**
 * The signup form's proof of work (SIGNUP_CHALLENGE=proof-of-work, decision 053), without anything
 * to see or do: when the visitor starts on the form, a challenge is fetched and solved in a worker
 * (pow-worker.ts) while they type; the form waits for the solution on submit if it is not there yet.
 * A solution is good for one signup and until its challenge expires, so each submit takes a fresh
 * one. Anything that fails (no answer, no Web Crypto, a slow device) gives no solution, and the
 * signup is sent without one: the server then holds it for an admin, it is never lost.
 */

/** Whether the server asks for a proof of work (it adds the meta element to every page when it does). */
export function challengeRequired(): boolean {
  return typeof document !== 'undefined' && document.querySelector(`meta[name="${CHALLENGE_META}"]`) !== null;
}

export interface ChallengeRun {
  /** The base64 payload for the signup's CHALLENGE_FIELD, or null. */
  solution: Promise<string | null>;
  /** When its challenge stops being accepted (ms since the epoch); 0 until it is known. */
  expiresAt: number;
}

/** How long a submit waits for a solution before sending the signup without one. */
const SOLVE_TIMEOUT_MS = 20_000;
/** A run whose challenge expires sooner than this is replaced on submit. */
const EXPIRY_MARGIN_MS = 30_000;

export function startChallenge(): ChallengeRun {
  const run: ChallengeRun = { solution: Promise.resolve(null), expiresAt: 0 };
  run.solution = new Promise<string | null>((resolve) => {
    let worker: Worker | null = null;
    const done = (value: string | null) => {
      worker?.terminate();
      resolve(value);
    };
    setTimeout(() => done(null), SOLVE_TIMEOUT_MS);
    fetch(CHALLENGE_PATH, { headers: { accept: 'application/json' } })
      .then((response) => (response.ok ? (response.json() as Promise<SignupChallenge>) : null))
      .then((c) => {
        if (!c) return done(null);
        run.expiresAt = challengeExpiresAt(c);
        worker = new Worker(new URL('./pow-worker.ts', import.meta.url), { type: 'module' });
        worker.onerror = () => done(null);
        worker.onmessage = (event: MessageEvent<number | null>) => {
          const number = event.data;
          if (number === null) return done(null);
          const payload: ChallengeSolution = { algorithm: CHALLENGE_ALGORITHM, challenge: c.challenge, number, salt: c.salt, signature: c.signature };
          done(btoa(JSON.stringify(payload)));
        };
        worker.postMessage({ challenge: c.challenge, salt: c.salt, max: c.maxnumber });
      })
      .catch(() => done(null));
  });
  return run;
}

/** The run to submit with: the one under way unless its challenge is (about to be) expired. */
export function usableRun(run: ChallengeRun | null): ChallengeRun {
  return run && (run.expiresAt === 0 || run.expiresAt - Date.now() > EXPIRY_MARGIN_MS) ? run : startChallenge();
}
