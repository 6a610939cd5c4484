import { AuthClient, AuthSessionMissingError, AuthWeakPasswordError, isAuthApiError } from '@supabase/auth-js';
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

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
    const same = await a.updateUser({ password: PASSWORD, current_password: PASSWORD });
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

  it('MFA: enroll, challenge and verify with a code from the secret, aal2 kept on refresh, unenroll', async () => {
    const { auth } = await signedIn();
    const other = await signedIn();
    const events: string[] = [];
    auth.onAuthStateChange((event) => void events.push(event));
    expect((await auth.mfa.getAuthenticatorAssuranceLevel()).data).toMatchObject({ currentLevel: 'aal1', nextLevel: 'aal1' });

    const enrolled = await auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Compat phone', issuer: 'Meridian' });
    expect(enrolled.error).toBeNull();
    const factor = enrolled.data!;
    expect(factor).toMatchObject({ type: 'totp', friendly_name: 'Compat phone' });
    expect(factor.totp.qr_code).toMatch(/^data:image\/svg\+xml;utf-8,<svg/);
    expect(factor.totp.uri).toMatch(/^otpauth:\/\/totp\/Meridian:compat%40example\.com\?/);
    const listedBefore = await auth.mfa.listFactors();
    expect(listedBefore.data?.all).toEqual([expect.objectContaining({ id: factor.id, status: 'unverified' })]);
    expect(listedBefore.data?.totp).toEqual([]);

    const challenge = await auth.mfa.challenge({ factorId: factor.id });
    expect(challenge.error).toBeNull();
    const totp = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(factor.totp.secret) });
    const wrong = await auth.mfa.verify({ factorId: factor.id, challengeId: challenge.data!.id, code: totp.generate() === '000000' ? '111111' : '000000' });
    expect(isAuthApiError(wrong.error)).toBe(true);
    expect(wrong.error).toMatchObject({ status: 422, code: 'mfa_verification_failed' });
    const verified = await auth.mfa.verify({ factorId: factor.id, challengeId: challenge.data!.id, code: totp.generate() });
    expect(verified.error).toBeNull();
    expect(events).toContain('MFA_CHALLENGE_VERIFIED');

    const aal = await auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data).toMatchObject({ currentLevel: 'aal2', nextLevel: 'aal2' });
    expect(aal.data?.currentAuthenticationMethods.map((m) => (typeof m === 'string' ? m : m.method))).toEqual(['totp', 'password']);
    expect((await auth.mfa.listFactors()).data?.totp).toEqual([expect.objectContaining({ id: factor.id, status: 'verified' })]);
    // The other, aal1 session was signed out by the verification.
    expect((await other.auth.getUser()).error).toBeInstanceOf(AuthSessionMissingError);

    const refreshed = await auth.refreshSession();
    expect(refreshed.error).toBeNull();
    expect((await auth.mfa.getAuthenticatorAssuranceLevel()).data).toMatchObject({ currentLevel: 'aal2', nextLevel: 'aal2' });

    // A fresh password sign-in is aal1 with aal2 next: the page shows the code step.
    const fresh = await signedIn();
    expect((await fresh.auth.mfa.getAuthenticatorAssuranceLevel()).data).toMatchObject({ currentLevel: 'aal1', nextLevel: 'aal2' });
    const refused = await fresh.auth.mfa.unenroll({ factorId: factor.id });
    expect(refused.error).toMatchObject({ status: 422, code: 'insufficient_aal' });

    const removed = await auth.mfa.unenroll({ factorId: factor.id });
    expect(removed.error).toBeNull();
    expect(removed.data).toEqual({ id: factor.id });
    expect((await auth.mfa.listFactors()).data?.all).toEqual([]);
    await auth.signOut();
  });
});
