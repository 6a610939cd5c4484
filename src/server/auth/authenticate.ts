import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { deleteSessions, findUserSession, touchSession, type SessionRow } from './sessions-repository.js';
import { TokenVerificationError, verifyAccessToken, type AccessClaims, type VerifyOptions } from './tokens.js';
import { findUserById, type AdminUserRow } from './users-repository.js';

export type AuthFailureCode = 'no_authorization' | 'bad_jwt' | 'user_not_found' | 'session_not_found';

/** How long a session may live (ASVS 3.3.1/3.3.2): config AUTH_SESSION_MAX_AGE_SECONDS and AUTH_SESSION_INACTIVITY_SECONDS. */
export interface SessionLimits {
  /** Absolute lifetime, counted from the sign-in. */
  maxAgeSeconds: number;
  /** Longest time without real use (`last_active_at`); refreshes do not count as use. */
  inactivitySeconds: number;
}

/** The session checks of one authenticated request. */
export interface SessionCheck {
  limits: SessionLimits;
  /** Count this request as real use of the session (the admin API; not GET /user, which auth-js calls by itself). */
  touch: boolean;
  /** Milliseconds since the epoch; tests may inject a clock. */
  now?: () => number;
}

/**
 * Activity is written at most once per this interval (a tenth of the inactivity limit, at most a
 * minute), so an admin page's API calls cost no write each and a session in use never times out.
 */
export function activityResolutionMs(inactivitySeconds: number): number {
  return Math.min(60_000, inactivitySeconds * 100);
}

/** The limits configured for this app. */
export function sessionLimits(auth: { sessionMaxAgeSeconds: number; sessionInactivitySeconds: number }): SessionLimits {
  return { maxAgeSeconds: auth.sessionMaxAgeSeconds, inactivitySeconds: auth.sessionInactivitySeconds };
}

/** Whether a session is still valid at `nowMs`, or why it has ended (GoTrue's SessionTimedOut and timebox). */
export function sessionState(
  session: Pick<SessionRow, 'created_at' | 'updated_at' | 'last_active_at'>,
  limits: SessionLimits,
  nowMs: number,
): 'valid' | 'timebox' | 'inactivity' {
  const ms = (value: Date | string) => new Date(value).getTime();
  if (nowMs - ms(session.created_at) > limits.maxAgeSeconds * 1000) return 'timebox';
  if (nowMs - ms(session.last_active_at ?? session.updated_at) > limits.inactivitySeconds * 1000) return 'inactivity';
  return 'valid';
}

export interface AuthSuccess {
  ok: true;
  claims: AccessClaims;
  user: AdminUserRow;
  session: SessionRow;
}

export interface AuthFailure {
  ok: false;
  /** GoTrue status for /auth/v1 (§2.4 of ../shared/docs/auth-protocol.md); requireAdmin maps every failure to 401. */
  status: 400 | 401 | 403;
  code: AuthFailureCode;
  message: string;
}

export type AuthResult = AuthSuccess | AuthFailure;

/**
 * Whether the request carries a second factor: the session row is aal2 AND so is the token (a token
 * issued before the code was entered, on a session raised since, does not count).
 */
export function isAal2(auth: Pick<AuthSuccess, 'claims' | 'session'>): boolean {
  return auth.session.aal === 'aal2' && auth.claims.aal === 'aal2';
}

/** Extracts the token from `Authorization: Bearer <token>` ("bearer" case-insensitive), or null. */
export function bearerToken(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  const match = /^bearer\s+(\S+)\s*$/i.exec(header.trim());
  return match?.[1] ?? null;
}

/**
 * The shared authentication check: a valid ES256 access token whose user AND session rows still
 * exist (a signed-out session's tokens stop working at once, not at `exp`). `verify` carries the
 * configured token lifetime (tokens.ts); `check` the session's lifetime and inactivity limits (an
 * ended session is deleted and answered 403 `session_not_found`).
 */
export async function authenticate(
  db: Kysely<Database>,
  authorization: string | string[] | undefined,
  verify: VerifyOptions,
  check: SessionCheck,
): Promise<AuthResult> {
  const token = bearerToken(authorization);
  if (!token) return { ok: false, status: 401, code: 'no_authorization', message: 'This endpoint requires a valid Bearer token' };
  let claims: AccessClaims;
  try {
    claims = await verifyAccessToken(db, token, verify);
  } catch (err) {
    if (err instanceof TokenVerificationError) {
      return { ok: false, status: err.kind === 'bad_sub' ? 400 : 403, code: 'bad_jwt', message: err.message };
    }
    throw err;
  }
  const checked = await checkSession(db, claims.sub, claims.session_id, check);
  return checked.ok ? { ...checked, claims } : checked;
}

/**
 * The session part of authenticate(), for a user and session named by ids (an access token's
 * claims, or what an export download ticket was issued to): both rows exist and the session is
 * within its limits (an ended one is deleted); `check.touch` counts this as use of the session.
 */
export async function checkSession(
  db: Kysely<Database>,
  userId: string,
  sessionId: string,
  check: SessionCheck,
): Promise<Omit<AuthSuccess, 'claims'> | AuthFailure> {
  const user = await findUserById(db, userId);
  if (!user) return { ok: false, status: 403, code: 'user_not_found', message: 'User from sub claim in JWT does not exist' };
  const session = await findUserSession(db, sessionId, user.id);
  const nowMs = (check.now ?? Date.now)();
  if (!session || sessionState(session, check.limits, nowMs) !== 'valid') {
    // An ended session is deleted, and answered as one that does not exist: auth-js then drops its
    // local session (AuthSessionMissingError) and the admin page goes to /auth.
    if (session) await deleteSessions(db, user.id, { only: session.id });
    return { ok: false, status: 403, code: 'session_not_found', message: 'Session from session_id claim in JWT does not exist' };
  }
  if (check.touch) await touchSession(db, session.id, new Date(nowMs).toISOString(), activityResolutionMs(check.limits.inactivitySeconds));
  return { ok: true, user, session };
}
