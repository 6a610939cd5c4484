import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import type { DeclaredAdminRoute } from '../../../src/server/auth/route-roles.js';
import { createExportDownload } from '../../../src/server/export/tickets.js';
import { ADMIN_API_PREFIX, ADMIN_ROLES, roleAtLeast, type AdminRole } from '../../../src/shared/admin/roles.js';
import { ADMIN_API_KEYS_PATH } from '../../../src/shared/admin/api-keys-api.js';
import { ADMIN_HELD_APPROVE_PATH, ADMIN_HELD_REJECT_PATH } from '../../../src/shared/admin/held-api.js';
import { ADMIN_LISTS_PATH } from '../../../src/shared/admin/lists-api.js';
import { ADMIN_MAIL_PATH, ADMIN_OUTBOX_PATH, ADMIN_OUTBOX_RETRY_PATH } from '../../../src/shared/admin/mail-api.js';
import { ADMIN_RECORD_VERSIONS_PATH, ADMIN_RECORDS_BUNDLE_PATH } from '../../../src/shared/admin/records-api.js';
import { ADMIN_SESSIONS_PATH, ADMIN_SESSIONS_REVOKE_PATH } from '../../../src/shared/admin/sessions-api.js';
import { ADMIN_TEAM_PATH, ADMIN_TEAM_ROLE_PATH } from '../../../src/shared/admin/team-api.js';
import { ADMIN_WEBHOOKS_PATH } from '../../../src/shared/admin/webhooks-api.js';
import {
  ADMIN_DELETE_MATCHING_PATH,
  ADMIN_DELETE_PATH,
  ADMIN_EVENTS_PATH,
  ADMIN_EXPORT_DOWNLOAD_PATH,
  ADMIN_EXPORT_PATH,
  ADMIN_EXPORTS_PATH,
  ADMIN_INSIGHTS_PATH,
  ADMIN_INVITE_PATH,
  ADMIN_WAITLIST_PATH,
} from '../../../src/shared/admin/waitlist-api.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { signIn } from '../../support/sign-in.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Issue 32 point 4: the role sweep. Every route of Fastify's route table under /api/admin is
 * enumerated (printRoutes, not a list kept here), must have declared a role, and is called by each
 * role and by nobody: a role below the declared one gets 403 `insufficient_role`, the others get
 * past the guard (any answer but 401/403), nobody gets 401. The role each route must need is
 * POLICY's, written here and not read from the declarations: every route of the table must be in it
 * (a new route fails the sweep until its role is named here), and each role's access is checked
 * against it, so a route lowered in its declaration (an owner's route opened to admins) fails too.
 */
const PASSWORD = 'correct horse battery staple';

/**
 * Every (method, path) of Fastify's own route table. printRoutes draws the router's tree: each line
 * a node, indented four characters a level, its text the path after its parent's, its methods in
 * parentheses when routes end there.
 */
function routeTable(printed: string): Array<{ method: string; url: string }> {
  const routes: Array<{ method: string; url: string }> = [];
  const stack: string[] = [];
  for (const line of printed.split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(.+?)(?: \(([A-Z, ]+)\))?$/u.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack[depth] = (depth > 0 ? stack[depth - 1]! : '') + match[2]!;
    stack.length = depth + 1;
    for (const method of match[3]?.split(',') ?? []) routes.push({ method: method.trim(), url: stack[depth]! });
  }
  return routes;
}

const errorCode = (body: unknown) => (body as { error?: { code?: string } }).error?.code ?? null;
const isAdminPath = (url: string) => url === ADMIN_API_PREFIX || url.startsWith(`${ADMIN_API_PREFIX}/`);
const key = (r: { method: string; url: string }) => `${r.method} ${r.url}`;

/**
 * The least role each /api/admin route requires (issue 32 point 4), whatever its declaration says:
 * every route, HEAD twins under their GET. Viewers read (and end their own sessions); admins also
 * export, delete, invite, see the outbox, act on held signups, the records and the lists; only owners
 * manage the team, the API keys and the webhooks.
 */
const POLICY: Record<string, AdminRole> = {
  [`GET ${ADMIN_WAITLIST_PATH}`]: 'viewer',
  [`GET ${ADMIN_INSIGHTS_PATH}`]: 'viewer',
  [`GET ${ADMIN_EVENTS_PATH}`]: 'viewer',
  [`GET ${ADMIN_MAIL_PATH}`]: 'viewer',
  [`GET ${ADMIN_SESSIONS_PATH}`]: 'viewer',
  [`POST ${ADMIN_SESSIONS_REVOKE_PATH}`]: 'viewer',
  [`GET ${ADMIN_LISTS_PATH}`]: 'viewer',
  [`POST ${ADMIN_EXPORT_PATH}`]: 'admin',
  [`POST ${ADMIN_EXPORTS_PATH}`]: 'admin',
  [`GET ${ADMIN_EXPORTS_PATH}/:id`]: 'admin',
  [`POST ${ADMIN_EXPORT_DOWNLOAD_PATH}`]: 'admin',
  [`POST ${ADMIN_DELETE_PATH}`]: 'admin',
  [`POST ${ADMIN_DELETE_MATCHING_PATH}`]: 'admin',
  [`POST ${ADMIN_INVITE_PATH}`]: 'admin',
  [`GET ${ADMIN_OUTBOX_PATH}`]: 'admin',
  [`POST ${ADMIN_OUTBOX_RETRY_PATH}`]: 'admin',
  [`POST ${ADMIN_HELD_APPROVE_PATH}`]: 'admin',
  [`POST ${ADMIN_HELD_REJECT_PATH}`]: 'admin',
  [`GET ${ADMIN_RECORD_VERSIONS_PATH}`]: 'admin',
  [`GET ${ADMIN_RECORD_VERSIONS_PATH}/:id`]: 'admin',
  [`GET ${ADMIN_RECORDS_BUNDLE_PATH}`]: 'admin',
  [`POST ${ADMIN_LISTS_PATH}`]: 'admin',
  [`PATCH ${ADMIN_LISTS_PATH}/:slug`]: 'admin',
  [`GET ${ADMIN_TEAM_PATH}`]: 'owner',
  [`POST ${ADMIN_TEAM_ROLE_PATH}`]: 'owner',
  [`GET ${ADMIN_API_KEYS_PATH}`]: 'owner',
  [`POST ${ADMIN_API_KEYS_PATH}`]: 'owner',
  [`POST ${ADMIN_API_KEYS_PATH}/:id/revoke`]: 'owner',
  [`GET ${ADMIN_WEBHOOKS_PATH}`]: 'owner',
  [`POST ${ADMIN_WEBHOOKS_PATH}`]: 'owner',
  [`POST ${ADMIN_WEBHOOKS_PATH}/:id/enable`]: 'owner',
  [`POST ${ADMIN_WEBHOOKS_PATH}/:id/disable`]: 'owner',
  [`POST ${ADMIN_WEBHOOKS_PATH}/:id/rotate`]: 'owner',
  [`POST ${ADMIN_WEBHOOKS_PATH}/:id/remove`]: 'owner',
  [`GET ${ADMIN_WEBHOOKS_PATH}/:id/deliveries`]: 'owner',
  [`POST ${ADMIN_WEBHOOKS_PATH}/deliveries/:id/replay`]: 'owner',
};

/** A route's entry in POLICY: a HEAD twin is its GET. */
const policyKey = (r: { method: string; url: string }) => key({ method: r.method === 'HEAD' ? 'GET' : r.method, url: r.url });

describe.each(TEST_DIALECTS)('role sweep over every admin route (%s)', (dialect: TestDialect) => {
  let t: TestApp;
  let base: string;
  const tokens = {} as Record<AdminRole, string>;

  beforeAll(async () => {
    t = await createTestApp({ AUTH_IP_MAX_ATTEMPTS: '1000' }, { dialect });
    for (const role of ['owner', 'admin', 'viewer'] as const) {
      const email = `${role}-sweep@example.com`;
      const created = await createAdmin(t.app.database.db, email, PASSWORD, role === 'owner' ? {} : { role });
      expect(created.role).toBe(role);
      tokens[role] = (await signIn(t.app, { email, password: PASSWORD })).access_token;
    }
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** The status and error code of one request, without reading a body that is still streaming (an export, the event stream). */
  async function call(route: { method: string; url: string }, headers: Record<string, string>, body?: string): Promise<{ status: number; code: string | null }> {
    const url = base + route.url.replace(/:[A-Za-z_]+/g, randomUUID());
    const abort = new AbortController();
    const withBody = !['GET', 'HEAD'].includes(route.method);
    const res = await fetch(url, {
      method: route.method,
      headers: { ...(withBody ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(withBody ? { body: body ?? '{}' } : {}),
      redirect: 'manual',
      signal: abort.signal,
    });
    let code: string | null = null;
    if ((res.status === 401 || res.status === 403) && route.method !== 'HEAD') {
      code = errorCode(await res.json());
    } else {
      abort.abort();
    }
    return { status: res.status, code };
  }

  /** A ticket download's answer for an admin of `role` (the ticket is made as the page would have, then the form posted). */
  async function ticketCall(route: DeclaredAdminRoute, token: string | null): Promise<{ status: number; code: string | null }> {
    let ticket = 'x'.repeat(43);
    if (token) {
      const claims = decodeJwt(token) as { sub: string; session_id: string };
      ticket = (await createExportDownload(t.app.database.db, { userId: claims.sub, sessionId: claims.session_id }, { scope: 'all' } as never)).ticket;
    }
    const abort = new AbortController();
    const res = await fetch(base + route.url, {
      method: route.method,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ticket }).toString(),
      signal: abort.signal,
    });
    const code = res.status >= 400 ? errorCode(await res.json()) : null;
    if (res.status < 400) abort.abort();
    return { status: res.status, code };
  }

  it('finds every /api/admin route of the route table declared and in the policy, and each role gets exactly the access the policy gives it', async () => {
    const table = routeTable(t.app.printRoutes({ commonPrefix: false }));
    const adminRoutes = table.filter((r) => isAdminPath(r.url));
    const declared = new Map(t.app.adminRoutes.map((r) => [key(r), r]));
    // The table is really read: the routes this product has are in it, GETs with their HEAD twins.
    expect(adminRoutes.map(key)).toEqual(expect.arrayContaining(Object.keys(POLICY)));
    expect(adminRoutes.map(key)).toContain(`HEAD ${ADMIN_WAITLIST_PATH}`);
    // Every admin route of the table declared its role, and nothing declared is missing from the table.
    expect(adminRoutes.filter((r) => !declared.has(key(r))).map(key)).toEqual([]);
    expect([...declared.keys()].sort()).toEqual(adminRoutes.map(key).sort());
    // The policy names every route of the table, and no route the table lacks.
    expect(adminRoutes.filter((r) => !Object.hasOwn(POLICY, policyKey(r))).map(key)).toEqual([]);
    expect(Object.keys(POLICY).sort()).toEqual([...new Set(adminRoutes.map(policyKey))].sort());

    const outcomes: string[] = [];
    for (const route of adminRoutes) {
      const declaration = declared.get(key(route))!;
      // Each role's access is checked against the policy: a declaration lowered below it fails here.
      const least = POLICY[policyKey(route)]!;
      if (declaration.credential === 'ticket') {
        const anonymous = await ticketCall(declaration, null);
        expect(anonymous.status, `${key(route)} with an unknown ticket`).toBe(410);
        for (const role of ADMIN_ROLES) {
          const { status, code } = await ticketCall(declaration, tokens[role]);
          const allowed = roleAtLeast(role, least);
          outcomes.push(`${key(route)} ${role} ${status}`);
          if (allowed) expect(status, `${key(route)} as ${role}`).toBe(200);
          else expect({ status, code }, `${key(route)} as ${role}`).toEqual({ status: 403, code: 'insufficient_role' });
        }
        continue;
      }
      const anonymous = await call(route, {});
      expect(anonymous.status, `${key(route)} without a token`).toBe(401);
      for (const role of ADMIN_ROLES) {
        const { status, code } = await call(route, { authorization: `Bearer ${tokens[role]}` });
        outcomes.push(`${key(route)} ${role} ${status}`);
        if (roleAtLeast(role, least)) {
          expect([401, 403], `${key(route)} as ${role}: ${status} ${code}`).not.toContain(status);
        } else if (route.method === 'HEAD') {
          expect(status, `${key(route)} as ${role}`).toBe(403);
        } else {
          expect({ status, code }, `${key(route)} as ${role}`).toEqual({ status: 403, code: 'insufficient_role' });
        }
      }
    }
    expect(outcomes.length).toBeGreaterThanOrEqual(adminRoutes.length * 3);
  });

  it("holds the declarations to the issue's policy: viewers never export, delete, invite or see the outbox; only owners manage the team, the API keys and the webhooks", () => {
    const declared = new Map(t.app.adminRoutes.map((r) => [key(r), r.role]));
    for (const route of t.app.adminRoutes) {
      expect(route.role, key(route)).toBe(POLICY[policyKey(route)]);
    }
    const ownerOnly = Object.keys(POLICY).filter((route) => POLICY[route] === 'owner');
    // The app's own owner-only routes of the webhooks and the API keys (HEAD twins aside).
    const ownersOf = (path: string) => t.app.adminRoutes.filter((r) => r.method !== 'HEAD' && r.role === 'owner' && key(r).includes(path));
    expect(ownersOf(ADMIN_WEBHOOKS_PATH)).toHaveLength(8);
    expect(ownersOf(ADMIN_API_KEYS_PATH)).toHaveLength(3);
    for (const route of ownerOnly) expect(declared.get(route), route).toBe('owner');
    // Nothing a viewer may call changes data but the viewer's own sessions.
    const viewerWrites = t.app.adminRoutes.filter((r) => r.role === 'viewer' && !['GET', 'HEAD'].includes(r.method)).map(key);
    expect(viewerWrites).toEqual([`POST ${ADMIN_API_PREFIX}/sessions/revoke`]);
  });
});
