import type { ChallengeConfig } from '../config.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { HeldReason } from '../../shared/waitlist/entry.js';
import { challengeHmacKey, solutionVerifier } from './pow.js';
import type { Solution } from './spent.js';

/**
 * What the signup does about its `altcha` field: proceed (`held: null`), with the solution to spend
 * in the transaction that stores it (spent.ts; null while the setting is off), or be held, and why.
 * A solution spent before (on any instance) is found when it is spent: the signup is then held as
 * `challenge_replayed` (signup/service.ts).
 */
export type ChallengeVerdict = { held: null; solution: Solution | null } | { held: HeldReason };

export type SignupChallengeCheck = (solution: unknown) => ChallengeVerdict;

/** The verdict of a signup without the challenge (SIGNUP_CHALLENGE=off, and the API's signups). */
export const NO_CHALLENGE: ChallengeVerdict = { held: null, solution: null };

export function createSignupChallenge(box: Pick<SecretBox, 'hmac'>, config: ChallengeConfig): SignupChallengeCheck {
  if (config.mode === 'off') return () => NO_CHALLENGE;
  const verify = solutionVerifier(challengeHmacKey(box), config.maxNumber);
  return (value) => {
    const verified = verify(value);
    if (!verified.ok) return { held: verified.reason };
    return { held: null, solution: { signature: verified.signature, expiresAt: verified.expiresAt } };
  };
}
