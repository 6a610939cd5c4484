import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createChallenge } from 'altcha-lib/v1';
import type { SecretBox } from '../crypto/secret-box.js';
import type { ChallengeConfig } from '../config.js';
import type { HeldReason } from '../../shared/waitlist/entry.js';
import { CHALLENGE_ALGORITHM, type SignupChallenge } from '../../shared/waitlist/challenge-contract.js';

/**
 * The signup form's proof of work (issue 28 point 4, decision 053), in the ALTCHA protocol as
 * altcha-lib writes and checks it: the server picks a random number below `maxnumber` and a salt
 * carrying the expiry (`…?expires=<unix seconds>&`), and sends SHA-256(salt + number) with its HMAC
 * under a key only the server has; the browser finds the number by trying them all, and sends
 * back the challenge with the number (base64 JSON, the `altcha` field). The signature makes the
 * challenge the server's own and the expiry unforgeable; the spent list (spent.ts) makes each
 * challenge good for one signup, across instances.
 */

/** The HMAC key: derived from the server's secret (the secret box's keyed hash), the same on every instance. */
export function challengeHmacKey(box: Pick<SecretBox, 'hmac'>): string {
  return box.hmac('altcha', 'signup challenge hmac key v1');
}

export interface ChallengeIssuer {
  issue(now?: Date): Promise<SignupChallenge>;
}

export function challengeIssuer(box: Pick<SecretBox, 'hmac'>, config: Pick<ChallengeConfig, 'maxNumber' | 'ttlSeconds'>): ChallengeIssuer {
  const hmacKey = challengeHmacKey(box);
  return {
    async issue(now = new Date()) {
      const expires = new Date(now.getTime() + config.ttlSeconds * 1000);
      const c = await createChallenge({ algorithm: CHALLENGE_ALGORITHM, hmacKey, maxnumber: config.maxNumber, expires });
      return { algorithm: CHALLENGE_ALGORITHM, challenge: c.challenge, maxnumber: config.maxNumber, salt: c.salt, signature: c.signature };
    },
  };
}

/** A solution that verifies: its signature (the challenge's identity, for the spent list) and when it expires (Unix seconds). */
export type VerifiedSolution = { ok: true; signature: string; expiresAt: number } | { ok: false; reason: HeldReason };

/** The longest `altcha` value read: a real one is about 300 characters. */
export const MAX_SOLUTION_LENGTH = 1024;
const HEX64 = /^[0-9a-f]{64}$/;
const SALT = /^[0-9a-f]{8,64}\?expires=(\d{1,12})&$/;

/**
 * Checks a solution's shape, number and signature (what altcha-lib's verifySolution checks), then its expiry.
 * Never throws: anything else than a well-formed, signed, solved and unexpired challenge is the
 * reason it is not good. The number must be below this server's maxnumber, so a client cannot
 * claim a bigger search than it was given (it could not forge one anyway).
 */
export function verifySignupSolution(
  value: unknown,
  hmacKey: string,
  maxNumber: number,
  now: Date = new Date(),
): VerifiedSolution {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return { ok: false, reason: 'challenge_missing' };
  if (typeof value !== 'string' || value.length > MAX_SOLUTION_LENGTH) return { ok: false, reason: 'challenge_invalid' };
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
  } catch {
    return { ok: false, reason: 'challenge_invalid' };
  }
  if (typeof payload !== 'object' || payload === null) return { ok: false, reason: 'challenge_invalid' };
  const { algorithm, challenge, number, salt, signature } = payload as Record<string, unknown>;
  const expires = typeof salt === 'string' ? SALT.exec(salt) : null;
  const wellFormed =
    algorithm === CHALLENGE_ALGORITHM &&
    typeof challenge === 'string' && HEX64.test(challenge) &&
    typeof signature === 'string' && HEX64.test(signature) &&
    Number.isSafeInteger(number) && (number as number) >= 0 && (number as number) <= maxNumber &&
    expires !== null;
  if (!wellFormed) return { ok: false, reason: 'challenge_invalid' };
  // altcha-lib's verifySolution, synchronously with node:crypto: 15 µs of CPU instead of 210 (its
  // Web Crypto calls, each a round trip through the thread pool; decision 053). The number must
  // give the challenge, and the challenge must carry our signature (compared in constant time).
  // Expiry is checked after the signature: an expired challenge is only "expired" if it was ours.
  if (createHash('sha256').update(`${salt as string}${number as number}`).digest('hex') !== challenge) return { ok: false, reason: 'challenge_invalid' };
  if (!timingSafeEqual(createHmac('sha256', hmacKey).update(challenge).digest(), Buffer.from(signature, 'hex'))) {
    return { ok: false, reason: 'challenge_invalid' };
  }
  const expiresAt = Number(expires[1]);
  if (expiresAt * 1000 < now.getTime()) return { ok: false, reason: 'challenge_expired' };
  return { ok: true, signature, expiresAt };
}
