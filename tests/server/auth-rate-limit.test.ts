import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdmin } from '../../src/server/auth/admins.js';
import { dummyPasswordHash } from '../../src/server/auth/passwords.js';
import { TEST_DIALECTS, type TestDialect } from '../support/databases.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const PASSWORD = 'correct-Horse-battery-42';

let current: TestApp | null = null;
afterEach(async () => {
  await current?.close();
  current = null;
});


function attempt(app: FastifyInstance, email: string, password: string, ip = '203.0.113.7') {
  return app.inject({
    method: 'POST',
    url: '/auth/v1/token?grant_type=password',
    remoteAddress: ip,
    headers: { 'content-type': 'application/json', 'x-supabase-api-version': '2024-01-01' },
    payload: JSON.stringify({ email, password, gotrue_meta_security: {} }),
  });
}

/** Moves every rate-limit window back, as if `ms` had passed. */
async function passTime(app: FastifyInstance, ms: number) {
  const rows = await app.database.db.selectFrom('auth_rate_limits').selectAll().execute();
  for (const row of rows) {
    await app.database.db.updateTable('auth_rate_limits').set({ window_start_ms: Number(row.window_start_ms) - ms }).where('key', '=', row.key).execute();
  }
}

describe.each(TEST_DIALECTS)('rate limits and credential handling (%s)', (dialect: TestDialect) => {
  async function setup(env: Record<string, string>, options: Parameters<typeof createTestApp>[1] = {}) {
    current = await createTestApp(env, { ...options, dialect });
    return current.app;
  }

  describe('brute-force limits on password sign-in', () => {
    it('per account: 429 with Retry-After after the limit, even with the right password; other accounts unaffected', async () => {
      const app = await setup({ AUTH_ACCOUNT_MAX_FAILURES: '3', AUTH_ACCOUNT_WINDOW_SECONDS: '900', AUTH_IP_MAX_ATTEMPTS: '1000' });
      await createAdmin(app.database.db, 'target@example.com', PASSWORD);
      await createAdmin(app.database.db, 'other@example.com', PASSWORD);
      for (let i = 0; i < 3; i++) {
        // Different source addresses: the account limit holds whatever the IP.
        const res = await attempt(app, 'Target@Example.com', `wrong-password-${i}`, `198.51.100.${i}`);
        expect(res.statusCode).toBe(400);
        expect(res.json()).toMatchObject({ code: 'invalid_credentials' });
      }
      const blocked = await attempt(app, 'target@example.com', PASSWORD, '198.51.100.99');
      expect(blocked.statusCode).toBe(429);
      expect(blocked.json()).toEqual({ code: 'over_request_rate_limit', message: 'Request rate limit reached' });
      expect(blocked.headers['x-sb-error-code']).toBe('over_request_rate_limit');
      const retryAfter = Number(blocked.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(800);
      expect(retryAfter).toBeLessThanOrEqual(900);
      expect((await attempt(app, 'other@example.com', PASSWORD)).statusCode).toBe(200);
      // Once the window has passed the right password works again.
      await passTime(app, 901_000);
      expect((await attempt(app, 'target@example.com', PASSWORD)).statusCode).toBe(200);
    });

    it('per account: a successful sign-in clears the counter', async () => {
      const app = await setup({ AUTH_ACCOUNT_MAX_FAILURES: '3', AUTH_IP_MAX_ATTEMPTS: '1000' });
      await createAdmin(app.database.db, 'target@example.com', PASSWORD);
      for (let i = 0; i < 2; i++) expect((await attempt(app, 'target@example.com', 'wrong-password-x')).statusCode).toBe(400);
      expect((await attempt(app, 'target@example.com', PASSWORD)).statusCode).toBe(200);
      for (let i = 0; i < 3; i++) expect((await attempt(app, 'target@example.com', 'wrong-password-x')).statusCode).toBe(400);
      expect((await attempt(app, 'target@example.com', 'wrong-password-x')).statusCode).toBe(429);
    });

    it('per account: unknown addresses are limited the same way (no account enumeration)', async () => {
      const app = await setup({ AUTH_ACCOUNT_MAX_FAILURES: '2', AUTH_IP_MAX_ATTEMPTS: '1000' });
      for (let i = 0; i < 2; i++) expect((await attempt(app, 'ghost@example.com', 'wrong-password-x')).statusCode).toBe(400);
      expect((await attempt(app, 'ghost@example.com', 'wrong-password-x')).statusCode).toBe(429);
    });

    it('per IP: 429 with Retry-After after the limit, across accounts; other IPs unaffected', async () => {
      const app = await setup({ AUTH_IP_MAX_ATTEMPTS: '5', AUTH_IP_WINDOW_SECONDS: '300', AUTH_ACCOUNT_MAX_FAILURES: '1000' });
      await createAdmin(app.database.db, 'admin@example.com', PASSWORD);
      for (let i = 0; i < 5; i++) {
        expect((await attempt(app, `user${i}@example.com`, 'wrong-password-x', '192.0.2.1')).statusCode).toBe(400);
      }
      const blocked = await attempt(app, 'admin@example.com', PASSWORD, '192.0.2.1');
      expect(blocked.statusCode).toBe(429);
      expect(blocked.json()).toMatchObject({ code: 'over_request_rate_limit' });
      const retryAfter = Number(blocked.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(300);
      expect((await attempt(app, 'admin@example.com', PASSWORD, '192.0.2.2')).statusCode).toBe(200);
      await passTime(app, 301_000);
      expect((await attempt(app, 'admin@example.com', PASSWORD, '192.0.2.1')).statusCode).toBe(200);
    });

    it('counters live in the database (shared by every instance)', async () => {
      const app = await setup({ AUTH_IP_MAX_ATTEMPTS: '5' });
      await attempt(app, 'someone@example.com', 'wrong-password-x', '192.0.2.50');
      const rows = await app.database.db.selectFrom('auth_rate_limits').selectAll().execute();
      expect(rows.map((r) => r.key.split(':')[0]).sort()).toEqual(['account', 'ip']);
      // Keys are hashed: neither the address nor the IP is stored in clear.
      expect(JSON.stringify(rows)).not.toContain('someone@example.com');
      expect(JSON.stringify(rows)).not.toContain('192.0.2.50');
    });

    it('does not rate-limit refresh for legitimate clients', async () => {
      const app = await setup({ AUTH_IP_MAX_ATTEMPTS: '2', AUTH_ACCOUNT_MAX_FAILURES: '2' });
      await createAdmin(app.database.db, 'admin@example.com', PASSWORD);
      let token = ((await attempt(app, 'admin@example.com', PASSWORD)).json() as { refresh_token: string }).refresh_token;
      for (let i = 0; i < 20; i++) {
        const res = await app.inject({
          method: 'POST',
          url: '/auth/v1/token?grant_type=refresh_token',
          remoteAddress: '203.0.113.7',
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify({ refresh_token: token }),
        });
        expect(res.statusCode, res.body).toBe(200);
        token = (res.json() as { refresh_token: string }).refresh_token;
      }
    });
  });

  describe('credential errors', () => {
    it('an unknown address and a wrong password get the same answer, and both pay one argon2id verification', async () => {
      const app = await setup({ AUTH_IP_MAX_ATTEMPTS: '1000', AUTH_ACCOUNT_MAX_FAILURES: '1000' });
      await createAdmin(app.database.db, 'admin@example.com', PASSWORD);
      for (let i = 0; i < 3; i++) {
        const unknown = await attempt(app, `nobody${i}@example.com`, 'wrong-password-x');
        const wrong = await attempt(app, 'admin@example.com', 'wrong-password-x');
        expect(unknown.statusCode).toBe(400);
        expect(wrong.statusCode).toBe(400);
        expect(unknown.json()).toEqual(wrong.json());
        expect(unknown.json()).toEqual({ code: 'invalid_credentials', message: 'Invalid login credentials' });
      }
      // Similar timing is by construction: the unknown address is verified against a dummy hash made
      // with exactly the parameters of a real one (cost is measured by benchmarks, not asserted here).
      const stored = await app.database.db.selectFrom('admin_users').select('password_hash').executeTakeFirstOrThrow();
      const parameters = (encoded: string) => encoded.split('$').slice(1, 4).join('$');
      expect(parameters(await dummyPasswordHash())).toBe(parameters(stored.password_hash));
      expect(parameters(stored.password_hash)).toMatch(/^argon2id\$v=19\$m=19456,t=2,p=1$/);
    });
  });

  describe('logging', () => {
    it('never writes a password or refresh token to the logs', async () => {
      const lines: string[] = [];
      const stream = new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString('utf8'));
          done();
        },
      });
      const app = await setup({ AUTH_IP_MAX_ATTEMPTS: '1000' }, { logger: { level: 'trace', stream } });
      const secret = 'Sup3r-secret-passphrase-zebra';
      const next = 'Another-secret-passphrase-okapi';
      await createAdmin(app.database.db, 'admin@example.com', secret);
      await attempt(app, 'admin@example.com', 'Wrong-secret-passphrase-lynx');
      const ok = await attempt(app, 'admin@example.com', secret);
      const session = ok.json() as { access_token: string; refresh_token: string };
      const auth = { authorization: `Bearer ${session.access_token}`, 'content-type': 'application/json' };
      await app.inject({ method: 'PUT', url: '/auth/v1/user', headers: auth, payload: JSON.stringify({ password: 'weak-zebra' }) });
      await app.inject({ method: 'PUT', url: '/auth/v1/user', headers: auth, payload: JSON.stringify({ password: next }) });
      await app.inject({ method: 'POST', url: '/auth/v1/token?grant_type=password', headers: { 'content-type': 'application/json' }, payload: `{"email":"admin@example.com","password":"${secret}"` });
      const refreshed = await app.inject({ method: 'POST', url: '/auth/v1/token?grant_type=refresh_token', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ refresh_token: session.refresh_token }) });
      expect(refreshed.statusCode).toBe(200);
      await app.inject({ method: 'POST', url: '/auth/v1/logout?scope=global', headers: { authorization: auth.authorization } });
      const log = lines.join('');
      expect(log).toContain('incoming request'); // logging is really on
      for (const s of [secret, next, 'Wrong-secret-passphrase-lynx', 'weak-zebra', session.refresh_token, (refreshed.json() as { refresh_token: string }).refresh_token]) {
        expect(log).not.toContain(s);
      }
    });
  });
});
