import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { hashRefreshToken } from '../../../src/server/auth/tokens.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const EMAIL = 'admin@example.com';
const PASSWORD = 'correct-Horse-battery-42';
const JSON_HEADERS = { 'content-type': 'application/json;charset=UTF-8', 'x-supabase-api-version': '2024-01-01' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/;

interface Session {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  expires_at: number;
  token_type: string;
  user: Record<string, unknown>;
  weak_password?: unknown;
}

function post(app: FastifyInstance, url: string, body?: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url,
    headers: { ...JSON_HEADERS, ...headers },
    ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

async function signIn(app: FastifyInstance, email = EMAIL, password = PASSWORD): Promise<Session> {
  const res = await post(app, '/auth/v1/token?grant_type=password', { email, password, gotrue_meta_security: {} });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Session;
}

async function refresh(app: FastifyInstance, token: string): Promise<LightMyRequestResponse> {
  return post(app, '/auth/v1/token?grant_type=refresh_token', { refresh_token: token });
}

function bearer(token: string) {
  return { authorization: `Bearer ${token}` };
}

function expectAuthError(res: LightMyRequestResponse, status: number, code: string, message?: string | RegExp) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['x-supabase-api-version']).toBe('2024-01-01');
  expect(res.headers['x-sb-error-code']).toBe(code);
  const body = res.json() as { code: string; message: string };
  expect(body.code).toBe(code);
  expect(typeof body.message).toBe('string');
  if (message instanceof RegExp) expect(body.message).toMatch(message);
  else if (message !== undefined) expect(body.message).toBe(message);
}

let t: TestApp;
let app: FastifyInstance;

async function sessionCount(userId?: string): Promise<number> {
  let q = app.database.db.selectFrom('admin_sessions').select('id');
  if (userId) q = q.where('user_id', '=', userId);
  return (await q.execute()).length;
}

