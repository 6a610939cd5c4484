import type { Kysely } from 'kysely';
import type { ChallengeConfig } from '../config.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Database } from '../db/schema.js';
import type { HeldReason } from '../../shared/waitlist/entry.js';
import { challengeHmacKey, verifySignupSolution } from './pow.js';
import { spentChallenges } from './spent.js';

/**
 * The signup's check of its `altcha` field: null when the signup may proceed (the setting is off,
 * or the solution verified and was spent now), else why it is held. A replayed solution (spent
 * before, on any instance) is held too.
 */
export type SignupChallengeCheck = (solution: unknown) => Promise<HeldReason | null>;

export function createSignupChallenge(db: Kysely<Database>, box: Pick<SecretBox, 'hmac'>, config: ChallengeConfig): SignupChallengeCheck {
  if (config.mode === 'off') return async () => null;
  const hmacKey = challengeHmacKey(box);
  const spent = spentChallenges(db);
  return async (solution) => {
    const verified = verifySignupSolution(solution, hmacKey, config.maxNumber);
    if (!verified.ok) return verified.reason;
    return (await spent.spend(verified.signature, verified.expiresAt)) ? null : 'challenge_replayed';
  };
}
