import { hash, verify, type Algorithm, type Options } from '@node-rs/argon2';

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
 * Password policy (NIST SP 800-63B style): at least 12 characters, at most 256, and not a commonly
 * used or trivially guessable password. No composition rules (they push people towards
 * predictable patterns); length carries the strength.
 */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

export type WeakPasswordReason = 'length' | 'pwned';

export interface WeakPassword {
  message: string;
  reasons: WeakPasswordReason[];
}

const reasonMessages: Record<WeakPasswordReason, string> = {
  length: `Password should be at least ${PASSWORD_MIN_LENGTH} characters.`,
  pwned: 'Password is known to be weak and easy to guess, please choose a different one.',
};

/** Bases of the most common leaked passwords; a password that is one of these plus digits/symbols is rejected. */
const COMMON = new Set([
  'password', 'passw0rd', 'p@ssword', 'p@ssw0rd', 'qwerty', 'qwertyuiop', 'asdfghjkl', 'azerty', 'letmein', 'welcome',
  'iloveyou', 'admin', 'administrator', 'changeme', 'abc', 'abcdef', 'abcdefgh', 'abcdefghijkl', 'monkey', 'dragon',
  'football', 'baseball', 'sunshine', 'princess', 'master', 'superman', 'trustno1', 'secret', 'starwars', 'whatever',
  'qazwsx', 'zaq1zaq1', 'login', 'default', 'waitlist', 'correcthorsebatterystaple',
]);
const SEQUENCES = ['0123456789', 'abcdefghijklmnopqrstuvwxyz', 'qwertyuiopasdfghjklzxcvbnm'];

function isGuessable(password: string): boolean {
  const lower = password.toLowerCase();
  if (new Set(lower).size < 5) return true; // aaaaaaaaaaaa, abababababab, 111122223333
  const base = lower.replace(/[^a-z]+$/g, '').replace(/^[^a-z]+/g, ''); // strip leading/trailing digits & symbols
  if (COMMON.has(base) || COMMON.has(lower)) return true;
  const compact = lower.replace(/[^a-z0-9]/g, '');
  if (compact.length >= 8 && SEQUENCES.some((seq) => seq.includes(compact) || (seq + seq).includes(compact))) return true;
  if (/^\d+$/.test(lower)) return true; // digits only
  return false;
}

/** null when the password meets the policy, else the GoTrue-style `weak_password` object. */
export function checkPasswordStrength(password: string): WeakPassword | null {
  const reasons: WeakPasswordReason[] = [];
  if ([...password].length < PASSWORD_MIN_LENGTH) reasons.push('length');
  if (isGuessable(password)) reasons.push('pwned');
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

let dummyHash: Promise<string> | null = null;

/** Computes the dummy hash ahead of the first sign-in, so even that one has normal timing. */
export function warmUpDummyHash(): void {
  dummyHash ??= hash('dummy password for timing equalisation', ARGON2_OPTIONS);
  dummyHash.catch(() => {
    dummyHash = null;
  });
}

/**
 * Spends the same argon2 work as a real verification, so an unknown address and a wrong password
 * take about the same time.
 */
export async function verifyAgainstDummy(password: string): Promise<void> {
  await verifyPassword(await dummyPasswordHash(), password);
}

/** The encoded dummy hash (same algorithm and cost parameters as every stored hash). */
export function dummyPasswordHash(): Promise<string> {
  warmUpDummyHash();
  return dummyHash!;
}
