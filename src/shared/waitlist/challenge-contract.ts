/**
 * The signup form's proof-of-work challenge (SIGNUP_CHALLENGE=proof-of-work; issue 28 point 4,
 * decision 053), shared by the form's solver and the server. Plain types and constants only: the
 * landing page loads no schema library.
 *
 * GET CHALLENGE_PATH → 200 SignupChallenge (cache-control: no-store), rate limited per client
 * address; 404 while the setting is off. The form sends the solution in CHALLENGE_FIELD: base64 of
 * the JSON `{algorithm, challenge, number, salt, signature}` (the ALTCHA payload), where `number` is
 * the one whose SHA-256(salt + number), in lower-case hex, is `challenge`.
 */
export const CHALLENGE_PATH = '/api/signup/challenge';

/** The meta element's name that tells the pages the setting is on (the server adds it; off, pages are as built). */
export const CHALLENGE_META = 'signup-challenge';

/** The signup body's field holding the solution (the name the ALTCHA widget uses too). */
export const CHALLENGE_FIELD = 'altcha';

export const CHALLENGE_ALGORITHM = 'SHA-256';

export interface SignupChallenge {
  algorithm: typeof CHALLENGE_ALGORITHM;
  /** SHA-256(salt + number), lower-case hex. */
  challenge: string;
  /** The largest number to try. */
  maxnumber: number;
  /** Random hex with the expiry: `<hex>?expires=<unix seconds>&`. */
  salt: string;
  /** The server's HMAC of `challenge`. */
  signature: string;
}

/** What the form sends back, base64-encoded JSON in CHALLENGE_FIELD. */
export interface ChallengeSolution {
  algorithm: typeof CHALLENGE_ALGORITHM;
  challenge: string;
  number: number;
  salt: string;
  signature: string;
}

/** The expiry a challenge's salt carries, in milliseconds since the epoch (NaN when it has none). */
export function challengeExpiresAt(challenge: Pick<SignupChallenge, 'salt'>): number {
  const m = /[?&]expires=(\d+)/.exec(challenge.salt);
  return m ? Number(m[1]) * 1000 : Number.NaN;
}
