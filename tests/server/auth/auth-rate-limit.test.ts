import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { verify } from '@node-rs/argon2';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { dummyPasswordHash } from '../../../src/server/auth/passwords.js';
import type { AuthApiError } from '../../../src/server/auth/errors.js';
import { AuthService, signInDelayMs } from '../../../src/server/auth/service.js';
import { accountLimitKeys, databaseStore, memoryStore, redisStore } from '../../../src/server/rate-limit/index.js';
import { runCliInProcess } from '../../support/server-process.js';
import { TEST_DIALECTS, TEST_REDIS_URL, type TestDialect } from '../../support/databases.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

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
    it('per account and client: 429 with Retry-After after the limit, even with the right password; other clients and accounts unaffected', async () => {
      const app = await setup({ AUTH_ACCOUNT_MAX_FAILURES: '3', AUTH_ACCOUNT_WINDOW_SECONDS: '900', AUTH_IP_MAX_ATTEMPTS: '1000' });
      await createAdmin(app.database.db, 'target@example.com', PASSWORD);
      await createAdmin(app.database.db, 'other@example.com', PASSWORD);
      for (let i = 0; i < 3; i++) {
        const res = await attempt(app, 'Target@Example.com', `wrong-password-${i}`, '198.51.100.7');
        expect(res.statusCode).toBe(400);
        expect(res.json()).toMatchObject({ code: 'invalid_credentials' });
      }
      const blocked = await attempt(app, 'target@example.com', PASSWORD, '198.51.100.7');
      expect(blocked.statusCode).toBe(429);
      expect(blocked.json()).toEqual({ code: 'over_request_rate_limit', message: 'Request rate limit reached' });
      expect(blocked.headers['x-sb-error-code']).toBe('over_request_rate_limit');
      const retryAfter = Number(blocked.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(800);
      expect(retryAfter).toBeLessThanOrEqual(900);
      // A stranger's failures never lock the owner out: the right password from another client works.
      expect((await attempt(app, 'target@example.com', PASSWORD, '198.51.100.99')).statusCode).toBe(200);
      expect((await attempt(app, 'other@example.com', PASSWORD, '198.51.100.7')).statusCode).toBe(200);
      // Once the window has passed the right password works again from the blocked client too.
      await passTime(app, 901_000);
      expect((await attempt(app, 'target@example.com', PASSWORD, '198.51.100.7')).statusCode).toBe(200);
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
      // Per IP, per account and client, and account-wide.
      expect(rows.map((r) => r.key.split(':')[0]).sort()).toEqual(['account', 'account', 'ip']);
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
      expect(parameters(dummyPasswordHash())).toBe(parameters(stored.password_hash));
      // Salt and digest of the sizes argon2 writes, so the verification runs in full and then fails.
      const sizes = (encoded: string) => encoded.split('$').slice(4).map((part) => part.length);
      expect(sizes(dummyPasswordHash())).toEqual(sizes(stored.password_hash));
      // argon2 itself reads it (a string it could not decode would throw, not answer false).
      await expect(verify(dummyPasswordHash(), 'wrong-password-x')).resolves.toBe(false);
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

/** Issue 8 point 6: the hard block counts per account AND client; account-wide, failures only slow sign-in down. */
describe.each(TEST_DIALECTS)('no lockout by strangers (%s)', (dialect: TestDialect) => {
  async function setup(env: Record<string, string>) {
    current = await createTestApp(env, { dialect });
    return current;
  }

  async function audit(app: FastifyInstance) {
    const rows = await app.database.db.selectFrom('audit_log').select(['action', 'actor_email', 'ip_address', 'detail']).orderBy('created_at').orderBy('id').execute();
    return rows.map((r) => ({ action: r.action, email: r.actor_email, ip: r.ip_address, reason: (JSON.parse(r.detail) as { reason?: string }).reason }));
  }

  it("a stranger's wrong passwords from one address do not stop the right password from another", async () => {
    const { app } = await setup({ AUTH_ACCOUNT_MAX_FAILURES: '3', AUTH_IP_MAX_ATTEMPTS: '1000' });
    await createAdmin(app.database.db, 'target@example.com', PASSWORD);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await attempt(app, 'target@example.com', `wrong-password-${i}`, '198.51.100.66')).statusCode);
    expect(statuses).toEqual([400, 400, 400, 429, 429, 429, 429, 429]);
    // The stranger is blocked even once they guess right; the admin elsewhere is not.
    expect((await attempt(app, 'target@example.com', PASSWORD, '198.51.100.66')).statusCode).toBe(429);
    expect((await attempt(app, 'target@example.com', PASSWORD, '203.0.113.50')).statusCode).toBe(200);
  });

  it('failures from one client are hard-blocked (an IPv6 client counts as its /64), with Retry-After', async () => {
    const { app } = await setup({ AUTH_ACCOUNT_MAX_FAILURES: '3', AUTH_ACCOUNT_WINDOW_SECONDS: '900', AUTH_IP_MAX_ATTEMPTS: '1000' });
    await createAdmin(app.database.db, 'target@example.com', PASSWORD);
    for (let i = 1; i <= 3; i++) expect((await attempt(app, 'target@example.com', 'wrong-password-x', `2001:db8:1:2::${i}`)).statusCode).toBe(400);
    const blocked = await attempt(app, 'target@example.com', PASSWORD, '2001:db8:1:2::99');
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toEqual({ code: 'over_request_rate_limit', message: 'Request rate limit reached' });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(800);
    expect((await attempt(app, 'target@example.com', PASSWORD, '2001:db8:1:3::1')).statusCode).toBe(200);
    // The window ends for the blocked client too.
    await passTime(app, 901_000);
    expect((await attempt(app, 'target@example.com', PASSWORD, '2001:db8:1:2::5')).statusCode).toBe(200);
  });

  it('account-wide failures slow sign-in down progressively, capped at 5 s, without blocking the right password', async () => {
    const { app, config } = await setup({});
    await createAdmin(app.database.db, 'target@example.com', PASSWORD);
    const sleeps: number[] = [];
    const service = new AuthService({
      db: app.database.db,
      config: { ...config.auth, accountFailureLimit: { max: 2, windowMs: 900_000 } },
      limits: memoryStore(),
      sleep: async (ms) => void sleeps.push(ms),
    });
    const failures: string[] = [];
    for (let i = 0; i < 10; i++) {
      // Each guess from another address: no client reaches its own limit.
      await service.signInWithPassword({ email: 'target@example.com', password: `wrong-password-${i}` }, { ip: `198.51.100.${i}`, userAgent: null }).catch((err: AuthApiError) => void failures.push(err.code));
    }
    expect(failures).toEqual(Array<string>(10).fill('invalid_credentials'));
    // No pause until the failures exceed what one client may make (2), then 0.25 s doubling, at most 5 s.
    expect(sleeps).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
    const session = await service.signInWithPassword({ email: 'target@example.com', password: PASSWORD }, { ip: '203.0.113.9', userAgent: null });
    expect(session.access_token).toEqual(expect.any(String));
    expect(sleeps.at(-1)).toBe(5000);
    expect([0, 1, 2, 3, 4, 40].map((n) => signInDelayMs(n, 2))).toEqual([0, 0, 250, 500, 1000, 5000]);
  });

  it('every refused sign-in is audited with its reason (wrong password, per-client block, per-IP block)', async () => {
    const { app } = await setup({ AUTH_ACCOUNT_MAX_FAILURES: '2', AUTH_IP_MAX_ATTEMPTS: '4' });
    await createAdmin(app.database.db, 'target@example.com', PASSWORD);
    const ip = '192.0.2.77';
    expect((await attempt(app, 'target@example.com', 'wrong-password-1', ip)).statusCode).toBe(400);
    expect((await attempt(app, 'target@example.com', 'wrong-password-2', ip)).statusCode).toBe(400);
    expect((await attempt(app, 'target@example.com', PASSWORD, ip)).statusCode).toBe(429);
    expect((await attempt(app, 'other@example.com', 'wrong-password-3', ip)).statusCode).toBe(400);
    expect((await attempt(app, 'other@example.com', 'wrong-password-4', ip)).statusCode).toBe(429);
    expect(await audit(app)).toEqual([
      { action: 'sign_in_failed', email: 'target@example.com', ip, reason: 'invalid_credentials' },
      { action: 'sign_in_failed', email: 'target@example.com', ip, reason: 'invalid_credentials' },
      { action: 'sign_in_refused', email: 'target@example.com', ip, reason: 'account_rate_limited' },
      { action: 'sign_in_failed', email: 'other@example.com', ip, reason: 'invalid_credentials' },
      { action: 'sign_in_refused', email: 'other@example.com', ip, reason: 'ip_rate_limited' },
    ]);
  });

  it('npm run admin -- unlock EMAIL clears the counters of the account only', async () => {
    const t = await setup({ AUTH_ACCOUNT_MAX_FAILURES: '2', AUTH_IP_MAX_ATTEMPTS: '1000' });
    const { app } = t;
    await createAdmin(app.database.db, 'target@example.com', PASSWORD);
    await createAdmin(app.database.db, 'other@example.com', PASSWORD);
    for (const email of ['target@example.com', 'other@example.com']) {
      for (let i = 0; i < 3; i++) await attempt(app, email, 'wrong-password-x', '198.51.100.20');
      expect((await attempt(app, email, PASSWORD, '198.51.100.20')).statusCode).toBe(429);
    }
    const { run } = await import('../../../src/server/cli/admin.js');
    const res = await runCliInProcess(run, ['unlock', 'Target@Example.com'], { env: { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe('Sign-in counters cleared for target@example.com in the database.\n');
    const keys = await app.database.db.selectFrom('auth_rate_limits').select('key').execute();
    const target = accountLimitKeys('target@example.com').prefix;
    expect(keys.filter((k) => k.key.startsWith(target))).toEqual([]);
    expect((await attempt(app, 'target@example.com', PASSWORD, '198.51.100.20')).statusCode).toBe(200);
    expect((await attempt(app, 'other@example.com', PASSWORD, '198.51.100.20')).statusCode).toBe(429);
    expect((await audit(app)).filter((e) => e.action === 'unlock')).toEqual([{ action: 'unlock', email: 'target@example.com', ip: null, reason: undefined }]);
    const unknown = await runCliInProcess(run, ['unlock', 'ghost@example.com'], { env: { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' } });
    expect(unknown.stdout).toContain('(No admin has this address.)');
  });

  it('resetPrefix clears exactly the keys with the prefix (memory and database stores, and Redis when configured)', async () => {
    const { app } = await setup({});
    const limit = { max: 5, windowMs: 60_000 };
    const stores = [memoryStore(), databaseStore(app.database.db)];
    // A per-run prefix with glob characters, which SCAN MATCH must take literally.
    if (TEST_REDIS_URL) stores.push(await redisStore(TEST_REDIS_URL, { prefix: `test:unlock:${randomUUID()}:*?[x]:` }));
    for (const store of stores) {
      const keys = accountLimitKeys('a@example.com');
      const other = accountLimitKeys('b@example.com');
      for (const key of [keys.account, keys.client('192.0.2.1'), keys.client('2001:db8::/64'), other.account, other.client('192.0.2.1')]) await store.hit(key, limit);
      await store.resetPrefix(keys.prefix);
      expect((await store.peek(keys.account, limit)).count).toBe(0);
      expect((await store.peek(keys.client('192.0.2.1'), limit)).count).toBe(0);
      expect((await store.peek(keys.client('2001:db8::/64'), limit)).count).toBe(0);
      expect((await store.peek(other.account, limit)).count).toBe(1);
      expect((await store.peek(other.client('192.0.2.1'), limit)).count).toBe(1);
      await store.resetPrefix(other.prefix);
      expect((await store.peek(other.account, limit)).count).toBe(0);
      await store.close();
    }
  });
});
