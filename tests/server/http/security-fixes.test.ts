import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { TEST_DIALECTS } from '../../support/databases.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';
import { signIn as signInAs } from '../../support/sign-in.js';

/** Regression tests for defects found in the security review (each failed before its fix). */

const EMAIL = 'review-admin@example.com';
const PASSWORD = 'review-Horse-battery-42';

describe.each(TEST_DIALECTS)('security review regressions (%s)', (dialect) => {
  let t: TestApp;

  beforeEach(async () => {
    t = await createTestApp({}, { dialect });
    await createAdmin(t.app.database.db, EMAIL, PASSWORD);
  });
  afterEach(async () => {
    await t.close();
  });

  const signIn = () => signInAs(t.app, { email: EMAIL, password: PASSWORD });

  describe('PUT /auth/v1/user with deeply nested metadata', () => {
    it('modest nesting (20 levels) is still stored', async () => {
      const { access_token } = await signIn();
      const res = await t.app.inject({
        method: 'PUT',
        url: '/auth/v1/user',
        headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
        payload: `{"data":{"x":${'['.repeat(20)}1${']'.repeat(20)}}}`,
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(JSON.stringify(res.json<{ user_metadata: unknown }>().user_metadata)).toBe(`{"x":${'['.repeat(20)}1${']'.repeat(20)}}`);
    });

    for (const depth of [40, 2000, 5000, 50_000, 300_000]) {
      it(`depth ${depth}: a 4xx, nothing stored, and the account keeps working`, async () => {
        const { access_token } = await signIn();
        const payload = `{"data":{"x":${'['.repeat(depth)}1${']'.repeat(depth)}}}`;
        const res = await t.app.inject({
          method: 'PUT',
          url: '/auth/v1/user',
          headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
          payload,
        });
        expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
        expect(res.statusCode, res.body).toBeLessThan(500);
        expect(res.json<{ code: string }>().code).toBe('validation_failed');
        const row = await t.app.database.db.selectFrom('admin_users').select('user_metadata').where('email', '=', EMAIL).executeTakeFirstOrThrow();
        expect(row.user_metadata).toBe('{}');
        const again = await signIn();
        const user = await t.app.inject({ method: 'GET', url: '/auth/v1/user', headers: { authorization: `Bearer ${again.access_token}` } });
        expect(user.statusCode, user.body).toBe(200);
      });
    }
  });

  describe('rate limits hold against address tricks', () => {
    async function app(env: Record<string, string>) {
      await t.close();
      t = await createTestApp(env, { dialect });
      await createAdmin(t.app.database.db, EMAIL, PASSWORD);
      return t.app;
    }
    const attempt = (remoteAddress: string, headers: Record<string, string> = {}, email = 'nobody@example.com') =>
      t.app.inject({
        method: 'POST',
        url: '/auth/v1/token?grant_type=password',
        remoteAddress,
        headers: { 'content-type': 'application/json', ...headers },
        payload: JSON.stringify({ email, password: 'wrong-password-xx' }),
      });

    it('sign-in: a spoofed X-Forwarded-For does not give a fresh per-IP budget without TRUST_PROXY', async () => {
      await app({ AUTH_IP_MAX_ATTEMPTS: '3', AUTH_ACCOUNT_MAX_FAILURES: '1000' });
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await attempt('198.51.100.9', { 'x-forwarded-for': `203.0.113.${i}` }, `u${i}@example.com`)).statusCode);
      expect(statuses).toEqual([400, 400, 400, 429, 429]);
    });

    it('sign-in: rotating IPv6 addresses inside one /64 does not give a fresh per-IP budget', async () => {
      await app({ AUTH_IP_MAX_ATTEMPTS: '3', AUTH_ACCOUNT_MAX_FAILURES: '1000' });
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await attempt(`2001:db8:1:2::${(i + 1).toString(16)}`, {}, `v${i}@example.com`)).statusCode);
      expect(statuses).toEqual([400, 400, 400, 429, 429]);
      // Another /64 has its own budget.
      expect((await attempt('2001:db8:1:3::1', {}, 'w@example.com')).statusCode).toBe(400);
    });

    it('signup: a spoofed X-Forwarded-For does not give a fresh budget without TRUST_PROXY', async () => {
      await app({ SIGNUP_RATE_LIMIT_MAX: '2' });
      const statuses = [];
      for (let i = 0; i < 4; i++) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/waitlist',
          remoteAddress: '198.51.100.20',
          headers: { 'x-forwarded-for': `203.0.113.${i}` },
          payload: { email: `spoof${i}@example.com` },
        });
        statuses.push(res.statusCode);
      }
      expect(statuses).toEqual([201, 201, 429, 429]);
    });
  });

  it('every /api/admin route, every method (HEAD included), refuses a caller without an active admin session', async () => {
    const { access_token } = await signIn();
    const out = await t.app.inject({ method: 'POST', url: '/auth/v1/logout?scope=local', headers: { authorization: `Bearer ${access_token}` } });
    expect(out.statusCode).toBe(204);
    for (const url of ['/api/admin/waitlist', '/api/admin/waitlist/delete', '/api/admin/waitlist/export', '/api/admin/waitlist/invite']) {
      for (const method of ['GET', 'HEAD', 'POST'] as const) {
        for (const headers of [{}, { authorization: `Bearer ${access_token}` }]) {
          const res = await t.app.inject({ method, url, headers, ...(method === 'POST' ? { payload: { ids: ['00000000-0000-4000-8000-000000000000'] } } : {}) });
          // 404 only where the route does not exist for that method; never data.
          expect([401, 404], `${method} ${url} ${res.statusCode}`).toContain(res.statusCode);
          if (res.statusCode === 404) expect(method === 'POST' ? url : `${method} ${url}`).not.toBe('GET /api/admin/waitlist');
          expect(res.body).not.toContain('@');
        }
      }
    }
  });
});
