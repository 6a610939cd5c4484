import { AuthClient, AuthSessionMissingError, AuthWeakPasswordError, isAuthApiError } from '@supabase/auth-js';
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin } from '../../src/server/auth/admins.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * Drives the real, unmodified @supabase/auth-js client against the real app over HTTP, as the
 * browser will (absolute base URL, in-memory storage instead of localStorage).
 */
const EMAIL = 'compat@example.com';
const PASSWORD = 'correct-Horse-battery-42';
const STORAGE_KEY = 'sb-compat-auth-token';

let t: TestApp;
let app: FastifyInstance;
let baseUrl: string;
let userId: string;
const requests: string[] = [];

function memoryStorage() {
  const map = new Map<string, string>();
  return {
    map,
    getItem: (key: string) => map.get(key) ?? null,
    setItem: (key: string, value: string) => void map.set(key, value),
    removeItem: (key: string) => void map.delete(key),
  };
}

function client() {
  const storage = memoryStorage();
  const auth = new AuthClient({
    url: baseUrl,
    storageKey: STORAGE_KEY,
    storage,
    autoRefreshToken: false,
    detectSessionInUrl: false,
    persistSession: true,
    fetch: (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      requests.push(`${init?.method ?? 'GET'} ${url.slice(baseUrl.length)}`);
      return fetch(input, init);
    },
  });
  return { auth, storage };
}

async function signedIn() {
  const c = client();
  const { data, error } = await c.auth.signInWithPassword({ email: EMAIL, password: PASSWORD });
  expect(error).toBeNull();
  expect(data.session).not.toBeNull();
  return c;
}

async function serverSessions(): Promise<string[]> {
  const rows = await app.database.db.selectFrom('admin_sessions').select('id').where('user_id', '=', userId).execute();
  return rows.map((r) => r.id);
}

function sessionIdOf(accessToken: string): string {
  const payload = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString('utf8')) as { session_id: string };
  return payload.session_id;
}

