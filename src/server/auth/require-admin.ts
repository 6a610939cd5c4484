import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { roleAtLeast } from '../../shared/admin/roles.js';
import { HttpError } from '../http/errors.js';
import { hasBody, isJsonContentType } from '../http/cross-site.js';
import { authenticate, checkSession, type AuthFailureCode } from './authenticate.js';
import { sessionLimits } from './session-limits.js';
import { userHasVerifiedFactor } from './mfa.js';
import type { AdminPrincipal } from './admin-principal.js';
import { checkRole, declaredRole, declareRouteRoles, requireDeclaredRoles } from './route-roles.js';

export type { AdminPrincipal };

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The signed-in admin behind the request, or a 401 `unauthorized` HttpError. Set on the root
     * instance by registerAdminGuard, so any feature can guard its routes without importing auth.
     */
    requireAdmin(request: FastifyRequest): Promise<AdminPrincipal>;
    /**
     * Makes every route of this (encapsulated) scope an admin route: each must declare the least
     * role it needs, `config: { role: 'viewer' | 'admin' | 'owner' }`, or the app does not start.
     * The declaration attaches the check (route-roles.ts, adminAccess): it runs in onRequest,
     * before the body is read or validated, so an anonymous caller can neither make the server parse
     * megabytes of JSON nor learn the schema; no answer, errors included, is cached. A body must be
     * application/json (415 otherwise), which no other site's page can make a browser send without a
     * CORS preflight. A role below the declared one: 403 `insufficient_role`.
     */
    guardAdminScope(): void;
    /** The admin that guardAdminScope's check let through for this request. */
    adminOf(request: FastifyRequest): AdminPrincipal;
    /**
     * The request's admin checked again as the guard did (the route's role included), but NOT
     * counted as use of the session (a long-lived request, like the admin event stream, is not
     * activity): the access token's expiry (ms since the epoch) while token, session, assurance and
     * role all still hold, else null (signed out, revoked, timed out, expired, role taken away).
     */
    recheckAdmin(request: FastifyRequest): Promise<{ expiresAtMs: number } | null>;
    /**
     * The admin of a session named by ids (an export download ticket's: a request that carries no
     * token), checked as the guard checks a token's session: the admin and the session still exist,
     * the session is within its limits and has the assurance the admin needs, and the admin's role
     * (now, in the database) is the one the route declares; counted as use of the session. Throws
     * the guard's 401 `unauthorized`, 403 `insufficient_aal` or 403 `insufficient_role` otherwise.
     */
    adminOfSession(request: FastifyRequest, userId: string, sessionId: string): Promise<AdminPrincipal>;
  }
}

const messages: Record<AuthFailureCode, string> = {
  no_authorization: 'Sign in required: send Authorization: Bearer <access token>.',
  bad_jwt: 'The access token is invalid or has expired. Sign in again.',
  user_not_found: 'The admin account for this token no longer exists.',
  session_not_found: 'This session has been signed out. Sign in again.',
};

/** Why a valid session still may not use the admin API (both answered 403 `insufficient_aal`). */
type AssuranceGap = 'needs_code' | 'needs_enrolment';

const gapMessages: Record<AssuranceGap, string> = {
  needs_code: 'This admin uses two-factor authentication: enter the code from the authenticator app to continue.',
  needs_enrolment: 'Two-factor authentication is required: set up an authenticator app before using the admin area.',
};

async function resolve(
  request: FastifyRequest,
  touch = true,
): Promise<{ principal: AdminPrincipal; expiresAtMs: number } | { code: AuthFailureCode } | { gap: AssuranceGap }> {
  const auth = request.server.config.auth;
  // Every admin API call is real use of the session (the inactivity timeout counts from the last one).
  const result = await authenticate(request.server.database.db, request.headers.authorization, { maxLifetimeSeconds: auth.jwtExpirySeconds }, {
    limits: sessionLimits(auth),
    touch,
  });
  if (!result.ok) return { code: result.code };
  const gap = await assuranceGap(request, result, result.claims);
  if (gap) return { gap };
  // The role is the database's, read with the admin's row on every request: a changed role counts
  // from the next request, whatever the token says.
  return {
    principal: { userId: result.user.id, email: result.user.email, sessionId: result.session.id, role: result.user.role },
    expiresAtMs: (result.claims.exp ?? 0) * 1000,
  };
}

/**
 * Issue 8 point 2: an admin with a verified factor needs an aal2 session (the token's claim, when
 * there is a token, and the session row both); with ADMIN_MFA=required, an admin without one may
 * only enrol (/auth/v1).
 */
