import { AuthClient, isAuthApiError } from '@supabase/auth-js';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { ConfigError, loadConfig } from '../../../src/server/config.js';
import { createLinkToken } from '../../../src/server/consent/links.js';
import { ADMIN_DELETE_PATH } from '../../../src/shared/admin/waitlist-api.js';
import { PREFERENCES_API_PATH, PREFERENCES_PAGE_PATH } from '../../../src/shared/waitlist/consent-contract.js';
import { SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { authBaseUrl } from '../../support/auth-js-client.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { signIn } from '../../support/sign-in.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Security review, finding 3: a page elsewhere cannot make its visitors' browsers post to us. The
 * auth and admin APIs take only application/json bodies (which no page can send across sites
 * without a CORS preflight): 415, in GoTrue's shape on /auth/v1; a state-changing request whose
 * Origin or Sec-Fetch-Site shows another site is refused with 403, except the public signup form
 * (ours and EMBED_ORIGINS) and the RFC 8058 one-click unsubscribe.
 */

const PASSWORD = 'correct-Horse-battery-42';
const EVIL = 'https://evil.example';
const PARTNER = 'https://partner.example';

let current: TestApp | null = null;
afterEach(async () => {
  await current?.close();
  current = null;
});

const tokenUrl = '/auth/v1/token?grant_type=password';
const credentials = (email: string, password = PASSWORD) => JSON.stringify({ email, password, gotrue_meta_security: {} });

function post(app: FastifyInstance, url: string, payload: string, headers: Record<string, string>): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url, payload, headers: { 'x-supabase-api-version': '2024-01-01', ...headers } });
}

