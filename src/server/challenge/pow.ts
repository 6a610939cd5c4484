import { hash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
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
  issue(now?: Date): SignupChallenge;
}

/** altcha-lib's salt: 12 random bytes in hex. */
const SALT_BYTES = 12;

/**
 * Issues challenges as altcha-lib's createChallenge writes them (a salt of 12 random bytes with
 * `?expires=…&`, a number from 1 to maxnumber), synchronously with node:crypto: its Web Crypto
 * calls cost the server 190 µs of CPU a challenge, each a round trip through the thread pool, and a
 * browser's signup fetches one (tests/server/challenge: altcha-lib's verifySolution accepts them).
 */
export function challengeIssuer(box: Pick<SecretBox, 'hmac'>, config: Pick<ChallengeConfig, 'maxNumber' | 'ttlSeconds'>): ChallengeIssuer {
  const sign = hmacSha256(challengeHmacKey(box));
  return {
    issue(now = new Date()) {
      const expires = Math.floor(now.getTime() / 1000) + config.ttlSeconds;
      const salt = `${randomBytes(SALT_BYTES).toString('hex')}?expires=${expires}&`;
      const challenge = hash('sha256', `${salt}${randomInt(1, config.maxNumber + 1)}`, 'hex');
      return { algorithm: CHALLENGE_ALGORITHM, challenge, maxnumber: config.maxNumber, salt, signature: sign(challenge) };
    },
  };
}

/** HMAC's block size for SHA-256 (RFC 2104's B), in bytes; a challenge is 64 hex characters. */
const BLOCK = 64;
const CHALLENGE_LENGTH = 64;
const HEX64 = /^[0-9a-f]{64}$/;

/**
 * HMAC-SHA256 of a challenge (64 hex characters) under `key`, in hex, as createHmac computes it
 * (RFC 2104: H(K ^ opad || H(K ^ ipad || m))), from two one-shot `crypto.hash` calls over two
 * buffers made once. On the signup's path under load a createHmac object cost 6-7 µs of CPU (its
 * construction, the key's preparation, update and digest), a third of the challenge's cost; this is
 * the same arithmetic without the objects, 2.5× faster in a loop. The inner digest goes from one
 * buffer to the other as a latin1 ('binary') string: a digest returned as a Buffer costs three times as much.
 * Synchronous, so the buffers are never shared between calls. Equal to createHmac for any key and
 * any challenge, which is 64 lower-case hex characters (one byte each); anything else throws
 * (tests/server/challenge).
 */
export function hmacSha256(key: string): (challenge: string) => string {
  let k = Buffer.from(key, 'utf8');
  if (k.length > BLOCK) k = hash('sha256', k, 'buffer');
  const inner = Buffer.alloc(BLOCK + CHALLENGE_LENGTH);
  const outer = Buffer.alloc(BLOCK + 32);
  for (let i = 0; i < BLOCK; i++) {
    const byte = k[i] ?? 0;
    inner[i] = byte ^ 0x36;
    outer[i] = byte ^ 0x5c;
  }
  return (challenge) => {
    if (!HEX64.test(challenge)) throw new Error('not a challenge');
    inner.write(challenge, BLOCK, 'latin1');
    outer.write(hash('sha256', inner, 'binary'), BLOCK, 'latin1');
    return hash('sha256', outer, 'hex');
  };
}

/** A solution that verifies: its signature (the challenge's identity, for the spent list) and when it expires (Unix seconds). */
export type VerifiedSolution = { ok: true; signature: string; expiresAt: number } | { ok: false; reason: HeldReason };

/** The longest `altcha` value read: a real one is about 300 characters. */
export const MAX_SOLUTION_LENGTH = 1024;
const SALT = /^[0-9a-f]{8,64}\?expires=(\d{1,12})&$/;

/**
 * Checks a solution's shape, number and signature (what altcha-lib's verifySolution checks), then its expiry.
 * Never throws: anything else than a well-formed, signed, solved and unexpired challenge is the
 * reason it is not good. The number must be below this server's maxnumber, so a client cannot
 * claim a bigger search than it was given (it could not forge one anyway).
 */
export function solutionVerifier(hmacKey: string, maxNumber: number): (value: unknown, now?: Date) => VerifiedSolution {
  const sign = hmacSha256(hmacKey);
  return (value, now = new Date()) => {
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
      typeof challenge === 'string' &&
      typeof signature === 'string' && HEX64.test(signature) &&
      Number.isSafeInteger(number) && (number as number) >= 0 && (number as number) <= maxNumber &&
      expires !== null;
    if (!wellFormed) return { ok: false, reason: 'challenge_invalid' };
    // altcha-lib's verifySolution, synchronously with node:crypto (its Web Crypto calls cost 210 µs
    // of CPU, each a round trip through the thread pool; decision 053). The number must give the
    // challenge (which makes it 64 hex characters, as the signing asks), and the challenge must carry
    // our signature (compared in constant time). Expiry is checked after the signature: an expired
    // challenge is only "expired" if it was ours.
    if (hash('sha256', `${salt as string}${number as number}`, 'hex') !== challenge) return { ok: false, reason: 'challenge_invalid' };
    if (!timingSafeEqual(Buffer.from(sign(challenge), 'hex'), Buffer.from(signature, 'hex'))) return { ok: false, reason: 'challenge_invalid' };
    const expiresAt = Number(expires[1]);
    if (expiresAt * 1000 < now.getTime()) return { ok: false, reason: 'challenge_expired' };
    return { ok: true, signature, expiresAt };
  };
}
