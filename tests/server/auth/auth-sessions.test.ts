import { AuthClient, AuthSessionMissingError } from '@supabase/auth-js';
import { decodeJwt } from 'jose';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { run } from '../../../src/server/cli/admin.js';
import { ADMIN_WAITLIST_PATH } from '../../../src/shared/admin/waitlist-api.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { runCliInProcess } from '../../support/server-process.js';
import { signIn, type AuthSession } from '../../support/sign-in.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Issue 8, points 4, 5 and 9 and the `sessions` CLI: sessions that end (absolute lifetime and
 * inactivity, answered as GoTrue does), the current password for a password change, PUT /user's
 * rate limit, and concurrent refreshes that all end on the same usable token.
 */
const PASSWORD = 'correct-Horse-battery-42';
const NEW_PASSWORD = 'another-Long-passphrase-7';
const JSON_HEADERS = { 'content-type': 'application/json;charset=UTF-8', 'x-supabase-api-version': '2024-01-01' };
const MINUTE = 60_000;

let counter = 0;
/** A fresh admin per test, so no test sees another's sessions or counters. */
async function newAdmin(app: FastifyInstance): Promise<{ id: string; email: string }> {
  counter += 1;
  return createAdmin(app.database.db, `sessions${counter}@example.com`, PASSWORD);
}

function bearer(token: string) {
  return { authorization: `Bearer ${token}` };
}

function refresh(app: FastifyInstance, token: string): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url: '/auth/v1/token?grant_type=refresh_token', headers: JSON_HEADERS, payload: JSON.stringify({ refresh_token: token }) });
}

function putUser(app: FastifyInstance, accessToken: string, body: unknown): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'PUT', url: '/auth/v1/user', headers: { ...JSON_HEADERS, ...bearer(accessToken) }, payload: JSON.stringify(body) });
}

function expectAuthError(res: LightMyRequestResponse, status: number, code: string, message?: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['x-sb-error-code']).toBe(code);
  const body = res.json() as { code: string; message: string };
  expect(body.code).toBe(code);
  if (message !== undefined) expect(body.message).toBe(message);
}

const sessionIdOf = (s: Pick<AuthSession, 'access_token'>) => decodeJwt(s.access_token).session_id as string;

