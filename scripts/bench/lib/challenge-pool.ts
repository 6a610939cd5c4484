/**
 * The signup bench's solved proof-of-work challenges (signup.ts --checks-compare, the product with
 * SIGNUP_CHALLENGE=proof-of-work), kept in the load generator's process: fetched from the running
 * product and solved before a measured phase (not timed), one per signup the phase may send, each
 * used once. As a browser does (src/web/waitlist/challenge.ts): GET CHALLENGE_PATH, the form's own
 * search for the number (src/web/waitlist/pow-search.ts), and the solution sent in CHALLENGE_FIELD as
 * base64 of the JSON ChallengeSolution; the signup then comes from the client address that fetched
 * the challenge (X-Forwarded-For), as a visitor's fetch and post come from one address.
 */
import { randomClientIp } from './addresses.js';
import { searchRange } from '../../../src/web/waitlist/pow-search.js';
import { CHALLENGE_ALGORITHM, CHALLENGE_PATH, challengeExpiresAt, type ChallengeSolution, type SignupChallenge } from '../../../src/shared/waitlist/challenge-contract.js';

/** A solved challenge, waiting for its signup. */
export interface Solved {
  /** The client address that fetched it, for the signup's X-Forwarded-For. */
  ip: string;
  /** The CHALLENGE_FIELD value. */
  solution: string;
  /** When its challenge expires, ms since the epoch. */
  expiresAt: number;
}

export interface FillResult {
  /** Solutions ready now. */
  size: number;
  /** Fetched and solved by this fill. */
  added: number;
  /** Dropped by this fill: their challenge expires too soon to be used in the next phase. */
  expired: number;
  seconds: number;
}

/** Solutions whose challenge expires sooner than this are dropped at a fill (they could expire mid-phase). */
const KEEP_MS = 10 * 60_000;
/** Challenges fetched at once (the solving, synchronous, runs between their answers). */
const FETCHERS = 8;

async function fetchSolved(port: number, ip: string): Promise<Solved> {
  const response = await fetch(`http://127.0.0.1:${port}${CHALLENGE_PATH}`, { headers: { accept: 'application/json', 'x-forwarded-for': ip } });
  if (!response.ok) throw new Error(`GET ${CHALLENGE_PATH} answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
  const c = (await response.json()) as SignupChallenge;
  const number = searchRange(c.challenge, c.salt, 0, c.maxnumber);
  if (number === null) throw new Error(`no number up to ${c.maxnumber} solves the challenge ${c.challenge}`);
  const payload: ChallengeSolution = { algorithm: CHALLENGE_ALGORITHM, challenge: c.challenge, number, salt: c.salt, signature: c.signature };
  return { ip, solution: Buffer.from(JSON.stringify(payload)).toString('base64'), expiresAt: challengeExpiresAt(c) };
}

export function challengePool(ipv6Share: number) {
  let items: Solved[] = [];
  let head = 0;

  return {
    /**
     * Fetches and solves challenges from the product on `port` until `size` are ready. `reset`: a
     * new product (another key signs its challenges), so the solutions kept so far are dropped.
     */
    async fill(port: number, size: number, reset: boolean): Promise<FillResult> {
      const started = performance.now();
      const before = items.length - head;
      items = reset ? [] : items.slice(head).filter((s) => s.expiresAt - Date.now() > KEEP_MS);
      head = 0;
      const expired = reset ? 0 : before - items.length;
      let added = 0;
      let fetching = 0;
      const fetcher = async () => {
        while (items.length + fetching < size) {
          fetching += 1;
          try {
            items.push(await fetchSolved(port, randomClientIp(ipv6Share)));
            added += 1;
          } finally {
            fetching -= 1;
          }
        }
      };
      await Promise.all(Array.from({ length: FETCHERS }, fetcher));
      return { size: items.length, added, expired, seconds: (performance.now() - started) / 1000 };
    },
    /** The next unused solution, or null when the pool has run dry. */
    take(): Solved | null {
      return head < items.length ? items[head++]! : null;
    },
  };
}
