import { isAuthError, isAuthWeakPasswordError, type Factor } from '@supabase/auth-js';
import { authErrorMessage, getAuthClient } from './auth-client.js';

/**
 * Second-factor (TOTP) helpers shared by /auth and /admin, on auth-js's own `auth.mfa` API. Call them
 * from effects and event handlers only, and never synchronously inside an onAuthStateChange callback
 * (auth-js holds its lock there): defer with `setTimeout`.
 */

/** Where a session stands: none, signed in with the password only while a code is due, or fully signed in. */
export type Assurance = { kind: 'signed-out' } | { kind: 'needs-code'; factorId: string } | { kind: 'signed-in'; email: string };

/** A TOTP code is exactly six digits (SHA-1, 30 s), as GoTrue issues them. */
export const TOTP_CODE_LENGTH = 6;

export function isCompleteCode(code: string): boolean {
  return new RegExp(`^\\d{${TOTP_CODE_LENGTH}}$`).test(code);
}

/**
 * The session's assurance level as `getAuthenticatorAssuranceLevel` reports it, given the access
 * token so auth-js reads the factors from a fresh `GET /user` rather than the stored copy (a factor
 * may have been added or removed in another tab or by the CLI). When the check itself fails (network,
 * a revoked session), the session counts as signed in: the admin API enforces the level anyway and
 * the pages already handle its refusals.
 */
export async function checkAssurance(): Promise<Assurance> {
  const auth = getAuthClient();
  const {
    data: { session },
  } = await auth.getSession();
  if (!session) return { kind: 'signed-out' };
  const signedIn: Assurance = { kind: 'signed-in', email: session.user.email ?? '' };
  const { data, error } = await auth.mfa.getAuthenticatorAssuranceLevel(session.access_token);
  if (error || !data || data.nextLevel !== 'aal2' || data.currentLevel === 'aal2') return signedIn;
  const factor = await verifiedTotpFactor().catch(() => null);
  return factor ? { kind: 'needs-code', factorId: factor.id } : signedIn;
}

/**
 * The signed-in address by what this browser stored alone (no request): the session, and the
 * factors as of its last sign-in or refresh. Null when there is no session or the stored copy
 * already says a code is due. Enough to show /admin and start its requests at once; the admin API
 * authorizes each of them, and checkAssurance() confirms the level against the server meanwhile.
 */
export async function storedSignIn(): Promise<string | null> {
  const auth = getAuthClient();
  const {
    data: { session },
  } = await auth.getSession();
  if (!session) return null;
  const { data, error } = await auth.mfa.getAuthenticatorAssuranceLevel();
  if (error || !data || (data.nextLevel === 'aal2' && data.currentLevel !== 'aal2')) return null;
  return session.user.email ?? '';
}

/** The admin's verified TOTP factor (GoTrue allows one per admin here), or null. */
export async function verifiedTotpFactor(): Promise<Factor | null> {
  const { data, error } = await getAuthClient().mfa.listFactors();
  if (error) throw error;
  return data.totp[0] ?? null;
}

/** Factors started but never confirmed: removed before a new enrolment so its name cannot conflict. */
export async function removeUnverifiedFactors(): Promise<void> {
  const auth = getAuthClient();
  const { data, error } = await auth.mfa.listFactors();
  if (error) throw error;
  for (const factor of data.all) {
    if (factor.status !== 'verified') await auth.mfa.unenroll({ factorId: factor.id }).catch(() => undefined);
  }
}

/**
 * Challenges the factor and verifies the code in one go (a fresh challenge per attempt, so a wrong
 * code never leaves a half-used challenge behind). On success auth-js stores the aal2 session and
 * emits MFA_CHALLENGE_VERIFIED. Returns null, or the message to show.
 */
export async function verifyTotpCode(factorId: string, code: string): Promise<string | null> {
  try {
    const { error } = await getAuthClient().mfa.challengeAndVerify({ factorId, code });
    return error ? authErrorMessage(error) : null;
  } catch (error) {
    return authErrorMessage(error);
  }
}

const weakPasswordReasons: Record<string, string> = {
  length: 'it is too short',
  characters: 'it needs other kinds of characters',
  pwned: 'it is a known or easily guessed password',
};

/**
 * The message of a failed password change. GoTrue's `weak_password` message already names its
 * reasons (they are spelled out here only when it has none); `current_password_invalid` comes with
 * GoTrue's "Current password required…" message, which would mislead, so it gets its own.
 */
export function passwordErrorMessage(error: unknown): string {
  if (isAuthError(error) && error.code === 'current_password_invalid') return 'Your current password is not correct.';
  if (isAuthWeakPasswordError(error) && error.message.trim() === '' && error.reasons.length > 0) {
    return `Choose another password: ${error.reasons.map((reason) => weakPasswordReasons[reason] ?? reason).join('; ')}.`;
  }
  return authErrorMessage(error);
}
