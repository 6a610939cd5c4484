import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { activityResolutionMs, sessionState, type SessionLimits } from './session-limits.js';
import { deleteSessions, findUserSession, touchSession, type SessionRow } from './sessions-repository.js';
import { TokenVerificationError, verifyAccessToken, type AccessClaims, type VerifyOptions } from './tokens.js';
import { findUserById, type AdminUserRow } from './users-repository.js';

export type AuthFailureCode = 'no_authorization' | 'bad_jwt' | 'user_not_found' | 'session_not_found';

/** The session checks of one authenticated request. */
export interface SessionCheck {
  limits: SessionLimits;
  /** Count this request as real use of the session (the admin API; not GET /user, which auth-js calls by itself). */
  touch: boolean;
  /** Milliseconds since the epoch; tests may inject a clock. */
  now?: () => number;
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
