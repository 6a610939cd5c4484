import { decodeJwt } from 'jose';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAudit } from '../../../src/server/audit/audit-log.js';
import { run } from '../../../src/server/cli/admin.js';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { setAdminRole } from '../../../src/server/auth/admin-roles.js';
import { registerAdminGuard } from '../../../src/server/auth/require-admin.js';
import { ADMIN_TEAM_PATH, ADMIN_TEAM_ROLE_PATH, teamListSchema } from '../../../src/shared/admin/team-api.js';
import { ADMIN_DELETE_PATH, ADMIN_WAITLIST_PATH } from '../../../src/shared/admin/waitlist-api.js';
import { authBaseUrl, authJsClient } from '../../support/auth-js-client.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { runCliInProcess } from '../../support/server-process.js';
import { signIn } from '../../support/sign-in.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Issue 32 point 4 beyond the sweep (roles-sweep.test.ts): the first admin is an owner, the CLI's
 * create --role and set-role, the role in the token through the real auth-js client, a demotion
 * that counts from the next request, the last owner kept, the owner's Team API and the audit (the
 * migration that gives existing installations an owner: tests/server/db/migrations.test.ts).
 */
const PASSWORD = 'correct-Horse-battery-42';

describe.each(TEST_DIALECTS)('admin roles (%s)', (dialect: TestDialect) => {
  let t: TestApp;
  const cli = (args: string[], stdin = '') => runCliInProcess(run, args, { env: { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' }, stdin });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const json = (token: string) => ({ ...bearer(token), 'content-type': 'application/json' });
  const roleOf = async (email: string) =>
    (await t.app.database.db.selectFrom('admin_users').select('role').where('email', '=', email).executeTakeFirstOrThrow()).role;

  beforeAll(async () => {
    t = await createTestApp({ AUTH_IP_MAX_ATTEMPTS: '1000' }, { dialect });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('the CLI: the first admin is an owner, --role viewer, set-role, the last owner kept, list and audit', { timeout: 60_000 }, async () => {
    const firstAsViewer = await cli(['create', 'first@example.com', '--role', 'viewer'], `${PASSWORD}\n`);
    expect(firstAsViewer.code).toBe(1);
    expect(firstAsViewer.stderr).toContain('The first admin is an owner');

    const owner = await cli(['create', 'owner@example.com'], `${PASSWORD}\n`);
    expect(owner.code, owner.stderr).toBe(0);
    expect(owner.stdout).toContain('Created admin owner@example.com (owner).');
    const viewer = await cli(['create', 'viewer@example.com', '--role', 'Viewer'], `${PASSWORD}\n`);
    expect(viewer.stdout).toContain('(viewer)');
    const plain = await cli(['create', 'plain@example.com'], `${PASSWORD}\n`);
    expect(plain.stdout).toContain('(admin)');
    expect((await cli(['create', 'x@example.com', '--role', 'boss'], `${PASSWORD}\n`)).code).toBe(2);

    expect(await roleOf('owner@example.com')).toBe('owner');
    expect(await roleOf('viewer@example.com')).toBe('viewer');
    expect(await roleOf('plain@example.com')).toBe('admin');

    const lastOwner = await cli(['set-role', 'owner@example.com', 'admin']);
    expect(lastOwner.code).toBe(1);
    expect(lastOwner.stderr).toContain('last owner');
    const deleteLastOwner = await cli(['delete', 'owner@example.com']);
    expect(deleteLastOwner.code).toBe(1);
    expect(await roleOf('owner@example.com')).toBe('owner');

    expect((await cli(['set-role', 'viewer@example.com', 'admin'])).stdout).toContain('viewer@example.com is now admin (was viewer).');
    expect((await cli(['set-role', 'viewer@example.com', 'admin'])).stdout).toContain('is already admin');
    expect((await cli(['set-role', 'plain@example.com', 'owner'])).code).toBe(0);
    // Two owners now: either may step down.
    expect((await cli(['set-role', 'owner@example.com', 'viewer'])).code).toBe(0);
    expect((await cli(['set-role', 'nobody@example.com', 'viewer'])).code).toBe(1);
    expect((await cli(['set-role', 'plain@example.com', 'root'])).code).toBe(2);
    expect((await cli(['set-role', 'plain@example.com'])).code).toBe(2);

    const list = await cli(['list']);
    expect(list.stdout).toMatch(/Email\s+Created\s+Last sign-in\s+Sessions\s+Role/);
    expect(list.stdout).toMatch(/owner@example\.com\s.*\sviewer\s*$/m);
    expect(list.stdout).toMatch(/plain@example\.com\s.*\sowner\s*$/m);

    const changes = (await listAudit(t.app.database.db, 100)).filter((e) => e.action === 'role_changed');
    // Three real changes; "already admin" and the refusals wrote nothing.
    expect(changes).toHaveLength(3);
    const ids = Object.fromEntries(
      (await t.app.database.db.selectFrom('admin_users').select(['id', 'email']).execute()).map((r) => [r.email, r.id]),
    );
    expect(changes.map((e) => e.detail).reverse()).toEqual([
      { admin_id: ids['viewer@example.com'], from: 'viewer', to: 'admin', by: 'cli' },
      { admin_id: ids['plain@example.com'], from: 'admin', to: 'owner', by: 'cli' },
      { admin_id: ids['owner@example.com'], from: 'owner', to: 'viewer', by: 'cli' },
    ]);
    for (const entry of changes) expect(JSON.stringify(entry.detail)).not.toMatch(/@|password|token/i);
  });

  it('the role rides in the token and the user object through the real auth-js client; a changed role comes with the next refresh', async () => {
    await createAdmin(t.app.database.db, 'tokens@example.com', PASSWORD, { role: 'viewer' });
    const { auth } = authJsClient(await authBaseUrl(t.app), `sb-roles-${dialect}`);
    const { data, error } = await auth.signInWithPassword({ email: 'tokens@example.com', password: PASSWORD });
    expect(error).toBeNull();
    expect(data.session!.user.app_metadata).toEqual({ provider: 'email', providers: ['email'], role: 'viewer' });
    const claims = decodeJwt(data.session!.access_token);
    expect(claims.role).toBe('authenticated');
    expect(claims.user_role).toBe('viewer');
    expect((claims.app_metadata as { role: string }).role).toBe('viewer');
    // getClaims verifies the ES256 token with our JWKS and hands the claims back as they are.
    const verified = await auth.getClaims();
    expect(verified.data?.claims.user_role).toBe('viewer');
    expect((await auth.getUser()).data.user?.app_metadata.role).toBe('viewer');

    await setAdminRole(t.app.database.db, { email: 'tokens@example.com' }, 'admin', { by: 'cli' });
    // GET /user reads the row: at once. The session's token: from its refresh.
    expect((await auth.getUser()).data.user?.app_metadata.role).toBe('admin');
    const refreshed = await auth.refreshSession();
    expect(refreshed.error).toBeNull();
    expect(decodeJwt(refreshed.data.session!.access_token).user_role).toBe('admin');
    expect(refreshed.data.session!.user.app_metadata.role).toBe('admin');
  });

  it("a demoted admin loses the rights on the very next request, with the token it already holds", async () => {
    await createAdmin(t.app.database.db, 'demoted@example.com', PASSWORD, { role: 'admin' });
    const { access_token: token } = await signIn(t.app, { email: 'demoted@example.com', password: PASSWORD });
    const deleteNothing = () => t.app.inject({ method: 'POST', url: ADMIN_DELETE_PATH, headers: json(token), payload: { ids: [] } });
    expect((await deleteNothing()).statusCode).toBe(400); // past the guard: the schema wants an id
    await setAdminRole(t.app.database.db, { email: 'demoted@example.com' }, 'viewer', { by: 'cli' });
    const refused = await deleteNothing();
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ error: { code: 'insufficient_role', message: expect.stringContaining('viewer') } });
    // Still a viewer: the list is open.
    expect((await t.app.inject({ method: 'GET', url: ADMIN_WAITLIST_PATH, headers: bearer(token) })).statusCode).toBe(200);
  });

  it("the owner's Team API: lists every admin with a role, changes one (audited as the owner), never the last owner", async () => {
    const db = t.app.database.db;
    await createAdmin(db, 'boss@example.com', PASSWORD, { role: 'owner' });
    await createAdmin(db, 'member@example.com', PASSWORD, { role: 'viewer' });
    const boss = (await signIn(t.app, { email: 'boss@example.com', password: PASSWORD })).access_token;
    const member = await db.selectFrom('admin_users').select('id').where('email', '=', 'member@example.com').executeTakeFirstOrThrow();

    const listed = await t.app.inject({ method: 'GET', url: ADMIN_TEAM_PATH, headers: bearer(boss) });
    expect(listed.statusCode).toBe(200);
    const team = teamListSchema.parse(listed.json());
    expect(team.admins.find((a) => a.email === 'boss@example.com')).toMatchObject({ role: 'owner', you: true });
    expect(team.admins.find((a) => a.email === 'member@example.com')).toMatchObject({ role: 'viewer', you: false });

    const set = (payload: unknown) => t.app.inject({ method: 'POST', url: ADMIN_TEAM_ROLE_PATH, headers: json(boss), payload: JSON.stringify(payload) });
    const promoted = await set({ id: member.id, role: 'admin' });
    expect(promoted.statusCode, promoted.body).toBe(200);
    expect(promoted.json()).toMatchObject({ id: member.id, email: 'member@example.com', role: 'admin', you: false });
    expect((await set({ id: member.id, role: 'king' })).statusCode).toBe(400);
    expect((await set({ id: '00000000-0000-4000-8000-000000000000', role: 'admin' })).statusCode).toBe(404);

    const [audit] = (await listAudit(db, 10)).filter((e) => e.action === 'role_changed');
    const bossId = decodeJwt(boss).sub;
    expect(audit).toMatchObject({ actorId: bossId, actorEmail: 'boss@example.com', detail: { admin_id: member.id, from: 'viewer', to: 'admin', by: 'admin_api' } });
  });

  it('never leaves zero owners: the last owner is refused, and two owners demoting at once leave one', async () => {
    const db = t.app.database.db;
    // Leave exactly two owners in this app's database.
    for (const row of await db.selectFrom('admin_users').select('email').where('role', '=', 'owner').execute()) {
      await db.updateTable('admin_users').set({ role: 'admin' }).where('email', '=', row.email).execute();
    }
    await createAdmin(db, 'left@example.com', PASSWORD, { role: 'owner' });
    await createAdmin(db, 'right@example.com', PASSWORD, { role: 'owner' });
    const outcomes = await Promise.allSettled([
      setAdminRole(db, { email: 'left@example.com' }, 'admin', { by: 'cli' }),
      setAdminRole(db, { email: 'right@example.com' }, 'admin', { by: 'cli' }),
    ]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    const owners = await db.selectFrom('admin_users').select('email').where('role', '=', 'owner').execute();
    expect(owners).toHaveLength(1);

    const lastOwner = (await signIn(t.app, { email: owners[0]!.email, password: PASSWORD })).access_token;
    const self = decodeJwt(lastOwner).sub!;
    const refused = await t.app.inject({ method: 'POST', url: ADMIN_TEAM_ROLE_PATH, headers: json(lastOwner), payload: { id: self, role: 'admin' } });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ error: { code: 'last_owner' } });
    expect(await roleOf(owners[0]!.email)).toBe('owner');
  });
});

describe('an admin route without a declared role', () => {
  it('stops the app at start-up, inside a guarded scope or anywhere under /api/admin', async () => {
    const guarded = Fastify();
    registerAdminGuard(guarded);
    void guarded.register(async (scope) => {
      scope.guardAdminScope();
      scope.get('/internal/report', async () => 'secret');
    });
    await expect(guarded.ready()).rejects.toThrow(/GET \/internal\/report is an admin route without a declared role/);

    const loose = Fastify();
    registerAdminGuard(loose);
    void loose.register(async (scope) => {
      scope.post('/api/admin/webhooks', async () => 'created');
    });
    await expect(loose.ready()).rejects.toThrow(/POST \/api\/admin\/webhooks is an admin route without a declared role/);

    let handled = false;
    const declared = Fastify();
    registerAdminGuard(declared);
    await declared.register(async (scope) => {
      scope.guardAdminScope();
      scope.get('/api/admin/webhooks', { config: { role: 'owner' } }, async () => {
        handled = true;
        return [];
      });
    });
    await declared.ready();
    expect(declared.adminRoutes).toEqual([
      { method: 'GET', url: '/api/admin/webhooks', role: 'owner', credential: 'bearer' },
      { method: 'HEAD', url: '/api/admin/webhooks', role: 'owner', credential: 'bearer' },
    ]);
    // Declared means guarded: the check runs before the handler (this bare app has no database,
    // so it fails closed; the real app's 401s are the sweep's).
    expect((await declared.inject({ method: 'GET', url: '/api/admin/webhooks' })).statusCode).not.toBe(200);
    expect(handled).toBe(false);
    await Promise.all([guarded.close(), loose.close(), declared.close()]);
  });
});
