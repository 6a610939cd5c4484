import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from '../http/errors.js';
import { authenticate, type AuthFailureCode } from './authenticate.js';
import type { AdminPrincipal } from '../../shared/auth/admin-principal.js';

export type { AdminPrincipal };

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The signed-in admin behind the request, or a 401 `unauthorized` HttpError. Set on the root
     * instance by registerAdminGuard, so any feature can guard its routes without importing auth.
     */
    requireAdmin(request: FastifyRequest): Promise<AdminPrincipal>;
  }
}

const messages: Record<AuthFailureCode, string> = {
  no_authorization: 'Sign in required: send Authorization: Bearer <access token>.',
  bad_jwt: 'The access token is invalid or has expired. Sign in again.',
  user_not_found: 'The admin account for this token no longer exists.',
  session_not_found: 'This session has been signed out. Sign in again.',
};

async function resolve(request: FastifyRequest): Promise<{ principal: AdminPrincipal } | { code: AuthFailureCode }> {
  const result = await authenticate(request.server.database.db, request.headers.authorization);
  if (!result.ok) return { code: result.code };
  return { principal: { userId: result.user.id, email: result.user.email, sessionId: result.session.id } };
}

/**
 * Server-side admin enforcement for any route: verifies `Authorization: Bearer <jwt>` (ES256 with
 * one of our kids, signature, not expired; `alg:none`/HS256/forged are rejected) and checks the
 * session and the admin still exist. Any failure throws a 401 `unauthorized` HttpError.
 * Needs nothing but the request: keys are loaded lazily from `request.server.database`.
 */
export async function requireAdmin(request: FastifyRequest): Promise<AdminPrincipal> {
  const outcome = await resolve(request);
  if ('code' in outcome) throw new HttpError(401, 'unauthorized', messages[outcome.code]);
  return outcome.principal;
}

/** Like requireAdmin but returns null instead of throwing. */
export async function getAdminPrincipal(request: FastifyRequest): Promise<AdminPrincipal | null> {
  const outcome = await resolve(request);
  return 'code' in outcome ? null : outcome.principal;
}

/** Decorates `app` (the root instance, before the feature plugins) with `app.requireAdmin(request)`. */
export function registerAdminGuard(app: FastifyInstance): void {
  app.decorate('requireAdmin', requireAdmin);
}