describe.each(TEST_DIALECTS)('admin sessions (%s)', (dialect: TestDialect) => {
  let t: TestApp;
  let app: FastifyInstance;

  beforeAll(async () => {
    t = await createTestApp({ AUTH_IP_MAX_ATTEMPTS: '1000', AUTH_USER_UPDATE_MAX_REQUESTS: '4' }, { dialect });
    app = t.app;
  });
  afterAll(async () => {
    await t.close();
  });

  async function sessionRow(id: string) {
    return app.database.db.selectFrom('admin_sessions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Moves the session's sign-in, refresh and last use back in time. */
  async function ageSession(id: string, changes: { createdMs?: number; activeMs?: number; refreshedMs?: number }) {
    const row = await sessionRow(id);
    if (!row) throw new Error(`no session ${id}`);
    const back = (value: Date | string | null, ms = 0) => new Date(new Date(value ?? row.updated_at).getTime() - ms).toISOString();
    await app.database.db
      .updateTable('admin_sessions')
      .set({
        created_at: back(row.created_at, changes.createdMs),
        last_active_at: back(row.last_active_at, changes.activeMs),
        updated_at: back(row.updated_at, changes.refreshedMs),
      })
      .where('id', '=', id)
      .execute();
  }

  /** Moves every refresh token of the session back, as if its rotations happened `ms` ago. */
  async function ageTokens(sessionId: string, ms: number) {
    const rows = await app.database.db.selectFrom('admin_refresh_tokens').selectAll().where('session_id', '=', sessionId).execute();
    for (const row of rows) {
      const back = (v: Date | string) => new Date(new Date(v).getTime() - ms).toISOString();
      await app.database.db
        .updateTable('admin_refresh_tokens')
        .set({ created_at: back(row.created_at), updated_at: back(row.updated_at) })
        .where('id', '=', row.id)
        .execute();
    }
  }

  describe('sessions end (absolute lifetime and inactivity)', () => {
    it('defaults: 12 h absolute, 30 min inactivity', () => {
      expect(t.config.auth.sessionMaxAgeSeconds).toBe(43_200);
      expect(t.config.auth.sessionInactivitySeconds).toBe(1800);
    });

    it('a session idle for longer than the timeout: refresh 400 session_expired, deleted, its token refused everywhere', async () => {
      const admin = await newAdmin(app);
      const s = await signIn(app, { email: admin.email, password: PASSWORD });
      const id = sessionIdOf(s);
      await ageSession(id, { activeMs: 31 * MINUTE });
      expectAuthError(await refresh(app, s.refresh_token), 400, 'session_expired', 'Invalid Refresh Token: Session Expired (Inactivity)');
      expect(await sessionRow(id)).toBeUndefined();
      expectAuthError(await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(s.access_token) }), 403, 'session_not_found');
      expect((await app.inject({ method: 'GET', url: ADMIN_WAITLIST_PATH, headers: bearer(s.access_token) })).statusCode).toBe(401);
    });

    it('the access token of an idle session is refused before it expires, and the session is deleted', async () => {
      const admin = await newAdmin(app);
      const s = await signIn(app, { email: admin.email, password: PASSWORD });
      const id = sessionIdOf(s);
      await ageSession(id, { activeMs: 31 * MINUTE });
      const res = await app.inject({ method: 'GET', url: ADMIN_WAITLIST_PATH, headers: bearer(s.access_token) });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ error: { code: 'unauthorized' } });
      expect(await sessionRow(id)).toBeUndefined();
    });

    it('background refreshes are not activity; admin API calls are', async () => {
      const admin = await newAdmin(app);
      const s = await signIn(app, { email: admin.email, password: PASSWORD });
      const id = sessionIdOf(s);
      // 25 minutes without use: a refresh still works, but does not count as use.
      await ageSession(id, { activeMs: 25 * MINUTE, refreshedMs: 25 * MINUTE });
      const r1 = await refresh(app, s.refresh_token);
      expect(r1.statusCode, r1.body).toBe(200);
      const activeAfterRefresh = new Date((await sessionRow(id))!.last_active_at!).getTime();
      expect(Date.now() - activeAfterRefresh).toBeGreaterThanOrEqual(25 * MINUTE - MINUTE);
      // Six minutes later (31 without use) the refresh is refused.
      await ageSession(id, { activeMs: 6 * MINUTE });
      expectAuthError(await refresh(app, (r1.json() as AuthSession).refresh_token), 400, 'session_expired');

      // Another session, used through the admin API 25 minutes in: it lives on.
      const other = await signIn(app, { email: admin.email, password: PASSWORD });
      const otherId = sessionIdOf(other);
      await ageSession(otherId, { activeMs: 25 * MINUTE });
      expect((await app.inject({ method: 'GET', url: ADMIN_WAITLIST_PATH, headers: bearer(other.access_token) })).statusCode).toBe(200);
      expect(Date.now() - new Date((await sessionRow(otherId))!.last_active_at!).getTime()).toBeLessThan(MINUTE);
      await ageSession(otherId, { activeMs: 6 * MINUTE });
      expect((await refresh(app, other.refresh_token)).statusCode).toBe(200);
    });

    it('with a short inactivity limit, use is recorded often enough that a session in use never times out', async () => {
      const short = await createTestApp({ AUTH_SESSION_INACTIVITY_SECONDS: '60' }, { dialect });
      try {
        const admin = await newAdmin(short.app);
        const s = await signIn(short.app, { email: admin.email, password: PASSWORD });
        const lastUseAgo = async (ms: number) => {
          await short.app.database.db
            .updateTable('admin_sessions')
            .set({ last_active_at: new Date(Date.now() - ms).toISOString() })
            .where('id', '=', sessionIdOf(s))
            .execute();
        };
        const useAdminApi = () => short.app.inject({ method: 'GET', url: ADMIN_WAITLIST_PATH, headers: bearer(s.access_token) });
        await lastUseAgo(30_000);
        expect((await useAdminApi()).statusCode).toBe(200);
        // That use was recorded (a minute's resolution would have skipped it and ended the session 30 s early)…
        const row = await short.app.database.db.selectFrom('admin_sessions').select('last_active_at').where('id', '=', sessionIdOf(s)).executeTakeFirstOrThrow();
        expect(Date.now() - new Date(row.last_active_at!).getTime()).toBeLessThan(10_000);
        // …so 40 s later (70 s after the earlier use) the session is still within its 60 s limit.
        await lastUseAgo(40_000);
        expect((await useAdminApi()).statusCode).toBe(200);
      } finally {
        await short.close();
      }
    });

    it('a session older than the absolute lifetime ends however active it is', async () => {
      const admin = await newAdmin(app);
      const s = await signIn(app, { email: admin.email, password: PASSWORD });
      const id = sessionIdOf(s);
      await ageSession(id, { createdMs: 12 * 60 * MINUTE + MINUTE });
      expectAuthError(await refresh(app, s.refresh_token), 400, 'session_expired', 'Invalid Refresh Token: Session Expired');
      expect(await sessionRow(id)).toBeUndefined();
    });

    it('a sign-in deletes the ended sessions of the account', async () => {
      const admin = await newAdmin(app);
      const old = await signIn(app, { email: admin.email, password: PASSWORD });
      const live = await signIn(app, { email: admin.email, password: PASSWORD });
      await ageSession(sessionIdOf(old), { activeMs: 40 * MINUTE });
      await signIn(app, { email: admin.email, password: PASSWORD });
      expect(await sessionRow(sessionIdOf(old))).toBeUndefined();
      expect(await sessionRow(sessionIdOf(live))).toBeDefined();
    });

    it('auth-js drops an ended session (getUser → AuthSessionMissingError, storage cleared)', async () => {
      const admin = await newAdmin(app);
      await app.listen({ host: '127.0.0.1', port: 0 }); // closed with the app
      const { port } = app.server.address() as AddressInfo;
      const map = new Map<string, string>();
      const auth = new AuthClient({
        url: `http://127.0.0.1:${port}/auth/v1`,
        storageKey: 'sb-sessions-test',
        storage: { getItem: (k) => map.get(k) ?? null, setItem: (k, v) => void map.set(k, v), removeItem: (k) => void map.delete(k) },
        autoRefreshToken: false,
        detectSessionInUrl: false,
        persistSession: true,
      });
      const { data } = await auth.signInWithPassword({ email: admin.email, password: PASSWORD });
      await ageSession(sessionIdOf(data.session!), { activeMs: 31 * MINUTE });
      const user = await auth.getUser();
      expect(user.error).toBeInstanceOf(AuthSessionMissingError);
      expect(map.has('sb-sessions-test')).toBe(false);
      expect((await auth.getSession()).data.session).toBeNull();
    });

    it('the limits are configurable and checked', async () => {
      const { loadConfig, ConfigError } = await import('../../../src/server/config.js');
      const c = loadConfig({ AUTH_SESSION_MAX_AGE_SECONDS: '3600', AUTH_SESSION_INACTIVITY_SECONDS: '600' });
      expect(c.auth.sessionMaxAgeSeconds).toBe(3600);
      expect(c.auth.sessionInactivitySeconds).toBe(600);
      expect(() => loadConfig({ AUTH_SESSION_MAX_AGE_SECONDS: '10' })).toThrow(ConfigError);
      expect(() => loadConfig({ AUTH_SESSION_INACTIVITY_SECONDS: '0' })).toThrow(ConfigError);
    });
  });

  describe('PUT /user: the current password, and a rate limit', () => {
    it('a password change needs the current password (GoTrue codes and message)', async () => {
      const admin = await newAdmin(app);
      const s = await signIn(app, { email: admin.email, password: PASSWORD });
      const other = await signIn(app, { email: admin.email, password: PASSWORD });
      const message = 'Current password required when setting new password.';
      expectAuthError(await putUser(app, s.access_token, { password: NEW_PASSWORD }), 400, 'current_password_required', message);
      expectAuthError(await putUser(app, s.access_token, { password: NEW_PASSWORD, current_password: '' }), 400, 'current_password_required', message);
      expectAuthError(await putUser(app, s.access_token, { password: NEW_PASSWORD, current_password: 'not-the-Password-1' }), 400, 'current_password_invalid', message);
      // Nothing changed: the other session and the old password still work.
      expect((await refresh(app, other.refresh_token)).statusCode).toBe(200);
      await signIn(app, { email: admin.email, password: PASSWORD });
      const ok = await putUser(app, s.access_token, { password: NEW_PASSWORD, current_password: PASSWORD, code_challenge: null, code_challenge_method: null });
      expect(ok.statusCode, ok.body).toBe(200);
      await signIn(app, { email: admin.email, password: NEW_PASSWORD });
      expect((await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(other.access_token) })).statusCode).toBe(403);
    });

    it('the same password is only reported once the current one is proven', async () => {
      const admin = await newAdmin(app);
      const s = await signIn(app, { email: admin.email, password: PASSWORD });
      expectAuthError(await putUser(app, s.access_token, { password: PASSWORD }), 400, 'current_password_required');
      expectAuthError(await putUser(app, s.access_token, { password: PASSWORD, current_password: PASSWORD }), 422, 'same_password');
    });

    it('is rate limited per session: 429 over_request_rate_limit with Retry-After, even with the right current password', async () => {
      const admin = await newAdmin(app);
      const s = await signIn(app, { email: admin.email, password: PASSWORD });
      for (let i = 0; i < 4; i++) {
        expectAuthError(await putUser(app, s.access_token, { password: NEW_PASSWORD, current_password: `guess-Number-${i}-xyz` }), 400, 'current_password_invalid');
      }
      const limited = await putUser(app, s.access_token, { password: NEW_PASSWORD, current_password: PASSWORD });
      expectAuthError(limited, 429, 'over_request_rate_limit', 'Request rate limit reached');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect((await putUser(app, s.access_token, { data: { a: 1 } })).statusCode).toBe(429);
      // The password did not change.
      await signIn(app, { email: admin.email, password: PASSWORD });
    });
  });

  describe('refresh races (GoTrue reuse interval, one chain per session)', () => {
    it('concurrent refreshes of one token all get the same usable token', async () => {
      const admin = await newAdmin(app);
      const s = await signIn(app, { email: admin.email, password: PASSWORD });
      const results = await Promise.all([1, 2, 3, 4, 5].map(() => refresh(app, s.refresh_token)));
      expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200]);
      const tokens = new Set(results.map((r) => (r.json() as AuthSession).refresh_token));
      expect(tokens.size).toBe(1);
      const [current] = [...tokens];
      const active = await app.database.db.selectFrom('admin_refresh_tokens').select('id').where('session_id', '=', sessionIdOf(s)).where('revoked_at', 'is', null).execute();
      expect(active).toHaveLength(1);
      // The token every tab holds works, long after the race.
      await ageTokens(sessionIdOf(s), 60_000);
      const next = await refresh(app, current!);
      expect(next.statusCode, next.body).toBe(200);
      // Every access token of the race belongs to the live session.
      for (const r of results) {
        expect((await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer((r.json() as AuthSession).access_token) })).statusCode).toBe(200);
      }
    });

    it('concurrent refreshes of an already rotated token (a third tab) get the current token, never a revoked one', async () => {
      const admin = await newAdmin(app);
      const s = await signIn(app, { email: admin.email, password: PASSWORD });
      const a = (await refresh(app, s.refresh_token)).json() as AuthSession;
      const b = (await refresh(app, a.refresh_token)).json() as AuthSession;
      const late = await Promise.all([refresh(app, s.refresh_token), refresh(app, a.refresh_token), refresh(app, s.refresh_token)]);
      expect(late.map((r) => r.statusCode)).toEqual([200, 200, 200]);
      for (const r of late) expect((r.json() as AuthSession).refresh_token).toBe(b.refresh_token);
      await ageTokens(sessionIdOf(s), 60_000);
      expect((await refresh(app, b.refresh_token)).statusCode).toBe(200);
    });

    it('a token replayed after the reuse interval revokes the session, even the parent of the active token', async () => {
      const admin = await newAdmin(app);
      const s = await signIn(app, { email: admin.email, password: PASSWORD });
      const a = (await refresh(app, s.refresh_token)).json() as AuthSession;
      await ageTokens(sessionIdOf(s), 11_000);
      expectAuthError(await refresh(app, s.refresh_token), 400, 'refresh_token_already_used', 'Invalid Refresh Token: Already Used');
      expect(await sessionRow(sessionIdOf(s))).toBeUndefined();
      expectAuthError(await refresh(app, a.refresh_token), 400, 'refresh_token_not_found');
      expectAuthError(await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(a.access_token) }), 403, 'session_not_found');
    });

    it('every replay after the interval is refused: a thief and the owner cannot take turns', async () => {
      const admin = await newAdmin(app);
      const s = await signIn(app, { email: admin.email, password: PASSWORD });
      // The owner rotates; a thief holding the old token replays it later: the session ends for both.
      const owner = (await refresh(app, s.refresh_token)).json() as AuthSession;
      await ageTokens(sessionIdOf(s), 30_000);
      expectAuthError(await refresh(app, s.refresh_token), 400, 'refresh_token_already_used');
      expectAuthError(await refresh(app, owner.refresh_token), 400, 'refresh_token_not_found');
      // Same the other way round: the thief rotates first, the owner's later retry ends the session.
      const s2 = await signIn(app, { email: admin.email, password: PASSWORD });
      const thief = (await refresh(app, s2.refresh_token)).json() as AuthSession;
      await ageTokens(sessionIdOf(s2), 30_000);
      expectAuthError(await refresh(app, s2.refresh_token), 400, 'refresh_token_already_used');
      expectAuthError(await refresh(app, thief.refresh_token), 400, 'refresh_token_not_found');
    });
  });

  describe('npm run admin -- sessions', () => {
    const cli = (args: string[]) => runCliInProcess(run, args, { env: { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' } });

    it('lists the sessions (id, sign-in, last active, IP, browser), revokes one, then all', async () => {
      const admin = await newAdmin(app);
      const one = await signIn(app, { email: admin.email, password: PASSWORD });
      const two = await signIn(app, { email: admin.email, password: PASSWORD });
      await app.database.db.updateTable('admin_sessions').set({ user_agent: 'Evil\u001b[31m\u202eBrowser' }).where('id', '=', sessionIdOf(two)).execute();

      const listed = await cli(['sessions', admin.email.toUpperCase()]);
      expect(listed.code, listed.stderr).toBe(0);
      const lines = listed.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^Session\s+Signed in\s+Last active\s+IP\s+Browser$/);
      expect(lines).toHaveLength(4);
      expect(listed.stdout).toContain(sessionIdOf(one));
      expect(listed.stdout).toContain(sessionIdOf(two));
      expect(listed.stdout).toContain('127.0.0.1');
      expect(listed.stdout).toContain('Evil\\u001b[31m\\u202eBrowser');
      expect(listed.stdout).not.toContain('\u001b');

      const revoked = await cli(['sessions', admin.email, '--revoke', sessionIdOf(one)]);
      expect(revoked.code, revoked.stderr).toBe(0);
      expect(revoked.stdout).toContain(`1 session of ${admin.email} signed out.`);
      expect((await app.inject({ method: 'GET', url: ADMIN_WAITLIST_PATH, headers: bearer(one.access_token) })).statusCode).toBe(401);
      expect((await app.inject({ method: 'GET', url: ADMIN_WAITLIST_PATH, headers: bearer(two.access_token) })).statusCode).toBe(200);

      const again = await cli(['sessions', admin.email, '--revoke', sessionIdOf(one)]);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/has no session/);
      const bad = await cli(['sessions', admin.email, '--revoke', 'yesterday']);
      expect(bad.code).toBe(2);

      await signIn(app, { email: admin.email, password: PASSWORD });
      const all = await cli(['sessions', admin.email, '--revoke', 'all']);
      expect(all.code, all.stderr).toBe(0);
      expect(all.stdout).toContain(`2 sessions of ${admin.email} signed out.`);
      expect((await app.inject({ method: 'GET', url: ADMIN_WAITLIST_PATH, headers: bearer(two.access_token) })).statusCode).toBe(401);
      const empty = await cli(['sessions', admin.email]);
      expect(empty.stdout).toContain(`${admin.email} has no active session.`);

      // An ended session is not listed (and is deleted, as the server would).
      const idle = await signIn(app, { email: admin.email, password: PASSWORD });
      await ageSession(sessionIdOf(idle), { activeMs: 31 * MINUTE });
      expect((await cli(['sessions', admin.email])).stdout).toContain(`${admin.email} has no active session.`);
      expect(await sessionRow(sessionIdOf(idle))).toBeUndefined();

      const audit = await app.database.db.selectFrom('audit_log').select(['action', 'detail']).where('action', '=', 'session_revoked').where('actor_id', '=', admin.id).execute();
      expect(audit).toHaveLength(2);
    });

    it('an unknown admin is an error', async () => {
      const res = await cli(['sessions', 'nobody-here@example.com']);
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/No admin with the e-mail nobody-here@example.com/);
    });
  });
});
