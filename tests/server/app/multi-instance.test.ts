import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { openDatabase } from '../../../src/server/db/database.js';
import { rateLimitAddress } from '../../../src/server/geolocation/ip.js';
import { accountLimitKeys, DEFAULT_REDIS_PREFIX, limitKey } from '../../../src/server/rate-limit/index.js';
import { ADMIN_WAITLIST_PATH } from '../../../src/shared/admin/waitlist-api.js';
import { SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { createScratchPostgres, TEST_REDIS_URL, type ScratchPostgres } from '../../support/databases.js';
import { startInstance, stopInstance, waitHealthy, type Instance } from '../../support/server-process.js';
import { postPasswordGrant } from '../../support/sign-in.js';

/**
 * Two real server processes on one PostgreSQL database, talked to over HTTP: sessions, sign-out,
 * signing keys and every rate limit must hold across them, with the limits counted in PostgreSQL
 * and then, with REDIS_URL set on both, in Redis.
 */

const PASSWORD = 'correct-Horse-battery-42';
const SIGNUP_MAX = 3;
const ACCOUNT_MAX_FAILURES = 3;

const REDIS_URL = TEST_REDIS_URL ?? '';

const backends = [
  { backend: 'PostgreSQL', redis: false },
  ...(TEST_REDIS_URL ? [{ backend: 'Redis', redis: true }] : []),
];

// This file is only collected when TEST_DATABASE_URL is set (vitest.config.ts).
describe('two instances on one PostgreSQL', () => {
  describe.each(backends)('rate limits in $backend', ({ redis }) => {

    let scratch: ScratchPostgres;
    let a: Instance;
    let b: Instance;
    // Unique per run, so runs sharing one Redis never share a counter: the client address (both
    // instances trust one proxy hop and read it from X-Forwarded-For) and the admin's email.
    const clientIp = `198.18.${randomBytes(1)[0]}.${1 + (randomBytes(1)[0]! % 254)}`;
    const email = `admin-${randomBytes(4).toString('hex')}@example.com`;

    const request = (instance: Instance, path: string, init: { method?: string; body?: unknown; token?: string; form?: boolean } = {}) =>
      fetch(`${instance.base}${path}`, {
        method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
        headers: {
          'x-forwarded-for': clientIp,
          ...(init.body !== undefined ? { 'content-type': init.form ? 'application/x-www-form-urlencoded' : 'application/json' } : {}),
          ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
        },
        body: init.body === undefined ? undefined : init.form ? String(init.body) : JSON.stringify(init.body),
      });
    const signIn = (instance: Instance, password: string) => postPasswordGrant(instance.base, { email, password }, { 'x-forwarded-for': clientIp });

    beforeAll(async () => {
      scratch = await createScratchPostgres();
      const env = {
        DATABASE_URL: scratch.url,
        REDIS_URL: redis ? REDIS_URL : '',
        TRUST_PROXY: '1',
        SIGNUP_RATE_LIMIT_MAX: String(SIGNUP_MAX),
        AUTH_ACCOUNT_MAX_FAILURES: String(ACCOUNT_MAX_FAILURES),
        AUTH_IP_MAX_ATTEMPTS: '100',
      };
      a = startInstance('instance A', env);
      b = startInstance('instance B', env);
      await Promise.all([waitHealthy(a), waitHealthy(b)]);
      const handle = openDatabase({ dialect: 'postgres', connectionString: scratch.url });
      try {
        await createAdmin(handle.db, email, PASSWORD);
      } finally {
        await handle.close();
      }
    });

    afterAll(async () => {
      await Promise.all([a, b].filter(Boolean).map(stopInstance));
      await scratch?.drop();
      if (redis) {
        const client = new Redis(REDIS_URL);
        const account = accountLimitKeys(email);
        const keys = [limitKey('signup', clientIp), limitKey('ip', clientIp), account.account, account.client(rateLimitAddress(clientIp))];
        await client.del(...keys.map((k) => DEFAULT_REDIS_PREFIX + k));
        client.disconnect();
      }
    });

    it('publishes the same signing keys on both', async () => {
      const [jwksA, jwksB] = await Promise.all([a, b].map(async (i) => (await request(i, '/auth/v1/.well-known/jwks.json')).json()));
      expect((jwksA as { keys: unknown[] }).keys.length).toBeGreaterThan(0);
      expect(jwksB).toEqual(jwksA);
    });

    it('a session from one instance works on the other; sign-out on one revokes it on both', async () => {
      const signedIn = await signIn(a, PASSWORD);
      expect(signedIn.status).toBe(200);
      const session = (await signedIn.json()) as { access_token: string; refresh_token: string };

      expect((await request(b, '/auth/v1/user', { token: session.access_token })).status).toBe(200);
      expect((await request(b, ADMIN_WAITLIST_PATH, { token: session.access_token })).status).toBe(200);

      const refreshed = await request(b, '/auth/v1/token?grant_type=refresh_token', { body: { refresh_token: session.refresh_token } });
      expect(refreshed.status).toBe(200);
      const next = (await refreshed.json()) as { access_token: string; refresh_token: string };
      expect(next.refresh_token).not.toBe(session.refresh_token);
      expect((await request(a, ADMIN_WAITLIST_PATH, { token: next.access_token })).status).toBe(200);

      expect((await request(a, '/auth/v1/logout?scope=global', { method: 'POST', token: session.access_token })).status).toBe(204);
      for (const token of [session.access_token, next.access_token]) {
        expect((await request(b, ADMIN_WAITLIST_PATH, { token })).status).toBe(401);
        const user = await request(b, '/auth/v1/user', { token });
        expect(user.status).toBe(403);
        expect(await user.json()).toMatchObject({ code: 'session_not_found' });
      }
      const reuse = await request(b, '/auth/v1/token?grant_type=refresh_token', { body: { refresh_token: next.refresh_token } });
      expect(reuse.status).toBe(400);
    });

    it('the signup limit holds across instances', async () => {
      const signUp = (instance: Instance, n: number) => request(instance, SIGNUP_PATH, { body: { email: `multi${n}@example.com` } });
      expect((await signUp(a, 1)).status).toBe(201);
      expect((await signUp(a, 2)).status).toBe(201);
      expect((await signUp(b, 3)).status).toBe(201);
      for (const instance of [b, a]) {
        const limited = await signUp(instance, 4);
        expect(limited.status, instance.name).toBe(429);
        expect(await limited.json()).toEqual({ error: { code: 'rate_limited', message: 'Too many signup attempts. Please wait a minute and try again.' } });
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      const form = await request(a, SIGNUP_PATH, { body: 'email=multi5%40example.com', form: true });
      expect(form.status).toBe(429);
      expect(form.headers.get('content-type')).toBe('text/html; charset=utf-8');
    });

    it('the sign-in brute-force limit holds across instances', async () => {
      for (const instance of [a, b, a]) {
        const res = await signIn(instance, 'wrong-password-x');
        expect(res.status, instance.name).toBe(400);
        expect(await res.json()).toMatchObject({ code: 'invalid_credentials' });
      }
      for (const instance of [b, a]) {
        // Even the right password: the account is locked for the rest of the window.
        const blocked = await signIn(instance, PASSWORD);
        expect(blocked.status, instance.name).toBe(429);
        expect(await blocked.json()).toEqual({ code: 'over_request_rate_limit', message: 'Request rate limit reached' });
        const retryAfter = Number(blocked.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThan(800);
        expect(retryAfter).toBeLessThanOrEqual(900);
      }
    });

    if (redis) {
      it('keeps those counters in Redis, not in the database', async () => {
        const client = new Redis(REDIS_URL);
        try {
          expect(await client.get(DEFAULT_REDIS_PREFIX + limitKey('signup', clientIp))).toBe('6');
          // Five attempts from this client against the account, three of them failures account-wide; the
          // two refused ones were answered without a write (security review, finding 2), so the client's count stays 3.
          const keys = accountLimitKeys(email);
          expect(Number(await client.get(DEFAULT_REDIS_PREFIX + keys.client(rateLimitAddress(clientIp))))).toBe(3);
          expect(Number(await client.get(DEFAULT_REDIS_PREFIX + keys.account))).toBe(3);
        } finally {
          client.disconnect();
        }
        const handle = openDatabase({ dialect: 'postgres', connectionString: scratch.url });
        try {
          expect(await handle.db.selectFrom('auth_rate_limits').selectAll().execute()).toEqual([]);
        } finally {
          await handle.close();
        }
      });
    }
  });
});
