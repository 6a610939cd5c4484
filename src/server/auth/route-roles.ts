import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import { HttpError } from '../http/errors.js';
import { ADMIN_API_PREFIX, isAdminRole, roleAtLeast, ROLE_LABELS, type AdminRole } from '../../shared/admin/roles.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The least admin role this route needs (src/shared/admin/roles.ts). Declaring it is what makes
     * a route admin-only: every route under /api/admin, and every route of a guardAdminScope()
     * scope, must declare one, or the app does not start (declareRouteRoles).
     */
    role?: AdminRole;
    /**
     * How the route's admin is known: by default the access token, checked in onRequest before the
     * body is read; 'ticket' for an export download (a form POST without the token), whose handler
     * asks app.adminOfSession, which checks this same role.
     */
    adminCredential?: 'ticket';
  }
  interface FastifyInstance {
    /** Every route that declares a role, as Fastify registered it (HEAD twins included): what the role sweep test walks. */
    readonly adminRoutes: readonly DeclaredAdminRoute[];
  }
}

/** One method of a route that declares a role. */
export interface DeclaredAdminRoute {
  method: string;
  url: string;
  role: AdminRole;
  credential: 'bearer' | 'ticket';
}

export const INSUFFICIENT_ROLE_CODE = 'insufficient_role';

/** The role a request's route declares (undefined for a route that is not an admin route). */
export function declaredRole(request: FastifyRequest): AdminRole | undefined {
  return request.routeOptions.config?.role;
}

/**
 * Throws 403 `insufficient_role` unless `role` has the rights `required` names. A route that
 * declares no role gets none through here (fail closed).
 */
export function checkRole(role: AdminRole, required: AdminRole | undefined): void {
  if (required !== undefined && roleAtLeast(role, required)) return;
  const needs = required === undefined ? 'an admin role' : `the ${ROLE_LABELS[required].toLowerCase()} role`;
  throw new HttpError(403, INSUFFICIENT_ROLE_CODE, `Your role (${ROLE_LABELS[role].toLowerCase()}) cannot do this: it needs ${needs}. Ask an owner.`);
}

function isAdminPath(url: string): boolean {
  return url === ADMIN_API_PREFIX || url.startsWith(`${ADMIN_API_PREFIX}/`);
}

function describe(route: RouteOptions): string {
  return `${String(route.method)} ${route.url}`;
}

function missingRole(route: RouteOptions): Error {
  return new Error(
    `${describe(route)} is an admin route without a declared role: add config: { role: 'viewer' | 'admin' | 'owner' } to it (src/server/auth/route-roles.ts).`,
  );
}

/**
 * The one place admin access is attached to routes (a root onRoute hook, registered before the
 * features): a route that declares `config.role` gets `guard` as its first onRequest hook (the
 * access token, the session, the assurance level and the role, checked before the body is read);
 * an /api/admin route that declares none, or declares an unknown role, stops the app at start-up.
 * HEAD routes Fastify adds for GET ones pass here too, with the same config.
 */
export function declareRouteRoles(app: FastifyInstance, guard: onRequestHookHandler): void {
  const declared: DeclaredAdminRoute[] = [];
  app.decorate('adminRoutes', declared);
  app.addHook('onRoute', (route) => {
    const role: unknown = route.config?.role;
    if (role === undefined) {
      if (isAdminPath(route.url)) throw missingRole(route);
      return;
    }
    if (!isAdminRole(role)) throw new Error(`${describe(route)} declares an unknown role "${String(role)}".`);
    const credential = route.config?.adminCredential === 'ticket' ? 'ticket' : 'bearer';
    for (const method of [route.method].flat()) declared.push({ method, url: route.url, role, credential });
    if (credential === 'ticket') return;
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    // A new array: the options object Fastify copies for the HEAD twin keeps its own.
    route.onRequest = [guard, ...own];
  });
}

/** guardAdminScope's half: every route of this scope must declare its role (checked at start-up). */
export function requireDeclaredRoles(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    if (route.config?.role === undefined) throw missingRole(route);
  });
}
