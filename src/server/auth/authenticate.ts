import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { findUserSession, type SessionRow } from './sessions-repository.js';
import { TokenVerificationError, verifyAccessToken, type AccessClaims } from './tokens.js';
import { findUserById, type AdminUserRow } from './users-repository.js';

export type AuthFailureCode = 'no_authorization' | 'bad_jwt' | 'user_not_found' | 'session_not_found';

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

/** Extracts the token from `Authorization: Bearer <token>` ("bearer" case-insensitive), or null. */
export function bearerToken(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  const match = /^bearer\s+(\S+)\s*$/i.exec(header.trim());
  return match?.[1] ?? null;
}

/**
 * The shared authentication check: a valid ES256 access token whose user AND session rows still
 * exist (a signed-out session's tokens stop working at once, not at `exp`).
 */
export async function authenticate(db: Kysely<Database>, authorization: string | string[] | undefined): Promise<AuthResult> {
  const token = bearerToken(authorization);
  if (!token) return { ok: false, status: 401, code: 'no_authorization', message: 'This endpoint requires a valid Bearer token' };
  let claims: AccessClaims;
  try {
    claims = await verifyAccessToken(db, token);
  } catch (err) {
    if (err instanceof TokenVerificationError) {
      return { ok: false, status: err.kind === 'bad_sub' ? 400 : 403, code: 'bad_jwt', message: err.message };
    }
    throw err;
  }
  const user = await findUserById(db, claims.sub);
  if (!user) return { ok: false, status: 403, code: 'user_not_found', message: 'User from sub claim in JWT does not exist' };
  const session = await findUserSession(db, claims.session_id, user.id);
  if (!session) {
    return { ok: false, status: 403, code: 'session_not_found', message: 'Session from session_id claim in JWT does not exist' };
  }
  return { ok: true, claims, user, session };
}