describe.each(TEST_DIALECTS)('cross-site requests and JSON bodies (%s)', (dialect: TestDialect) => {
  async function start(env: Record<string, string> = {}) {
    current = await createTestApp({ AUTH_IP_MAX_ATTEMPTS: '1000', ...env }, { dialect });
    return current.app;
  }

  it('/auth/v1 takes only application/json bodies: 415 in GoTrue shape, and the guess is never tried', async () => {
    const app = await start();
    await createAdmin(app.database.db, 'admin@example.com', PASSWORD);
    // What a page elsewhere can send without a preflight: text/plain (fetch no-cors), a form, multipart.
    const bodies: Array<[string, string]> = [
      ['text/plain', credentials('admin@example.com')],
      ['text/plain;charset=UTF-8', credentials('admin@example.com')],
      ['application/x-www-form-urlencoded', `email=admin%40example.com&password=${PASSWORD}`],
      ['multipart/form-data; boundary=x', `--x\r\nContent-Disposition: form-data; name="email"\r\n\r\nadmin@example.com\r\n--x--\r\n`],
      ['application/json; charset=iso-8859-1', credentials('admin@example.com')],
      ['application/json-patch+json', credentials('admin@example.com')],
    ];
    for (const [type, body] of bodies) {
      const res = await post(app, tokenUrl, body, { 'content-type': type });
      expect(res.statusCode, type).toBe(415);
      expect(res.json()).toEqual({ code: 'bad_json', message: 'Content-Type must be application/json' });
      expect(res.headers['x-sb-error-code']).toBe('bad_json');
      expect(res.headers['x-supabase-api-version']).toBe('2024-01-01');
    }
    // A body without a Content-Type at all.
    const untyped = await app.inject({ method: 'POST', url: tokenUrl, payload: credentials('admin@example.com') });
    expect(untyped.statusCode).toBe(415);
    // None of them was a sign-in attempt: no counter, no audit, no session.
    expect(await app.database.db.selectFrom('auth_rate_limits').selectAll().execute()).toEqual([]);
    expect(await app.database.db.selectFrom('audit_log').selectAll().execute()).toEqual([]);
    expect(await app.database.db.selectFrom('admin_sessions').selectAll().execute()).toEqual([]);
    // JSON as auth-js sends it still signs in; /logout's typed but empty body still works.
    const ok = await post(app, tokenUrl, credentials('admin@example.com'), { 'content-type': 'application/json;charset=UTF-8' });
    expect(ok.statusCode).toBe(200);
    const { access_token } = ok.json() as { access_token: string };
    const logout = await post(app, '/auth/v1/logout?scope=local', '', { 'content-type': 'application/json;charset=UTF-8', authorization: `Bearer ${access_token}` });
    expect(logout.statusCode).toBe(204);
  });

  it('the admin API takes only application/json bodies: 415 in the admin shape, before the token is looked at', async () => {
    const app = await start();
    await createAdmin(app.database.db, 'admin@example.com', PASSWORD);
    const session = await signIn(app, { email: 'admin@example.com', password: PASSWORD });
    const ids = JSON.stringify({ ids: ['00000000-0000-4000-8000-000000000000'] });
    for (const [type, withToken] of [
      ['text/plain', true],
      ['application/x-www-form-urlencoded', true],
      ['text/plain', false],
    ] as const) {
      const res = await post(app, ADMIN_DELETE_PATH, ids, { 'content-type': type, ...(withToken ? { authorization: `Bearer ${session.access_token}` } : {}) });
      expect(res.statusCode, type).toBe(415);
      expect(res.json()).toEqual({ error: { code: 'unsupported_media_type', message: 'Send the request body as JSON (Content-Type: application/json).' } });
    }
    const ok = await post(app, ADMIN_DELETE_PATH, ids, { 'content-type': 'application/json', authorization: `Bearer ${session.access_token}` });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ deleted: [] });
  });

  it('a state-changing request whose Origin or Sec-Fetch-Site shows another site is refused with 403', async () => {
    const app = await start();
    await createAdmin(app.database.db, 'admin@example.com', PASSWORD);
    const session = await signIn(app, { email: 'admin@example.com', password: PASSWORD });
    const json = { 'content-type': 'application/json' };
    const foreign: Array<Record<string, string>> = [
      { origin: EVIL },
      { 'sec-fetch-site': 'cross-site' },
      { origin: EVIL, 'sec-fetch-site': 'cross-site' },
      { origin: 'null' },
      { 'sec-fetch-site': 'same-site' }, // a sibling subdomain
      { origin: 'https://admin.localhost.example', 'sec-fetch-site': 'same-site' },
    ];
    for (const headers of foreign) {
      const auth = await post(app, tokenUrl, credentials('admin@example.com'), { ...json, ...headers });
      expect(auth.statusCode, JSON.stringify(headers)).toBe(403);
      expect(auth.json()).toEqual({ code: 'cross_site_request', message: 'This request came from another site. Use the page on our own site instead.' });
      expect(auth.headers['x-sb-error-code']).toBe('cross_site_request');
      const admin = await post(app, ADMIN_DELETE_PATH, JSON.stringify({ ids: [] }), { ...json, authorization: `Bearer ${session.access_token}`, ...headers });
      expect(admin.statusCode).toBe(403);
      expect(admin.json()).toEqual({ error: { code: 'cross_site_request', message: 'This request came from another site. Use the page on our own site instead.' } });
      const link = await post(app, PREFERENCES_API_PATH, JSON.stringify({ token: 'x' }), { ...json, ...headers });
      expect(link.statusCode).toBe(403);
    }
    // Our own pages (the request's own host, whatever the scheme a proxy hides), a navigation, and no browser at all pass.
    const own: Array<Record<string, string>> = [
      { origin: 'http://localhost:80', 'sec-fetch-site': 'same-origin' },
      { origin: 'https://localhost' },
      { 'sec-fetch-site': 'same-origin' },
      { 'sec-fetch-site': 'none' },
      {},
    ];
    for (const headers of own) {
      expect((await post(app, tokenUrl, credentials('admin@example.com'), { ...json, ...headers })).statusCode, JSON.stringify(headers)).toBe(200);
    }
    // Reads are not refused: a cross-site GET changes nothing.
    expect((await app.inject({ method: 'GET', url: '/auth/v1/health', headers: { origin: EVIL, 'sec-fetch-site': 'cross-site' } })).statusCode).toBe(200);
    // Nothing refused reached a handler.
    expect((await app.database.db.selectFrom('audit_log').select('action').execute()).map((r) => r.action).sort()).toEqual(Array(6).fill('sign_in'));
  });

  it('the signup form: from our pages and EMBED_ORIGINS, not from any other site', async () => {
    const app = await start({ EMBED_ORIGINS: `${PARTNER}, https://www.partner.example` });
    const form = (email: string, headers: Record<string, string>) =>
      post(app, SIGNUP_PATH, `email=${encodeURIComponent(email)}`, { 'content-type': 'application/x-www-form-urlencoded', ...headers });
    expect((await form('embedded@example.com', { origin: PARTNER, 'sec-fetch-site': 'cross-site' })).statusCode).toBe(303);
    expect((await form('embedded2@example.com', { origin: 'https://www.partner.example', 'sec-fetch-site': 'cross-site' })).statusCode).toBe(303);
    expect((await form('own@example.com', { origin: 'http://localhost', 'sec-fetch-site': 'same-origin' })).statusCode).toBe(303);
    const refused = await form('forced@example.com', { origin: EVIL, 'sec-fetch-site': 'cross-site' });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['content-type']).toContain('text/html'); // the form's error page
    const json = await post(app, SIGNUP_PATH, JSON.stringify({ email: 'forced2@example.com' }), { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' });
    expect(json.statusCode).toBe(403);
    expect(json.json()).toMatchObject({ error: { code: 'cross_site_request' } });
    const emails = (await app.database.db.selectFrom('waitlist').select('email').execute()).map((r) => r.email).sort();
    expect(emails).toEqual(['embedded2@example.com', 'embedded@example.com', 'own@example.com']);
    // The embed origins open only the signup form.
    expect((await post(app, tokenUrl, credentials('x@example.com'), { 'content-type': 'application/json', origin: PARTNER })).statusCode).toBe(403);
  });

  it('the one-click unsubscribe is taken from anywhere; the preferences form is not', async () => {
    const app = await start();
    const signup = await post(app, SIGNUP_PATH, JSON.stringify({ email: 'reader@example.com' }), { 'content-type': 'application/json' });
    expect(signup.statusCode).toBe(201);
    const { id } = await app.database.db.selectFrom('waitlist').select('id').executeTakeFirstOrThrow();
    const token = createLinkToken(app.secretBox, { entryId: id, purpose: 'manage', expiresAt: Math.floor(Date.now() / 1000) + 3600 });
    const url = `${PREFERENCES_PAGE_PATH}?token=${token}`;
    const formType = { 'content-type': 'application/x-www-form-urlencoded' };
    const forced = await post(app, url, 'action=unsubscribe', { ...formType, origin: EVIL, 'sec-fetch-site': 'cross-site' });
    expect(forced.statusCode).toBe(403);
    expect((await app.database.db.selectFrom('waitlist').select('status').executeTakeFirstOrThrow()).status).toBe('joined');
    // A mail provider's one-click post (from its servers, or relayed by a browser elsewhere).
    const oneClick = await post(app, url, 'List-Unsubscribe=One-Click', { ...formType, origin: 'https://mail.provider.example', 'sec-fetch-site': 'cross-site' });
    expect(oneClick.statusCode).toBe(200);
    expect((await app.database.db.selectFrom('waitlist').select('status').executeTakeFirstOrThrow()).status).toBe('unsubscribed');
  });

  it('auth-js works unchanged from our own origin, and another origin is refused', async () => {
    const app = await start();
    await createAdmin(app.database.db, 'admin@example.com', PASSWORD);
    const base = await authBaseUrl(app);
    const own = new URL(base).origin;
    // What a browser adds to auth-js's requests: Origin and Sec-Fetch-Site.
    const browser = (origin: string, site: string) =>
      new AuthClient({
        url: base,
        storageKey: `sb-${site}`,
        persistSession: false,
        autoRefreshToken: false,
        detectSessionInUrl: false,
        fetch: (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), origin, 'sec-fetch-site': site } }),
      });
    const mine = browser(own, 'same-origin');
    const signedIn = await mine.signInWithPassword({ email: 'admin@example.com', password: PASSWORD });
    expect(signedIn.error).toBeNull();
    expect((await mine.getUser()).data.user?.email).toBe('admin@example.com');
    expect((await mine.updateUser({ data: { theme: 'dark' } })).error).toBeNull();
    expect((await mine.refreshSession()).error).toBeNull();
    expect((await mine.signOut({ scope: 'local' })).error).toBeNull();
    const theirs = await browser(EVIL, 'cross-site').signInWithPassword({ email: 'admin@example.com', password: PASSWORD });
    expect(isAuthApiError(theirs.error)).toBe(true);
    expect(theirs.error).toMatchObject({ status: 403, code: 'cross_site_request' });
  });

  it('EMBED_ORIGINS: comma-separated http(s) origins, none by default; anything else stops the start', () => {
    expect(loadConfig({}).embedOrigins).toEqual([]);
    expect(loadConfig({ EMBED_ORIGINS: ' https://a.example , http://b.example:8080/,https://a.example' }).embedOrigins).toEqual(['https://a.example', 'http://b.example:8080']);
    for (const bad of ['a.example', 'https://a.example/form', 'ftp://a.example', 'https://a.example?x=1']) {
      expect(() => loadConfig({ EMBED_ORIGINS: bad }), bad).toThrow(ConfigError);
    }
    try {
      loadConfig({ EMBED_ORIGINS: 'https://ok.example,partner.example' });
    } catch (err) {
      expect((err as ConfigError).problems).toEqual([expect.stringMatching(/^EMBED_ORIGINS: must be comma-separated http\(s\) origins .*"partner\.example"$/)]);
    }
  });
});

describe('auth-js against a server refusing other sites', () => {
  it('isAuthApiError keeps working for our 415 (a non-JSON body never reaches auth-js, but its shape is GoTrue’s)', async () => {
    current = await createTestApp();
    const base = await authBaseUrl(current.app);
    const res = await fetch(`${base}/token?grant_type=password`, { method: 'POST', headers: { 'content-type': 'text/plain', 'x-supabase-api-version': '2024-01-01' }, body: credentials('a@example.com') });
    expect(res.status).toBe(415);
    expect(res.headers.get('x-supabase-api-version')).toBe('2024-01-01');
    expect(await res.json()).toEqual({ code: 'bad_json', message: 'Content-Type must be application/json' });
  });
});