async function assuranceGap(
  request: FastifyRequest,
  checked: { user: { id: string }; session: { aal: string } },
  /** The access token's claims; null for a request made without one (a download ticket's). */
  claims: { aal?: string } | null,
): Promise<AssuranceGap | null> {
  if (await userHasVerifiedFactor(request.server.database.db, checked.user.id)) {
    if (checked.session.aal !== 'aal2' || (claims !== null && claims.aal !== 'aal2')) return 'needs_code';
  } else if (request.server.config.auth.mfa === 'required') {
    return 'needs_enrolment';
  }
  return null;
}

async function adminOfSession(request: FastifyRequest, userId: string, sessionId: string): Promise<AdminPrincipal> {
  const auth = request.server.config.auth;
  const result = await checkSession(request.server.database.db, userId, sessionId, { limits: sessionLimits(auth), touch: true });
  if (!result.ok) throw new HttpError(401, 'unauthorized', messages[result.code]);
  const gap = await assuranceGap(request, result, null);
  if (gap) throw new HttpError(403, 'insufficient_aal', gapMessages[gap]);
  checkRole(result.user.role, declaredRole(request));
  return { userId: result.user.id, email: result.user.email, sessionId: result.session.id, role: result.user.role };
}

/**
 * Authenticates an admin of any role (adminAccess then checks the route's): verifies
 * `Authorization: Bearer <jwt>` (ES256 with one of our kids, signature, not expired;
 * `alg:none`/HS256/forged are rejected) and checks the session and the admin still exist. Any
 * failure throws a 401 `unauthorized` HttpError; a session below the assurance the admin needs (see
 * resolve) a 403 `insufficient_aal` one.
 * Needs nothing but the request: keys are loaded lazily from `request.server.database`.
 */
export async function requireAdmin(request: FastifyRequest): Promise<AdminPrincipal> {
  const outcome = await resolve(request);
  if ('code' in outcome) throw new HttpError(401, 'unauthorized', messages[outcome.code]);
  if ('gap' in outcome) throw new HttpError(403, 'insufficient_aal', gapMessages[outcome.gap]);
  return outcome.principal;
}

/** Like requireAdmin but returns null instead of throwing. */
export async function getAdminPrincipal(request: FastifyRequest): Promise<AdminPrincipal | null> {
  const outcome = await resolve(request);
  return 'principal' in outcome ? outcome.principal : null;
}

/** The signed-in admin of each request in a guarded scope. */
const principals = new WeakMap<FastifyRequest, AdminPrincipal>();

/** The first onRequest hook of every route that declares a role (route-roles.ts attaches it). */
async function adminAccess(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  // Admin answers hold personal data or account details: never cached.
  reply.header('cache-control', 'no-store');
  // JSON bodies only (security review, finding 3): no other page can make a browser send one
  // without a CORS preflight. Checked first, before the token, so a refusal costs no lookup.
  if (hasBody(request) && !isJsonContentType(request.headers['content-type'])) {
    throw new HttpError(415, 'unsupported_media_type', 'Send the request body as JSON (Content-Type: application/json).');
  }
  const principal = await requireAdmin(request);
  checkRole(principal.role, declaredRole(request));
  principals.set(request, principal);
}

function guardAdminScope(this: FastifyInstance): void {
  requireDeclaredRoles(this);
}

function adminOf(request: FastifyRequest): AdminPrincipal {
  const principal = principals.get(request);
  // Unreachable in a guarded scope; fail closed if a route outside one asks.
  if (!principal) throw new HttpError(401, 'unauthorized', 'Sign in as an admin to continue.');
  return principal;
}

/**
 * Decorates `app` (the root instance, before the feature plugins) with `requireAdmin(request)`,
 * `guardAdminScope()` and `adminOf(request)`, so any feature guards its routes without importing auth.
 */
export function registerAdminGuard(app: FastifyInstance): void {
  declareRouteRoles(app, adminAccess);
  app.decorate('requireAdmin', requireAdmin);
  app.decorate('guardAdminScope', guardAdminScope);
  app.decorate('adminOf', adminOf);
  app.decorate('adminOfSession', adminOfSession);
  app.decorate('recheckAdmin', async (request: FastifyRequest) => {
    const outcome = await resolve(request, false);
    if (!('principal' in outcome)) return null;
    const required = declaredRole(request);
    return required !== undefined && roleAtLeast(outcome.principal.role, required) ? { expiresAtMs: outcome.expiresAtMs } : null;
  });
}