beforeAll(async () => {
  t = await createTestApp({ AUTH_IP_MAX_ATTEMPTS: '1000' });
  app = t.app;
  ({ id: userId } = await createAdmin(app.database.db, EMAIL, PASSWORD));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}/auth/v1`;
});
afterAll(async () => {
  await t?.close();
});

describe('@supabase/auth-js against /auth/v1', () => {
  it('signInWithPassword, getSession, getUser, refreshSession, updateUser, getClaims', async () => {
    const { auth, storage } = client();
    const events: string[] = [];
    auth.onAuthStateChange((event) => void events.push(event));

    const signIn = await auth.signInWithPassword({ email: 'Compat@Example.com', password: PASSWORD });
    expect(signIn.error).toBeNull();
    const session = signIn.data.session!;
    expect(session.token_type).toBe('bearer');
    expect(session.expires_in).toBe(3600);
    expect(session.user.email).toBe(EMAIL);
    expect(signIn.data.user?.id).toBe(userId);
    expect(signIn.data.weakPassword ?? null).toBeNull();
    expect(JSON.parse(storage.map.get(STORAGE_KEY)!)).toMatchObject({ access_token: session.access_token, refresh_token: session.refresh_token });

    const got = await auth.getSession();
    expect(got.error).toBeNull();
    expect(got.data.session?.access_token).toBe(session.access_token);

    const user = await auth.getUser();
    expect(user.error).toBeNull();
    expect(user.data.user).toMatchObject({ id: userId, email: EMAIL, app_metadata: { provider: 'email' } });

    const refreshed = await auth.refreshSession();
    expect(refreshed.error).toBeNull();
    expect(refreshed.data.session?.refresh_token).toBeTruthy();
    expect(refreshed.data.session?.refresh_token).not.toBe(session.refresh_token);
    expect(sessionIdOf(refreshed.data.session!.access_token)).toBe(sessionIdOf(session.access_token));

    const updated = await auth.updateUser({ data: { theme: 'dark', team: 'ops' } });
    expect(updated.error).toBeNull();
    expect(updated.data.user?.user_metadata).toEqual({ theme: 'dark', team: 'ops' });
    const cleared = await auth.updateUser({ data: { team: null } });
    expect(cleared.data.user?.user_metadata).toEqual({ theme: 'dark' });
    expect((await auth.getSession()).data.session?.user.user_metadata).toEqual({ theme: 'dark' });

    const before = requests.length;
    const claims = await auth.getClaims();
    expect(claims.error).toBeNull();
    expect(claims.data?.claims).toMatchObject({ sub: userId, email: EMAIL, role: 'authenticated', aud: 'authenticated', session_id: sessionIdOf(session.access_token) });
    expect(claims.data?.header).toMatchObject({ alg: 'ES256' });
    // Verified locally with WebCrypto against the published JWKS, without asking /user.
    const during = requests.slice(before);
    expect(during).toContain('GET /.well-known/jwks.json');
    expect(during.some((r) => r.includes('/user'))).toBe(false);

    expect(events).toEqual(expect.arrayContaining(['SIGNED_IN', 'TOKEN_REFRESHED', 'USER_UPDATED']));
  });

  it('surfaces GoTrue errors as auth-js error classes', async () => {
    const { auth } = client();
    const wrong = await auth.signInWithPassword({ email: EMAIL, password: 'wrong-password-123' });
    expect(isAuthApiError(wrong.error)).toBe(true);
    expect(wrong.error).toMatchObject({ status: 400, code: 'invalid_credentials', message: 'Invalid login credentials' });

    const signup = await auth.signUp({ email: 'new@example.com', password: PASSWORD });
    expect(signup.error).toMatchObject({ status: 422, code: 'signup_disabled', message: 'Signups not allowed for this instance' });

    const { auth: a } = await signedIn();
    const weak = await a.updateUser({ password: 'short' });
    expect(weak.error).toBeInstanceOf(AuthWeakPasswordError);
    expect((weak.error as AuthWeakPasswordError).reasons).toEqual(['length']);
    const same = await a.updateUser({ password: PASSWORD });
    expect(same.error).toMatchObject({ status: 422, code: 'same_password' });
    await a.signOut({ scope: 'local' });
  });

  it('signOut with scope others, local and global has the server-side effect', async () => {
    await app.database.db.deleteFrom('admin_sessions').execute(); // sessions left by the tests above
    const c1 = await signedIn();
    const c2 = await signedIn();
    const c3 = await signedIn();
    const s1 = sessionIdOf((await c1.auth.getSession()).data.session!.access_token);
    expect(await serverSessions()).toHaveLength(3);

    // others: only c1's session remains; c1 keeps its local session.
    expect((await c1.auth.signOut({ scope: 'others' })).error).toBeNull();
    expect(await serverSessions()).toEqual([s1]);
    expect((await c1.auth.getSession()).data.session).not.toBeNull();
    expect((await c1.auth.getUser()).error).toBeNull();
    // c2 learns on its next server call that it was signed out, and clears its storage.
    const c2User = await c2.auth.getUser();
    expect(c2User.error).toBeInstanceOf(AuthSessionMissingError);
    expect(c2.storage.map.has(STORAGE_KEY)).toBe(false);
    expect((await c3.auth.refreshSession()).error).toMatchObject({ code: 'refresh_token_not_found' });

    // local: only this session ends, and the client forgets it.
    const c4 = await signedIn();
    const s4 = sessionIdOf((await c4.auth.getSession()).data.session!.access_token);
    expect((await c1.auth.signOut({ scope: 'local' })).error).toBeNull();
    expect(await serverSessions()).toEqual([s4]);
    expect(c1.storage.map.has(STORAGE_KEY)).toBe(false);
    expect((await c1.auth.getSession()).data.session).toBeNull();

    // global (the default): every session of the user ends.
    await signedIn();
    expect(await serverSessions()).toHaveLength(2);
    expect((await c4.auth.signOut()).error).toBeNull();
    expect(await serverSessions()).toEqual([]);
    expect(c4.storage.map.has(STORAGE_KEY)).toBe(false);
    expect(requests).toContain('POST /logout?scope=global');
  });
});
