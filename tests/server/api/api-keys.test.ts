import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../../src/server/cli/admin.js';
import { hashApiKey } from '../../../src/server/api/keys.js';
import { listAudit } from '../../../src/server/audit/audit-log.js';
import { ADMIN_API_KEYS_PATH, type ApiKeySummary } from '../../../src/shared/admin/api-keys-api.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { createAdminTestApp, TEST_ADMIN } from '../../support/admin-app.js';
import { runCliInProcess } from '../../support/server-process.js';
import type { TestApp } from '../../support/test-app.js';

/** API keys made, listed and revoked in /admin's API and with `npm run admin -- api-keys`, on both databases. */
describe.each(TEST_DIALECTS)('API keys (%s)', (dialect: TestDialect) => {
  let t: TestApp;
  let token: string;
  beforeEach(async () => {
    ({ t, token } = await createAdminTestApp({}, { dialect }));
  });
  afterEach(async () => {
    await t.close();
  });

  const admin = (method: 'GET' | 'POST', url: string, payload?: object) =>
    t.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });
  const cli = (args: string[]) => runCliInProcess(run, ['api-keys', ...args], { env: { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent', AUTH_SECRET_KEY_FILE: `${t.dataDir}/auth-secret.key` } });

  it('creates a key in /admin shown once, stores only its hash, lists it with its last use, and revokes it; audited', async () => {
    const created = await admin('POST', ADMIN_API_KEYS_PATH, { name: 'CRM sync', scopes: ['entries:read', 'export'], expiresInDays: 30 });
    expect(created.statusCode, created.body).toBe(201);
    const { key, token: secret } = created.json() as { key: ApiKeySummary; token: string };
    expect(secret).toMatch(/^wl_[A-Za-z0-9_-]{43}$/);
    expect(key).toMatchObject({ name: 'CRM sync', scopes: ['entries:read', 'export'], prefix: secret.slice(0, 11), revokedAt: null, lastUsedAt: null, rateLimit: 600 });
    expect(Date.parse(key.expiresAt!) - Date.parse(key.createdAt)).toBe(30 * 86_400_000);

    const stored = await t.app.database.db.selectFrom('api_keys').selectAll().executeTakeFirstOrThrow();
    expect(stored.token_hash).toBe(hashApiKey(secret));
    expect(JSON.stringify(stored)).not.toContain(secret);

    expect((await t.app.inject({ method: 'GET', url: '/api/v1/entries', headers: { authorization: `Bearer ${secret}` } })).statusCode).toBe(200);
    const listed = await admin('GET', ADMIN_API_KEYS_PATH);
    expect(listed.body).not.toContain(secret);
    const [summary] = listed.json().keys as ApiKeySummary[];
    expect(summary!.id).toBe(key.id);

    const revoked = await admin('POST', `${ADMIN_API_KEYS_PATH}/${key.id}/revoke`);
    expect(revoked.json().revokedAt).not.toBeNull();
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/entries', headers: { authorization: `Bearer ${secret}` } })).json().error.code).toBe('key_revoked');
    expect((await admin('POST', `${ADMIN_API_KEYS_PATH}/00000000-0000-4000-8000-000000000000/revoke`)).statusCode).toBe(404);

    const audit = await listAudit(t.app.database.db, 50);
    expect(audit.find((a) => a.action === 'api_key_created')).toMatchObject({ actorEmail: TEST_ADMIN.email, detail: { key_id: key.id, scopes: ['entries:read', 'export'], by: 'admin' } });
    expect(audit.find((a) => a.action === 'api_key_revoked')).toMatchObject({ actorEmail: TEST_ADMIN.email, detail: { key_id: key.id } });
    expect(JSON.stringify(audit)).not.toContain(secret);

    const bad = await admin('POST', ADMIN_API_KEYS_PATH, { name: ' ', scopes: ['entries:read'] });
    expect(bad.statusCode).toBe(400);
    expect((await admin('POST', ADMIN_API_KEYS_PATH, { name: 'x', scopes: ['admin'] })).statusCode).toBe(400);
    expect((await admin('POST', ADMIN_API_KEYS_PATH, { name: 'x', scopes: [] })).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: ADMIN_API_KEYS_PATH })).statusCode).toBe(401);
  });

  it('npm run admin -- api-keys create, list and revoke', async () => {
    const created = await cli(['create', 'Nightly', 'export', '--scopes', 'entries:read,signups:write', '--expires', '7', '--rate-limit', '50']);
    expect(created.code, created.stderr).toBe(0);
    const secret = /^(wl_[A-Za-z0-9_-]{43})$/m.exec(created.stdout)?.[1];
    expect(secret).toBeDefined();
    const id = /Created API key ([0-9a-f-]{36})/.exec(created.stdout)![1]!;
    expect(created.stdout).toContain('50 requests a minute');

    const signup = await t.app.inject({ method: 'POST', url: '/api/v1/signups', headers: { authorization: `Bearer ${secret}` }, payload: { email: 'cli@example.com' } });
    expect(signup.statusCode).toBe(201);

    const listed = await cli(['list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('Nightly export');
    expect(listed.stdout).toContain('entries:read,signups:write');
    expect(listed.stdout).toContain('active');
    expect(listed.stdout).not.toContain(secret!);

    expect((await cli(['revoke', id])).stdout).toContain('is revoked');
    expect((await cli(['list'])).stdout).toMatch(/revoked \d{4}-/);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/entries', headers: { authorization: `Bearer ${secret}` } })).statusCode).toBe(401);

    expect((await cli(['create', 'x'])).code).toBe(2);
    expect((await cli(['create', 'x', '--scopes', 'everything'])).code).toBe(2);
    expect((await cli(['create', 'x', '--scopes', 'export', '--expires', '0'])).code).toBe(2);
    expect((await cli(['revoke', 'nope'])).code).toBe(2);
    expect((await cli(['revoke', '00000000-0000-4000-8000-000000000000'])).code).toBe(1);
    const audit = await listAudit(t.app.database.db, 50);
    expect(audit.filter((a) => a.action === 'api_key_created' && a.detail.by === 'cli')).toHaveLength(1);
  });
});