describe.each(TEST_DIALECTS)('auth service (%s)', (dialect: TestDialect) => {
  beforeAll(async () => {
    t = await createTestApp({ AUTH_IP_MAX_ATTEMPTS: '10000', AUTH_ACCOUNT_MAX_FAILURES: '10000' }, { dialect });
    app = t.app;
    await createAdmin(app.database.db, EMAIL, PASSWORD);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('POST /auth/v1/token?grant_type=password', () => {
    it('returns a GoTrue session with an ES256 access token', async () => {
      const res = await post(app, '/auth/v1/token?grant_type=password', { email: 'ADMIN@example.com ', password: PASSWORD, gotrue_meta_security: {} });
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      const s = res.json() as Session;
      expect(s.token_type).toBe('bearer');
      expect(s.expires_in).toBe(3600);
      expect(s.weak_password).toBeNull();
      expect(s.refresh_token).toMatch(/^[A-Za-z0-9_-]{43,}$/);
      const header = decodeProtectedHeader(s.access_token);
      expect(header.alg).toBe('ES256');
      expect(header.kid).toMatch(UUID);
      const claims = decodeJwt(s.access_token);
      expect(claims.exp).toBe(s.expires_at);
      expect(s.expires_at - (claims.iat as number)).toBe(3600);
      expect(claims).toMatchObject({
        aud: 'authenticated',
        role: 'authenticated',
        email: EMAIL,
        phone: '',
        aal: 'aal1',
        is_anonymous: false,
        app_metadata: { provider: 'email', providers: ['email'] },
        user_metadata: {},
      });
      expect(claims.sub).toMatch(UUID);
      expect(claims.session_id).toMatch(UUID);
      expect(claims.amr).toEqual([{ method: 'password', timestamp: expect.any(Number) }]);
      const user = s.user;
      expect(user).toMatchObject({
        id: claims.sub,
        aud: 'authenticated',
        role: 'authenticated',
        email: EMAIL,
        phone: '',
        app_metadata: { provider: 'email', providers: ['email'] },
        user_metadata: {},
        is_anonymous: false,
      });
      for (const field of ['created_at', 'updated_at', 'last_sign_in_at', 'email_confirmed_at']) expect(user[field]).toMatch(ISO);
      const identities = user.identities as Array<Record<string, unknown>>;
      expect(identities).toHaveLength(1);
      expect(identities[0]).toMatchObject({ id: claims.sub, user_id: claims.sub, provider: 'email', email: EMAIL });
      expect(identities[0]?.identity_id).toMatch(UUID);
      // Only the hash of the refresh token is stored.
      const stored = await app.database.db.selectFrom('admin_refresh_tokens').select('token_hash').execute();
      expect(stored.map((r) => r.token_hash)).toContain(hashRefreshToken(s.refresh_token));
      expect(stored.map((r) => r.token_hash)).not.toContain(s.refresh_token);
    });

    it('reports a stored password that no longer meets the policy, without blocking', async () => {
      const weakEmail = 'old-policy@example.com';
      const { hashPassword } = await import('../../../src/server/auth/passwords.js');
      const now = new Date().toISOString();
      await app.database.db
        .insertInto('admin_users')
        .values({ id: crypto.randomUUID(), email: weakEmail, password_hash: await hashPassword('short1'), user_metadata: '{}', created_at: now, updated_at: now, last_sign_in_at: null })
        .execute();
      const s = await signIn(app, weakEmail, 'short1');
      expect(s.weak_password).toEqual({ message: expect.any(String), reasons: ['length'] });
    });
  });

  describe('error cases (GoTrue status + code)', () => {
    const big = JSON.stringify({ email: EMAIL, password: 'x'.repeat(1024 * 1024 + 10) });
    const cases: Array<{ name: string; method?: 'GET' | 'POST' | 'PUT'; url: string; body?: unknown; headers?: Record<string, string>; status: number; code: string; message?: string | RegExp }> = [
      { name: 'unknown grant type', url: '/auth/v1/token?grant_type=magic', body: {}, status: 400, code: 'invalid_credentials', message: 'unsupported_grant_type' },
      { name: 'missing grant type', url: '/auth/v1/token', body: {}, status: 400, code: 'invalid_credentials' },
      { name: 'malformed JSON', url: '/auth/v1/token?grant_type=password', body: '{"email":', status: 400, code: 'bad_json', message: /Could not parse request body as JSON/ },
      { name: 'JSON array body', url: '/auth/v1/token?grant_type=password', body: '[1,2]', status: 400, code: 'bad_json' },
      // Security review, finding 3: a body that is not application/json is a 415 (GoTrue's shape and code).
      { name: 'non-JSON content type with garbage', url: '/auth/v1/token?grant_type=password', body: 'email=a', headers: { 'content-type': 'text/plain' }, status: 415, code: 'bad_json' },
      { name: 'email not a string', url: '/auth/v1/token?grant_type=password', body: { email: 42, password: PASSWORD }, status: 400, code: 'bad_json' },
      { name: 'email and phone', url: '/auth/v1/token?grant_type=password', body: { email: EMAIL, phone: '+15555550100', password: PASSWORD }, status: 400, code: 'validation_failed', message: 'Only an email address or phone number should be provided on login.' },
      { name: 'neither email nor phone', url: '/auth/v1/token?grant_type=password', body: { password: PASSWORD }, status: 400, code: 'validation_failed', message: 'missing email or phone' },
      { name: 'empty body', url: '/auth/v1/token?grant_type=password', status: 400, code: 'validation_failed', message: 'missing email or phone' },
      { name: 'phone login', url: '/auth/v1/token?grant_type=password', body: { phone: '+15555550100', password: PASSWORD }, status: 422, code: 'phone_provider_disabled' },
      { name: 'missing password', url: '/auth/v1/token?grant_type=password', body: { email: EMAIL }, status: 400, code: 'validation_failed', message: 'missing password' },
      { name: 'wrong password', url: '/auth/v1/token?grant_type=password', body: { email: EMAIL, password: 'wrong-password-123' }, status: 400, code: 'invalid_credentials', message: 'Invalid login credentials' },
      { name: 'unknown address', url: '/auth/v1/token?grant_type=password', body: { email: 'nobody@example.com', password: PASSWORD }, status: 400, code: 'invalid_credentials', message: 'Invalid login credentials' },
      { name: 'body over 1 MB', url: '/auth/v1/token?grant_type=password', body: big, status: 413, code: 'request_entity_too_large' },
      { name: 'refresh without token', url: '/auth/v1/token?grant_type=refresh_token', body: {}, status: 400, code: 'validation_failed', message: 'Refresh token is not valid' },
      { name: 'refresh with short token', url: '/auth/v1/token?grant_type=refresh_token', body: { refresh_token: 'abc' }, status: 400, code: 'validation_failed' },
      { name: 'refresh with unknown token', url: '/auth/v1/token?grant_type=refresh_token', body: { refresh_token: 'A'.repeat(43) }, status: 400, code: 'refresh_token_not_found', message: 'Invalid Refresh Token: Refresh Token Not Found' },
      { name: 'signup is disabled', url: '/auth/v1/signup', body: { email: 'new@example.com', password: PASSWORD, data: {}, code_challenge: null, code_challenge_method: null }, status: 422, code: 'signup_disabled', message: 'Signups not allowed for this instance' },
      { name: 'GET /user without token', method: 'GET', url: '/auth/v1/user', status: 401, code: 'no_authorization', message: 'This endpoint requires a valid Bearer token' },
      { name: 'GET /user with Basic auth', method: 'GET', url: '/auth/v1/user', headers: { authorization: 'Basic YTpi' }, status: 401, code: 'no_authorization' },
      { name: 'GET /user with garbage token', method: 'GET', url: '/auth/v1/user', headers: bearer('not.a.jwt'), status: 403, code: 'bad_jwt' },
      { name: 'PUT /user without token', method: 'PUT', url: '/auth/v1/user', body: { data: {} }, status: 401, code: 'no_authorization' },
      { name: 'logout without token', url: '/auth/v1/logout?scope=global', status: 401, code: 'no_authorization' },
      { name: 'unknown auth route', method: 'GET', url: '/auth/v1/nope', status: 404, code: 'not_found' },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const payload = c.body === undefined ? undefined : typeof c.body === 'string' ? c.body : JSON.stringify(c.body);
        const res = await app.inject({
          method: c.method ?? 'POST',
          url: c.url,
          headers: { ...JSON_HEADERS, ...(c.headers ?? {}) },
          ...(payload === undefined ? {} : { payload }),
        });
        expectAuthError(res, c.status, c.code, c.message);
      });
    }
  });

  describe('public endpoints', () => {
    it('GET /settings, /health and the JWKS', async () => {
      const settings = await app.inject({ method: 'GET', url: '/auth/v1/settings' });
      expect(settings.statusCode).toBe(200);
      expect(settings.json()).toMatchObject({ external: { email: true, phone: false }, disable_signup: true });
      const health = await app.inject({ method: 'GET', url: '/auth/v1/health' });
      expect(health.json()).toMatchObject({ name: 'GoTrue' });
      const jwks = await app.inject({ method: 'GET', url: '/auth/v1/.well-known/jwks.json' });
      expect(jwks.statusCode).toBe(200);
      expect(jwks.headers['cache-control']).toBe('public, max-age=600');
      const { keys } = jwks.json() as { keys: Array<Record<string, unknown>> };
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', key_ops: ['verify'] });
      expect(keys[0]).not.toHaveProperty('d');
      expect(keys[0]).not.toHaveProperty('ext');
      const s = await signIn(app);
      expect(decodeProtectedHeader(s.access_token).kid).toBe(keys[0]?.kid);
    });
  });

  describe('GET/PUT /user', () => {
    it('returns the bare user', async () => {
      const s = await signIn(app);
      const res = await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(s.access_token) });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: s.user.id, email: EMAIL, aud: 'authenticated' });
    });

    it('merges data into user_metadata, null deletes a key, code_challenge nulls are ignored', async () => {
      const s = await signIn(app);
      const put = (body: unknown) => app.inject({ method: 'PUT', url: '/auth/v1/user', headers: { ...JSON_HEADERS, ...bearer(s.access_token) }, payload: JSON.stringify(body) });
      let res = await put({ data: { theme: 'dark', name: 'Ada' }, code_challenge: null, code_challenge_method: null });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ user_metadata: { theme: 'dark', name: 'Ada' } });
      res = await put({ data: { theme: null, lang: 'en' }, email: EMAIL, code_challenge: null, code_challenge_method: null });
      expect(res.json()).toMatchObject({ user_metadata: { name: 'Ada', lang: 'en' } });
      expect((res.json() as { user_metadata: object }).user_metadata).not.toHaveProperty('theme');
      // The next refresh carries the new metadata in the JWT.
      const r = (await refresh(app, s.refresh_token)).json() as Session;
      expect(decodeJwt(r.access_token).user_metadata).toEqual({ name: 'Ada', lang: 'en' });
      await put({ data: { name: null, lang: null } });
    });

    it('rejects unsupported changes and weak or unchanged passwords', async () => {
      const s = await signIn(app);
      const put = (body: unknown) => app.inject({ method: 'PUT', url: '/auth/v1/user', headers: { ...JSON_HEADERS, ...bearer(s.access_token) }, payload: JSON.stringify(body) });
      expectAuthError(await put({ email: 'other@example.com' }), 422, 'validation_failed', 'Email changes are not supported');
      expectAuthError(await put({ phone: '+15555550100' }), 422, 'validation_failed');
      expectAuthError(await put({ app_metadata: { role: 'x' } }), 403, 'not_admin');
      expectAuthError(await put({ data: [1] }), 400, 'bad_json');
      const weak = await put({ password: 'short' });
      expectAuthError(weak, 422, 'weak_password');
      expect(weak.json()).toMatchObject({ weak_password: { reasons: ['length'] } });
      const guessable = await put({ password: 'password12345' });
      expectAuthError(guessable, 422, 'weak_password');
      expect(guessable.json()).toMatchObject({ weak_password: { reasons: ['pwned'] } });
      expectAuthError(await put({ password: 'x'.repeat(300) }), 400, 'validation_failed');
      expectAuthError(await put({ password: 'x'.repeat(129) }), 400, 'validation_failed', 'Password cannot be longer than 128 characters');
      expectAuthError(await put({ password: PASSWORD, current_password: PASSWORD }), 422, 'same_password', 'New password should be different from the old password.');
    });

    it('a password change keeps this session and deletes the others', async () => {
      const email = 'changer@example.com';
      const { id } = await createAdmin(app.database.db, email, PASSWORD);
      const a = await signIn(app, email);
      const b = await signIn(app, email);
      expect(await sessionCount(id)).toBe(2);
      const newPassword = 'another-Long-passphrase-7';
      const res = await app.inject({ method: 'PUT', url: '/auth/v1/user', headers: { ...JSON_HEADERS, ...bearer(a.access_token) }, payload: JSON.stringify({ password: newPassword, current_password: PASSWORD, code_challenge: null, code_challenge_method: null }) });
      expect(res.statusCode, res.body).toBe(200);
      expect(await sessionCount(id)).toBe(1);
      expect((await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(a.access_token) })).statusCode).toBe(200);
      expectAuthError(await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(b.access_token) }), 403, 'session_not_found');
      expectAuthError(await refresh(app, b.refresh_token), 400, 'refresh_token_not_found');
      expectAuthError(await post(app, '/auth/v1/token?grant_type=password', { email, password: PASSWORD }), 400, 'invalid_credentials');
      await signIn(app, email, newPassword);
    });
  });

  describe('refresh tokens', () => {
    it('rotates on every use and keeps the session', async () => {
      const s = await signIn(app);
      const res = await refresh(app, s.refresh_token);
      expect(res.statusCode, res.body).toBe(200);
      const r = res.json() as Session;
      expect(r).not.toHaveProperty('weak_password');
      expect(r.refresh_token).not.toBe(s.refresh_token);
      expect(r.user).toMatchObject({ id: s.user.id, email: EMAIL });
      expect(decodeJwt(r.access_token).session_id).toBe(decodeJwt(s.access_token).session_id);
      const r2 = (await refresh(app, r.refresh_token)).json() as Session;
      expect(r2.refresh_token).not.toBe(r.refresh_token);
      const rows = await app.database.db
        .selectFrom('admin_refresh_tokens')
        .selectAll()
        .where('session_id', '=', decodeJwt(s.access_token).session_id as string)
        .orderBy('created_at')
        .execute();
      expect(rows).toHaveLength(3);
      expect(rows.filter((row) => row.revoked_at === null)).toHaveLength(1);
    });

    it('answers a lost response (the parent of the active token) within the grace window, and revokes the session after it', async () => {
      const s = await signIn(app);
      const sessionId = decodeJwt(s.access_token).session_id as string;
      const r1 = (await refresh(app, s.refresh_token)).json() as Session;
      // The client never stored r1 and retries with its old token at once: it gets the active token.
      const again = await refresh(app, s.refresh_token);
      expect(again.statusCode, again.body).toBe(200);
      expect((again.json() as Session).refresh_token).toBe(r1.refresh_token);
      // The same replay once the window has passed is treated as theft, every time.
      await ageTokens(sessionId, 60);
      expectAuthError(await refresh(app, s.refresh_token), 400, 'refresh_token_already_used');
      expect(await app.database.db.selectFrom('admin_sessions').select('id').where('id', '=', sessionId).executeTakeFirst()).toBeUndefined();
    });

    it('allows reuse within the 10 s grace window (several tabs refreshing at once)', async () => {
      const s = await signIn(app);
      const a = (await refresh(app, s.refresh_token)).json() as Session;
      const b = (await refresh(app, a.refresh_token)).json() as Session;
      // s is now a grandparent (not the parent of the active token), but it was rotated a moment ago.
      const tab2 = await refresh(app, s.refresh_token);
      expect(tab2.statusCode, tab2.body).toBe(200);
      const c = tab2.json() as Session;
      // Both branches stay usable.
      expect((await refresh(app, b.refresh_token)).statusCode).toBe(200);
      expect((await refresh(app, c.refresh_token)).statusCode).toBe(200);
      // The same grandparent once the window has passed is theft.
      await ageTokens(decodeJwt(s.access_token).session_id as string, 11);
      expectAuthError(await refresh(app, s.refresh_token), 400, 'refresh_token_already_used');
    });

    it('reuse of a rotated token outside the grace window revokes the whole session', async () => {
      const s = await signIn(app);
      const sessionId = decodeJwt(s.access_token).session_id as string;
      const a = (await refresh(app, s.refresh_token)).json() as Session;
      const b = (await refresh(app, a.refresh_token)).json() as Session;
      await ageTokens(sessionId, 11);
      // s is neither the parent of the active token nor within the window: theft.
      expectAuthError(await refresh(app, s.refresh_token), 400, 'refresh_token_already_used', 'Invalid Refresh Token: Already Used');
      expect(await app.database.db.selectFrom('admin_sessions').select('id').where('id', '=', sessionId).executeTakeFirst()).toBeUndefined();
      expectAuthError(await refresh(app, b.refresh_token), 400, 'refresh_token_not_found');
      expectAuthError(await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(b.access_token) }), 403, 'session_not_found');
    });

    it('concurrent refreshes of one token all succeed and all end with a usable session (serialised per session)', async () => {
      const s = await signIn(app);
      const results = await Promise.all([1, 2, 3, 4].map(() => refresh(app, s.refresh_token)));
      expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
      // Every tab is handed the session's one current token, so no tab holds a revoked one.
      const tokens = results.map((r) => (r.json() as Session).refresh_token);
      expect(new Set(tokens).size).toBe(1);
      for (const token of tokens) expect((await refresh(app, token)).statusCode).toBe(200);
    });
  });

  /** Moves every token's timestamps of a session back, as if the rotations happened `seconds` ago. */
  async function ageTokens(sessionId: string, seconds: number) {
    const rows = await app.database.db.selectFrom('admin_refresh_tokens').select(['id', 'created_at', 'updated_at']).where('session_id', '=', sessionId).execute();
    for (const row of rows) {
      const back = (v: Date | string) => new Date(new Date(v).getTime() - seconds * 1000).toISOString();
      await app.database.db.updateTable('admin_refresh_tokens').set({ created_at: back(row.created_at), updated_at: back(row.updated_at) }).where('id', '=', row.id).execute();
    }
  }

  describe('logout scopes', () => {
    async function threeSessions(email: string) {
      const { id } = await createAdmin(app.database.db, email, PASSWORD);
      const sessions = [await signIn(app, email), await signIn(app, email), await signIn(app, email)];
      expect(await sessionCount(id)).toBe(3);
      return { id, sessions };
    }
    const logout = (token: string, scope?: string) =>
      app.inject({ method: 'POST', url: `/auth/v1/logout${scope === undefined ? '' : `?scope=${scope}`}`, headers: { ...JSON_HEADERS, ...bearer(token) } });

    it('local ends only this session (204, empty body)', async () => {
      const { id, sessions } = await threeSessions('local@example.com');
      const [a, b] = sessions as [Session, Session, Session];
      const res = await logout(a.access_token, 'local');
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expect(await sessionCount(id)).toBe(2);
      expectAuthError(await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(a.access_token) }), 403, 'session_not_found', 'Session from session_id claim in JWT does not exist');
      expect((await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(b.access_token) })).statusCode).toBe(200);
      expectAuthError(await refresh(app, a.refresh_token), 400, 'refresh_token_not_found');
    });

    it('others ends every session but this one', async () => {
      const { id, sessions } = await threeSessions('others@example.com');
      const [a, b, c] = sessions as [Session, Session, Session];
      expect((await logout(a.access_token, 'others')).statusCode).toBe(204);
      expect(await sessionCount(id)).toBe(1);
      expect((await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(a.access_token) })).statusCode).toBe(200);
      for (const s of [b, c]) expect((await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(s.access_token) })).statusCode).toBe(403);
    });

    it('global (and a missing scope) ends every session of the user only', async () => {
      const { id, sessions } = await threeSessions('global@example.com');
      const { id: otherId } = await threeSessions('bystander@example.com');
      expect((await logout(sessions[1]!.access_token, 'global')).statusCode).toBe(204);
      expect(await sessionCount(id)).toBe(0);
      expect(await sessionCount(otherId)).toBe(3);
      const again = await Promise.all([signIn(app, 'global@example.com'), signIn(app, 'global@example.com')]);
      expect((await logout(again[0].access_token)).statusCode).toBe(204);
      expect(await sessionCount(id)).toBe(0);
    });

    it('rejects an unknown scope and records sign-outs in the audit log', async () => {
      const s = await signIn(app);
      expectAuthError(await logout(s.access_token, 'everything'), 400, 'validation_failed', 'Unsupported logout scope "everything"');
      expect((await logout(s.access_token, 'local')).statusCode).toBe(204);
      const { listAudit } = await import('../../../src/server/audit/audit-log.js');
      const entries = await listAudit(app.database.db, 200);
      expect(entries.some((e) => e.action === 'sign_out' && e.actorEmail === EMAIL && e.detail.scope === 'local')).toBe(true);
      expect(entries.some((e) => e.action === 'sign_in' && e.actorEmail === EMAIL)).toBe(true);
      expect(entries.some((e) => e.action === 'sign_in_failed' && e.actorEmail === 'nobody@example.com')).toBe(true);
    });
  });

  describe('robustness', () => {
    it('no input gives a 5xx', async () => {
      const s = await signIn(app);
      const bodies: Array<string | undefined> = [
        undefined, '', 'null', 'true', '42', '"text"', '[]', '{}', '{"email":null,"password":null}',
        JSON.stringify({ email: 'a\u0000b@example.com', password: 'x\u0000y' }),
        JSON.stringify({ email: 'x'.repeat(100_000) + '@example.com', password: 'p' }),
        JSON.stringify({ email: ['a'], password: { a: 1 } }),
        JSON.stringify({ email: EMAIL, password: '\ud800' }),
        JSON.stringify({ refresh_token: ['a'.repeat(20)] }),
        JSON.stringify({ refresh_token: '\u0000'.repeat(20) }),
        JSON.stringify({ data: { __proto__: { admin: true }, constructor: 'x', nested: { deep: [1, { a: null }] } } }),
        JSON.stringify({ data: null, password: null, email: null, phone: null, code_challenge: null, code_challenge_method: null }),
        JSON.stringify({ data: { big: 'x'.repeat(20_000) } }),
        JSON.stringify({ password: 12345 }),
        '{"__proto__":{"polluted":true}}',
        '\u0000',
      ];
      const targets: Array<{ method: 'GET' | 'POST' | 'PUT'; url: string; auth?: boolean }> = [
        { method: 'POST', url: '/auth/v1/token?grant_type=password' },
        { method: 'POST', url: '/auth/v1/token?grant_type=refresh_token' },
        { method: 'POST', url: '/auth/v1/token?grant_type=password&grant_type=refresh_token' },
        { method: 'PUT', url: '/auth/v1/user', auth: true },
        { method: 'POST', url: '/auth/v1/logout?scope=local&scope=global', auth: true },
        { method: 'POST', url: '/auth/v1/signup' },
      ];
      const statuses: number[] = [];
      for (const target of targets) {
        for (const body of bodies) {
          for (const contentType of ['application/json', 'text/plain', undefined]) {
            const res = await app.inject({
              method: target.method,
              url: target.url,
              headers: {
                ...(contentType ? { 'content-type': contentType } : {}),
                ...(target.auth ? bearer(s.access_token) : {}),
              },
              ...(body === undefined ? {} : { payload: body }),
            });
            statuses.push(res.statusCode);
            expect(res.statusCode, `${target.method} ${target.url} ${contentType} ${body?.slice(0, 80)}: ${res.body}`).toBeLessThan(500);
          }
        }
      }
      for (const authorization of ['Bearer', 'Bearer ', 'Bearer a.b', 'Bearer ...', 'bearer e30.e30.', `Bearer ${'a'.repeat(8000)}`, 'Bearer eyJhbGciOiJFUzI1NiIsImtpZCI6WzFdfQ.e30.AA']) {
        const res = await app.inject({ method: 'GET', url: '/auth/v1/user', headers: { authorization } });
        expect(res.statusCode, authorization.slice(0, 40)).toBeLessThan(500);
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(({} as Record<string, unknown>).admin).toBeUndefined();
      expect(statuses.length).toBeGreaterThan(100);
    });
  });

  describe('admin management (shared with the CLI)', () => {
    it('lists, changes passwords (signing out everywhere) and deletes admins', async () => {
      const { listAdmins, setAdminPassword, deleteAdmin, countAdmins } = await import('../../../src/server/auth/admins.js');
      const email = 'managed@example.com';
      await createAdmin(app.database.db, 'Managed@Example.com', PASSWORD);
      await expect(createAdmin(app.database.db, email, PASSWORD)).rejects.toMatchObject({ kind: 'duplicate' });
      await expect(createAdmin(app.database.db, 'x@example.com', 'short')).rejects.toMatchObject({ kind: 'weak_password' });
      const s = await signIn(app, email);
      await signIn(app, email);
      const listed = (await listAdmins(app.database.db)).find((a) => a.email === email);
      expect(listed).toMatchObject({ email, sessions: 2, lastSignInAt: expect.stringMatching(ISO), createdAt: expect.stringMatching(ISO) });
      const before = await countAdmins(app.database.db);
      expect(await setAdminPassword(app.database.db, email, 'another-Long-passphrase-7')).toBe(2);
      expectAuthError(await app.inject({ method: 'GET', url: '/auth/v1/user', headers: bearer(s.access_token) }), 403, 'session_not_found');
      expectAuthError(await refresh(app, s.refresh_token), 400, 'refresh_token_not_found');
      await signIn(app, email, 'another-Long-passphrase-7');
      await deleteAdmin(app.database.db, email);
      await expect(deleteAdmin(app.database.db, email)).rejects.toMatchObject({ kind: 'not_found' });
      expect(await countAdmins(app.database.db)).toBe(before - 1);
      expect(await app.database.db.selectFrom('admin_sessions').innerJoin('admin_users', 'admin_users.id', 'admin_sessions.user_id').select('admin_sessions.id').where('admin_users.email', '=', email).execute()).toEqual([]);
    });
  });

  describe('configuration', () => {
    it('JWT_EXPIRY_SECONDS sets the token lifetime (at least 300 s)', async () => {
      const { loadConfig, ConfigError } = await import('../../../src/server/config.js');
      expect(loadConfig({}).auth.jwtExpirySeconds).toBe(3600);
      expect(() => loadConfig({ JWT_EXPIRY_SECONDS: '299' })).toThrow(ConfigError);
      expect(() => loadConfig({ AUTH_IP_MAX_ATTEMPTS: '0' })).toThrow(ConfigError);
      const c = loadConfig({ JWT_EXPIRY_SECONDS: '600', AUTH_ACCOUNT_MAX_FAILURES: '5', AUTH_ACCOUNT_WINDOW_SECONDS: '60', AUTH_IP_MAX_ATTEMPTS: '7', AUTH_IP_WINDOW_SECONDS: '30', AUTH_REFRESH_REUSE_SECONDS: '0' });
      expect(c.auth).toEqual({
        jwtExpirySeconds: 600,
        refreshReuseIntervalSeconds: 0,
        accountFailureLimit: { max: 5, windowMs: 60_000 },
        ipAttemptLimit: { max: 7, windowMs: 30_000 },
        sessionMaxAgeSeconds: 43_200,
        sessionInactivitySeconds: 1800,
        userUpdateLimit: { max: 10, windowMs: 300_000 },
        secretKey: null,
        secretKeyFile: expect.stringMatching(/secrets\/auth-secret\.key$/),
        previousSecretKey: null,
        mfa: 'optional',
      });
      const short = await createTestApp({ JWT_EXPIRY_SECONDS: '600' }, { dialect });
      try {
        await createAdmin(short.app.database.db, EMAIL, PASSWORD);
        const session = await signIn(short.app);
        expect(session.expires_in).toBe(600);
        expect(session.expires_at - (decodeJwt(session.access_token).iat as number)).toBe(600);
      } finally {
        await short.close();
      }
    });
  });
});
