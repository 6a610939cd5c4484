import fs from 'node:fs';
import path from 'node:path';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { projectRoot } from '../../../src/server/config.js';
import { TEST_DIALECTS } from '../../support/databases.js';
import { postPasswordGrant, signIn, type AuthSession } from '../../support/sign-in.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Fuzz-style sweep: a table of hostile requests at every route, on every dialect. Whatever the
 * client sends, the answer is a 4xx/2xx/3xx, never a 5xx, and no body looks like a stack trace.
 */

const ADMIN = { email: 'fuzz-admin@example.com', password: 'fuzzing-Horse-battery-42' };
const BUILT_WEB = path.join(projectRoot, 'dist/web');
const STACK_LIKE = [/\bat [^\s]+ \(?\/?[\w./-]+\.(?:[cm]?js|ts):\d+/, /node_modules/, /\/work\//, /src\/server\//];

function deepJson(depth: number, leaf = '1'): string {
  return '['.repeat(depth) + leaf + ']'.repeat(depth);
}
function deepObject(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

type Req = InjectOptions & { auth?: boolean };

const ROUTES_GET = [
  '/', '/thanks', '/auth', '/admin', '/healthz', '/favicon.svg', '/index.html', '/404.html',
  '/api/admin/waitlist', '/api/admin/waitlist?q=%25%00&from=2026-02-30&status=x', '/api/admin/waitlist/insights', '/api/admin/waitlist/insights?from=1970-01-01&to=9999-12-31', '/auth/v1/user', '/auth/v1/settings', '/auth/v1/health', '/auth/v1/.well-known/jwks.json',
  '/confirm', '/confirm?token=a.b', '/unsubscribe?token=%', '/api/waitlist/confirm',
  '/api/admin/waitlist/exports/00000000-0000-0000-0000-000000000000', '/api/admin/waitlist/exports/x', '/api/admin/waitlist/exports/download',
];
const ROUTES_POST = [
  '/api/waitlist', '/api/admin/waitlist/delete', '/api/admin/waitlist/delete-matching', '/api/admin/waitlist/export', '/api/admin/waitlist/invite',
  '/api/admin/waitlist/exports', '/api/admin/waitlist/exports/download', '/api/admin/waitlist/exports/00000000-0000-0000-0000-000000000000',
  '/auth/v1/token?grant_type=password', '/auth/v1/token?grant_type=refresh_token', '/auth/v1/logout', '/auth/v1/signup',
  '/api/waitlist/confirm', '/api/waitlist/preferences', '/api/waitlist/unsubscribe', '/api/waitlist/erase',
  '/confirm', '/confirm?token=AQEAAAAA.00', '/unsubscribe', '/unsubscribe?token=a&token=b',
];

const ODD_PATHS = [
  '/%', '/%%', '/%zz', '/..%2f', '/..%2f..%2f..%2fetc%2fpasswd', '/assets/..%2f..%2fpackage.json', '/%2e%2e/%2e%2e/package.json',
  '/%00', '/a%00b', '/\u00e9', '/%C0%AE%C0%AE/', '//', '///etc/passwd', '/?', '/?%', '/?a=%', `/${'a'.repeat(20_000)}`,
  `/?q=${'x'.repeat(50_000)}`, '/api/', '/api/admin/', '/api/admin/waitlist/', '/api/admin/waitlist/%', '/auth/v1/%',
  '/auth/v1/', '/auth/v1/..%2fuser', '/healthz?x=%', '/thanks?a=1&a=2&a[]=3', '/index.html', '/signup-error.html',
];

const BODIES: Array<{ name: string; type?: string; payload?: string | Buffer }> = [
  { name: 'empty json', type: 'application/json', payload: '' },
  { name: 'bad json', type: 'application/json', payload: '{"email":' },
  { name: 'null', type: 'application/json', payload: 'null' },
  { name: 'number', type: 'application/json', payload: '42' },
  { name: 'string', type: 'application/json', payload: '"x"' },
  { name: 'array', type: 'application/json', payload: '[1,2,3]' },
  { name: 'proto', type: 'application/json', payload: '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}' },
  { name: 'types', type: 'application/json', payload: '{"email":["a@b.co"],"password":{},"refresh_token":1,"ids":"x","timeZone":5,"data":[]}' },
  { name: 'nul', type: 'application/json', payload: '{"email":"a\\u0000@b.co","password":"p\\u0000assword-long-xx","refresh_token":"\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000"}' },
  { name: 'lone surrogate', type: 'application/json', payload: '{"email":"\\ud800@b.co","password":"\\udfff\\ud800aaaaaaaaaaaaa","refresh_token":"\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800"}' },
  { name: 'deep array 7k', type: 'application/json', payload: deepJson(7000) },
  { name: 'deep object 6k', type: 'application/json', payload: deepObject(6000) },
  { name: 'deep array 200k', type: 'application/json', payload: deepJson(200_000) },
  { name: 'huge 9MB', type: 'application/json', payload: `{"ids":["${'a'.repeat(9 * 1024 * 1024)}"]}` },
  { name: 'deep honeypot', type: 'application/json', payload: `{"email":"deep@example.com","company_website":${deepJson(3900, '""')}}` },
  { name: 'deep proto', type: 'application/json', payload: `{"ids":${deepJson(100_000, '{"__proto__":{}}')}}` },
  { name: 'big 100KB', type: 'application/json', payload: `{"email":"${'a'.repeat(100_000)}@x.co"}` },
  { name: 'bad uuids', type: 'application/json', payload: '{"ids":["not-a-uuid","00000000-0000-0000-0000-00000000000g","\' OR 1=1 --"]}' },
  { name: 'ids objects', type: 'application/json', payload: '{"ids":[{"a":1},null,1,true]}' },
  { name: 'utf16 charset', type: 'application/json; charset=utf-16', payload: '{"email":"a@b.co"}' },
  { name: 'weird charset', type: 'application/json; charset=nonsense', payload: '{"email":"a@b.co"}' },
  { name: 'form', type: 'application/x-www-form-urlencoded', payload: 'email=a%40b.co&email=c%40d.co&email[]=x&company_website[]=' },
  { name: 'form bad escape', type: 'application/x-www-form-urlencoded', payload: 'email=%E0%A4%A&%=%&&==' },
  { name: 'form huge', type: 'application/x-www-form-urlencoded', payload: `email=${'a'.repeat(20_000)}` },
  { name: 'form proto', type: 'application/x-www-form-urlencoded', payload: '__proto__=x&constructor=y&email=toString' },
  { name: 'text', type: 'text/plain', payload: 'email=a@b.co' },
  { name: 'multipart', type: 'multipart/form-data; boundary=x', payload: '--x\r\nContent-Disposition: form-data; name="email"\r\n\r\na@b.co\r\n--x--' },
  { name: 'xml', type: 'application/xml', payload: '<a/>' },
  { name: 'garbage type', type: '@@@;;;', payload: '{}' },
  { name: 'no type', payload: '{"email":"a@b.co"}' },
  { name: 'binary', type: 'application/octet-stream', payload: Buffer.from([0, 255, 254, 1, 2, 3]) },
  { name: 'json+suffix', type: 'application/vnd.api+json', payload: '{}' },
];

const HEADER_VARIANTS: Array<Record<string, string>> = [
  { authorization: 'Bearer' },
  { authorization: 'Bearer a.b.c' },
  { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' },
  { authorization: 'Bearer eyJhbGciOiJFUzI1NiIsImtpZCI6e319.e30.AAAA' },
  { authorization: `Bearer ${'a'.repeat(60_000)}` },
  { authorization: 'Basic YWRtaW46YWRtaW4=' },
  { 'x-forwarded-for': '1.1.1.1, <script>, ::ffff:0:0' },
  { 'accept-encoding': 'br;q=abc, gzip;q=-1, *;q=2' },
  { 'accept-encoding': 'identity;q=0, *;q=0' },
  { range: 'bytes=999999999-' },
  { range: 'bytes=-1,-2,-3,0-,5-1' },
  { 'if-none-match': '*' },
  { 'if-modified-since': 'not a date' },
  { 'content-length': '5' },
  { 'x-supabase-api-version': '\u00ff\u00fe' },
];

async function forgedTokens(app: TestApp['app']): Promise<string[]> {
  const kid = (JSON.parse((await app.database.db.selectFrom('auth_signing_keys').select('public_jwk').executeTakeFirstOrThrow()).public_jwk) as { kid: string }).kid;
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const now = Math.floor(Date.now() / 1000);
  const claims = { sub: '00000000-0000-4000-8000-000000000000', session_id: '00000000-0000-4000-8000-000000000000', exp: now + 600 };
  const hs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid }).sign(new TextEncoder().encode('secret'));
  const foreign = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid }).sign(privateKey);
  const unknownKid = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'nope' }).sign(privateKey);
  const none = `${Buffer.from(JSON.stringify({ alg: 'none', kid })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;
  const jwk = await exportJWK(privateKey);
  const embedded = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', jwk: { kty: jwk.kty!, crv: jwk.crv!, x: jwk.x!, y: jwk.y! } }).sign(privateKey);
  return [hs, foreign, unknownKid, none, embedded];
}

function assertSafe(req: Req, res: LightMyRequestResponse): void {
  const body = req.payload === undefined ? '' : String(req.payload).slice(0, 80);
  const label = `${req.method} ${String(req.url).slice(0, 120)} ${JSON.stringify(req.headers ?? {}).slice(0, 200)} ${body}`;
  expect(res.statusCode, `${label}\n${res.body.slice(0, 500)}`).toBeLessThan(500);
  for (const pattern of STACK_LIKE) {
    expect(pattern.test(res.body), `${label}: body matches ${pattern}\n${res.body.slice(0, 500)}`).toBe(false);
  }
}

describe.each(TEST_DIALECTS)('no client input causes a 5xx (%s)', (dialect) => {
  let t: TestApp;
  let token: string;
  const requests: Req[] = [];

  beforeAll(async () => {
    t = await createTestApp(
      {
        WEB_ROOT: fs.existsSync(path.join(BUILT_WEB, 'index.html')) ? BUILT_WEB : path.join(projectRoot, 'no-web-build'),
        SIGNUP_RATE_LIMIT_MAX: '100000',
        AUTH_IP_MAX_ATTEMPTS: '100000',
        AUTH_ACCOUNT_MAX_FAILURES: '100000',
      },
      { dialect },
    );
    await createAdmin(t.app.database.db, ADMIN.email, ADMIN.password);
    token = (await signIn(t.app, ADMIN)).access_token;

    for (const url of [...ROUTES_GET, ...ODD_PATHS]) {
      for (const method of ['GET', 'HEAD', 'OPTIONS', 'DELETE', 'PATCH', 'TRACE', 'PUT'] as const) requests.push({ method, url });
      requests.push({ method: 'GET', url, auth: true });
    }
    for (const url of ROUTES_POST) {
      for (const body of BODIES) {
        for (const auth of [false, true]) {
          requests.push({ method: 'POST', url, auth, headers: body.type ? { 'content-type': body.type } : {}, ...(body.payload === undefined ? {} : { payload: body.payload }) });
        }
      }
      requests.push({ method: 'POST', url });
      requests.push({ method: 'GET', url });
    }
    for (const body of BODIES) {
      requests.push({ method: 'PUT', url: '/auth/v1/user', auth: true, headers: body.type ? { 'content-type': body.type } : {}, ...(body.payload === undefined ? {} : { payload: body.payload }) });
    }
    const deepData = (depth: number) => `{"data":{"x":${deepJson(depth)}}}`;
    for (const payload of [
      deepData(5000), deepData(50_000), deepData(200_000), `{"data":{"x":${deepObject(50_000)}}}`,
      '{"data":{"__proto__":{"polluted":1},"constructor":null}}', `{"data":{"big":"${'x'.repeat(20_000)}"}}`,
      '{"password":"\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000"}',
      `{"password":"${'x'.repeat(300)}"}`, '{"email":5}', '{"email":"other@example.com"}', '{"phone":"+123"}', '{"app_metadata":{"role":"x"}}',
      '{"data":null}', '{"data":{"a":null}}', '{"data":"x"}', '{"nonce":"x","code_challenge":{}}',
    ]) {
      requests.push({ method: 'PUT', url: '/auth/v1/user', auth: true, headers: { 'content-type': 'application/json' }, payload });
    }
    for (const query of [
      'grant_type[]=password', 'grant_type=password&grant_type=password', 'grant_type=', 'grant_type=%', 'grant_type=pkce',
      'grant_type=id_token', 'grant_type=refresh_token&grant_type[]=x', `grant_type=${'x'.repeat(10_000)}`, 'grant_type=__proto__', 'grant_type=toString',
    ]) {
      requests.push({ method: 'POST', url: `/auth/v1/token?${query}`, headers: { 'content-type': 'application/json' }, payload: '{"email":"a@b.co","password":"x"}' });
    }
    for (const query of ['scope=local&scope=global', 'scope[]=local', 'scope=', 'scope=%', 'scope=__proto__', `scope=${'x'.repeat(5000)}`, 'scope=others', 'scope=toString']) {
      requests.push({ method: 'POST', url: `/auth/v1/logout?${query}`, auth: false });
      requests.push({ method: 'POST', url: `/auth/v1/logout?${query}`, headers: { authorization: 'Bearer x' } });
    }
    for (const query of [
      'limit=0', 'limit=-1', 'limit=1e9', 'limit=abc', 'limit=1&limit=2', 'limit[]=1', 'limit=1.5', 'limit=%', 'limit=99999999999999999999999',
      'cursor=', 'cursor=%', 'cursor=abc', 'cursor=x&cursor=y', `cursor=${'A'.repeat(300)}`,
      `cursor=${Buffer.from('["9999-12-31T23:59:59.999999999+15:59","00000000-0000-0000-0000-000000000000"]').toString('base64url')}`,
      `cursor=${Buffer.from('["0001-01-01T00:00:00Z","00000000-0000-0000-0000-000000000000"]').toString('base64url')}`,
      `cursor=${Buffer.from('["2026-02-30T00:00:00Z","00000000-0000-0000-0000-000000000000"]').toString('base64url')}`,
      `cursor=${Buffer.from('["2026-01-01 00:00","ZZZZZZZZ-0000-0000-0000-000000000000"]').toString('base64url')}`,
      `cursor=${Buffer.from('[{"a":1},[]]').toString('base64url')}`, 'other=1', '__proto__[x]=1', 'constructor=1',
    ]) {
      requests.push({ method: 'GET', url: `/api/admin/waitlist?${query}`, auth: true });
    }
    for (const payload of [
      '{"ids":["00000000-0000-0000-0000-000000000000"]}', '{"ids":["ABCDEFAB-ABCD-ABCD-ABCD-ABCDEFABCDEF"]}', '{"ids":[]}',
      '{"ids":["00000000-0000-0000-0000-000000000000"],"timeZone":"Mars/Olympus"}', '{"timeZone":"../../etc/passwd"}',
      '{"timeZone":"+14:00"}', '{"timeZone":"-23:59"}', '{"timeZone":"Etc/GMT+14"}', '{"timeZone":"\\u0000"}', '{"timeZone":"utc"}',
      `{"timeZone":"${'A'.repeat(100)}"}`, '{"extra":1}', '{"ids":null}', '{"ids":["00000000-0000-0000-0000-000000000000\\n"]}',
      `{"ids":${JSON.stringify(Array.from({ length: 12_000 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`))}}`,
    ]) {
      requests.push({ method: 'POST', url: '/api/admin/waitlist/export', auth: true, headers: { 'content-type': 'application/json' }, payload });
      requests.push({ method: 'POST', url: '/api/admin/waitlist/exports', auth: true, headers: { 'content-type': 'application/json' }, payload });
      requests.push({ method: 'POST', url: '/api/admin/waitlist/delete', auth: true, headers: { 'content-type': 'application/json' }, payload });
      requests.push({ method: 'POST', url: '/api/admin/waitlist/invite', auth: true, headers: { 'content-type': 'application/json' }, payload });
    }
    // E-mail link posts (src/server/consent/routes.ts): odd tokens in the query and in each kind of body.
    const linkTokens = ['', '%', 'a.b', '.', `${'A'.repeat(40)}.${'0'.repeat(32)}`, 'AQEAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.00000000000000000000000000000000', 'x'.repeat(5000), '__proto__', 'token[]=1'];
    const linkBodies: Array<{ type: string; payload: string }> = [
      { type: 'application/x-www-form-urlencoded', payload: 'List-Unsubscribe=One-Click' },
      { type: 'application/x-www-form-urlencoded', payload: 'action=erase&action=unsubscribe' },
      { type: 'application/x-www-form-urlencoded', payload: 'action=unsubscribe&token=%&token=x' },
      { type: 'application/x-www-form-urlencoded', payload: '' },
      { type: 'multipart/form-data; boundary=b', payload: '--b\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--b--' },
      { type: 'multipart/form-data', payload: 'no boundary' },
      { type: 'multipart/form-data; boundary=b', payload: '--b\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\nx\r\n--b\r\n\r\n--b' },
      { type: 'application/json', payload: '{"token":"a.b"}' },
    ];
    // The export download form (its ticket is the credential): odd tickets in each kind of body.
    for (const ticket of [...linkTokens, 'A'.repeat(43), `${'A'.repeat(42)}=`]) {
      for (const body of [...linkBodies, { type: 'application/x-www-form-urlencoded', payload: `ticket=${encodeURIComponent(ticket)}` }, { type: 'application/x-www-form-urlencoded', payload: `ticket=${ticket}&ticket=${ticket}` }]) {
        requests.push({ method: 'POST', url: '/api/admin/waitlist/exports/download', headers: { 'content-type': body.type }, payload: body.payload });
        requests.push({ method: 'POST', url: '/api/admin/waitlist/exports/download', auth: true, headers: { 'content-type': body.type }, payload: body.payload });
      }
    }
    for (const query of linkTokens) {
      for (const body of linkBodies) {
        for (const url of ['/confirm', '/unsubscribe']) requests.push({ method: 'POST', url: `${url}?token=${query}`, headers: { 'content-type': body.type }, payload: body.payload });
      }
      for (const url of ['/api/waitlist/confirm', '/api/waitlist/preferences', '/api/waitlist/unsubscribe', '/api/waitlist/erase']) {
        requests.push({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ token: query }) });
      }
    }
    for (const headers of HEADER_VARIANTS) {
      for (const url of ['/', '/favicon.svg', '/api/admin/waitlist', '/auth/v1/user', '/healthz']) requests.push({ method: 'GET', url, headers });
      requests.push({ method: 'POST', url: '/auth/v1/logout', headers });
      requests.push({ method: 'POST', url: '/api/waitlist', headers: { 'content-type': 'application/json', ...headers }, payload: '{"email":"hdr@example.com"}' });
    }
    for (const forged of await forgedTokens(t.app)) {
      for (const [method, url] of [['GET', '/api/admin/waitlist'], ['GET', '/auth/v1/user'], ['POST', '/auth/v1/logout'], ['POST', '/api/admin/waitlist/export']] as const) {
        requests.push({ method, url, headers: { authorization: `Bearer ${forged}` } });
      }
    }
  });

  afterAll(async () => {
    await t?.close();
  });

  it('answers every hostile request below 500, without stack traces', { timeout: 240_000 }, async () => {
    expect(requests.length).toBeGreaterThan(500);
    const failures: string[] = [];
    for (const req of requests) {
      const { auth, ...options } = req;
      const headers = { ...(options.headers as Record<string, string> | undefined) };
      if (auth) headers.authorization = `Bearer ${token}`;
      const res = await t.app.inject({ ...options, headers });
      // A successful sign-out ends the session the table uses: sign in again and keep going.
      if (auth && String(options.url).startsWith('/auth/v1/logout') && res.statusCode === 204) token = (await signIn(t.app, ADMIN)).access_token;
      try {
        assertSafe(req, res);
      } catch (err) {
        failures.push((err as Error).message.split('\n').slice(0, 3).join(' | '));
      }
    }
    expect(failures, failures.join('\n')).toEqual([]);
  });

  it('still serves a normal signup and the admin list afterwards (nothing was broken)', async () => {
    const joined = await t.app.inject({ method: 'POST', url: '/api/waitlist', payload: { email: 'after-fuzz@example.com' } });
    expect(joined.statusCode, joined.body).toBe(201);
    const signedIn = await postPasswordGrant(t.app, ADMIN);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    const list = await t.app.inject({ method: 'GET', url: '/api/admin/waitlist', headers: { authorization: `Bearer ${signedIn.json<AuthSession>().access_token}` } });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json<{ entries: Array<{ email: string }> }>().entries.some((e) => e.email === 'after-fuzz@example.com')).toBe(true);
  });
});
