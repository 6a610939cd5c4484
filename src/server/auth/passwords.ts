import { randomBytes } from 'node:crypto';
import { hash, verify, type Algorithm, type Options } from '@node-rs/argon2';
import { estimateGuessScore } from './guess-estimator.js';

/**
 * Password hashing: argon2id with explicit OWASP-recommended parameters (19 MiB, 2 passes, 1 lane).
 * The values are written into each PHC hash string, so raising them later still verifies old hashes.
 */
const ARGON2_OPTIONS: Options = {
  algorithm: 2 as Algorithm, // Algorithm.Argon2id (an ambient const enum, not usable with isolatedModules)
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
};

/**
 * Password policy (NIST SP 800-63B style): at least 12 characters, at most 256, and not a breached
 * or guessable password. No composition rules (they push people towards predictable patterns);
 * length and unpredictability carry the strength.
 *
 * Breached passwords are refused first (ASVS 2.1.7): the 50,000 most common ones of Mozilla's
 * fxa-common-password-list, offline (guess-estimate.ts isBreachedPassword).
 * Guessability is estimated offline with zxcvbn-ts (its common-password list, the English word,
 * name and Wikipedia lists, keyboard walks, sequences, repeats, dates and l33t substitutions). A
 * password must need at least 10^10 guesses (zxcvbn score 4). The estimate runs in a worker thread
 * that holds the dictionaries only while passwords are being checked (guess-estimator.ts). Score 3 (10^8) is not enough: that
 * is where patterns such as `Summer2024!!` land, and they are the first thing a password-spraying
 * or offline attack tries against an account that guards investors' personal data. Passphrases of
 * three or four words with a separator pass easily.
 */
export const PASSWORD_MIN_LENGTH = 12;
/** ASVS 2.1.2: at least 64 characters allowed, more than 128 refused for a new password. */
export const PASSWORD_MAX_LENGTH = 128;
/** A current password is still checked up to this length (the limit before ASVS 2.1.2 was applied). */
export const STORED_PASSWORD_MAX_LENGTH = 256;
/** Required zxcvbn score (0 to 4): 4 means an estimated 10^10 guesses or more. */
export const PASSWORD_MIN_SCORE = 4;
/** Words anyone attacking this site would try first. */
const SITE_WORDS = ['waitlist', 'admin', 'administrator', 'investor', 'funding', 'portal', 'supabase'];

export type WeakPasswordReason = 'length' | 'pwned';

export interface WeakPassword {
  message: string;
  reasons: WeakPasswordReason[];
}

const reasonMessages: Record<WeakPasswordReason, string> = {
  length: `Password should be at least ${PASSWORD_MIN_LENGTH} characters.`,
  pwned: 'Password is known to be weak and easy to guess, please choose a different one.',
};

/** True when the password is breached or guessable (below PASSWORD_MIN_SCORE). */
export async function isGuessable(password: string, userInputs: readonly string[] = []): Promise<boolean> {
  const inputs = [...SITE_WORDS, ...userInputs.flatMap((input) => [input, ...input.split(/[^\p{L}\p{N}]+/u)]).filter((w) => w.length >= 3)];
  return (await estimateGuessScore(password, inputs)) < PASSWORD_MIN_SCORE;
}

/**
 * null when the password meets the policy, else the GoTrue-style `weak_password` object. As in
 * GoTrue, the guessability check (GoTrue's `pwned`) runs only once the length is right.
 * `userInputs` (the account's e-mail address, say) count as known words.
 */
export async function checkPasswordStrength(password: string, userInputs: readonly string[] = []): Promise<WeakPassword | null> {
  const reasons: WeakPasswordReason[] = [];
  if ([...password].length < PASSWORD_MIN_LENGTH) reasons.push('length');
  else if (await isGuessable(password, userInputs)) reasons.push('pwned');
  if (reasons.length === 0) return null;
  return { message: reasons.map((r) => reasonMessages[r]).join(' '), reasons };
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_OPTIONS);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false; // a corrupt hash never authenticates
  }
}

/**
 * What an unknown address's password is verified against: a PHC string with the cost parameters of
 * every stored hash and a random salt and digest (the sizes argon2 writes), made once per process.
 * Verifying runs argon2 with those parameters in full before the comparison fails, so it costs what
 * checking a real account's wrong password costs, and no hashing runs at start-up (hashing one took
 * argon2's 19 MiB on top of the server's memory while it ran).
 */
const dummyHash = (() => {
  const b64 = (bytes: number) => randomBytes(bytes).toString('base64').replace(/=+$/, '');
  const { memoryCost, timeCost, parallelism } = ARGON2_OPTIONS;
  return `$argon2id$v=19$m=${memoryCost},t=${timeCost},p=${parallelism}$${b64(16)}$${b64(32)}`;
})();

/**
 * Spends the same argon2 work as a real verification, so an unknown address and a wrong password
 * take about the same time.
 */
export async function verifyAgainstDummy(password: string): Promise<void> {
  await verifyPassword(dummyHash, password);
}

/** The encoded dummy hash (same algorithm and cost parameters as every stored hash). */
export function dummyPasswordHash(): string {
  return dummyHash;
}
