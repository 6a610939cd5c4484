import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { toIsoTimestamp } from '../../../src/server/db/database.js';
import type { Geolocator } from '../../../src/server/geolocation/geolocator.js';
import { HONEYPOT_FIELD, SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const fixedPlaces: Geolocator = {
  lookup: async (ip) =>
    ip === '8.8.8.8'
      ? { country: 'United States', city: 'Mountain View', region: 'California' }
      : ip === '81.2.69.160'
        ? { country: 'United Kingdom', city: 'London', region: 'England' }
        : null,
};

let current: TestApp | undefined;
afterEach(async () => {
  await current?.close();
  current = undefined;
});

function rows(t: TestApp) {
  return t.app.database.db.selectFrom('waitlist').selectAll().execute();
}

function postJson(t: TestApp, body: unknown, init: { remoteAddress?: string; headers?: Record<string, string> } = {}) {
  return t.app.inject({
    method: 'POST',
    url: SIGNUP_PATH,
    payload: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...init.headers },
    ...(init.remoteAddress ? { remoteAddress: init.remoteAddress } : {}),
  });
}

function postForm(t: TestApp, fields: Record<string, string>, remoteAddress?: string) {
  return t.app.inject({
    method: 'POST',
    url: SIGNUP_PATH,
    payload: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    ...(remoteAddress ? { remoteAddress } : {}),
  });
}

function expectError(res: { statusCode: number; json(): unknown; headers: Record<string, unknown> }, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/application\/json/);
  const body = res.json() as { error: { code: string; message: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(JSON.stringify(body)).not.toMatch(/\bat .*\.(ts|js):\d+/); // no stack trace
}

describe.each(TEST_DIALECTS)('waitlist signup API (%s)', (dialect: TestDialect) => {
  /** A fresh app and database per test; the rate limit is out of the way unless a test sets it. */
  async function start(env: Record<string, string> = {}, geolocator: Geolocator = fixedPlaces): Promise<TestApp> {
    current = await createTestApp({ SIGNUP_RATE_LIMIT_MAX: '1000', ...env }, { geolocator, dialect });
    return current;
  }

  describe('POST /api/waitlist (JSON)', () => {
    it('stores the entry with the server-seen IP and its location, answers 201', async () => {
      const t = await start();
      const res = await postJson(t, { email: 'ada@example.com' }, { remoteAddress: '8.8.8.8' });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({ status: 'joined' });
      const stored = await rows(t);
      expect(stored).toHaveLength(1);
      const row = stored[0]!;
      expect(row).toMatchObject({
        email: 'ada@example.com',
        ip_address: '8.8.8.8',
        country: 'United States',
        city: 'Mountain View',
        region: 'California',
      });
      // A version-7 UUID (signup/entry-id.ts): its first 48 bits are the signup's time in milliseconds.
      expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(parseInt(row.id.replace(/-/g, '').slice(0, 12), 16)).toBe(Date.parse(toIsoTimestamp(row.created_at)));
      // SQLite stores created_at as ISO-8601 UTC text; PostgreSQL as timestamptz, which pg reads as a Date.
      if (dialect === 'sqlite') expect(new Date(String(row.created_at)).toISOString()).toBe(row.created_at);
      else expect(row.created_at).toBeInstanceOf(Date);
      expect(Date.now() - Date.parse(toIsoTimestamp(row.created_at))).toBeLessThan(60_000);
    });

    it('ignores an IP address and location sent by the client', async () => {
      const t = await start();
      const res = await postJson(
        t,
        { email: 'bob@example.com', ip_address: '1.1.1.1', country: 'Narnia', city: 'Cair Paravel', region: 'East' },
        { remoteAddress: '81.2.69.160' },
      );
      expect(res.statusCode).toBe(201);
      expect((await rows(t))[0]).toMatchObject({ ip_address: '81.2.69.160', country: 'United Kingdom', city: 'London', region: 'England' });
    });

    it('stores IPv4-mapped IPv6 client addresses as plain IPv4', async () => {
      const t = await start();
      const res = await postJson(t, { email: 'mapped@example.com' }, { remoteAddress: '::ffff:8.8.8.8' });
      expect(res.statusCode).toBe(201);
      expect((await rows(t))[0]).toMatchObject({ ip_address: '8.8.8.8', country: 'United States' });
    });

    it('trims and lower-cases the address', async () => {
      const t = await start();
      const res = await postJson(t, { email: '  Grace.Hopper@Example.COM \n' });
      expect(res.statusCode).toBe(201);
      expect((await rows(t)).map((r) => r.email)).toEqual(['grace.hopper@example.com']);
    });

    it('answers 409 already_registered for a known address in another case', async () => {
      const t = await start();
      expect((await postJson(t, { email: 'dup@example.com' })).statusCode).toBe(201);
      const res = await postJson(t, { email: 'DUP@Example.com' });
      expectError(res, 409, 'already_registered');
      expect(res.json()).toEqual({ error: { code: 'already_registered', message: 'This email is already on our waitlist.' } });
      expect(await rows(t)).toHaveLength(1);
    });

    it.each([
      ['missing', {}],
      ['empty', { email: '' }],
      ['whitespace', { email: '   \t ' }],
      ['null', { email: null }],
    ])('answers 400 email_required when the address is %s', async (_name, body) => {
      const t = await start();
      const res = await postJson(t, body);
      expectError(res, 400, 'email_required');
      expect(res.json().error.message).toBe('Please enter your email address to join the waitlist.');
      expect(await rows(t)).toHaveLength(0);
    });

    it.each(['not-an-email', 'a@b', 'a b@example.com', '@example.com', 'ada@'])('answers 400 email_invalid for %j', async (email) => {
      const t = await start();
      expectError(await postJson(t, { email }), 400, 'email_invalid');
    });

    it('answers 400 email_too_long beyond 254 characters', async () => {
      const t = await start();
      const email = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`;
      expect(email.length).toBeGreaterThan(254);
      expectError(await postJson(t, { email }), 400, 'email_too_long');
    });

    it.each(['ada\u0000@example.com', 'ada@exa\u0007mple.com', 'ada@example.com\u0085x', 'ad\u2028a@example.com'])(
      'answers 400 for control characters (%j)',
      async (email) => {
        const t = await start();
        const res = await postJson(t, { email });
        expect(res.statusCode).toBe(400);
        expect(res.json().error.code).toMatch(/^email_/);
        expect(await rows(t)).toHaveLength(0);
      },
    );

    it.each([123, true, ['ada@example.com'], { address: 'ada@example.com' }])('answers 400 email_invalid for a non-string (%j)', async (email) => {
      const t = await start();
      expectError(await postJson(t, { email }), 400, 'email_invalid');
    });

    it.each(['"ada@example.com"', '[]', 'null', '42'])('answers 400 email_required for a body that is not an object (%s)', async (payload) => {
      const t = await start();
      expectError(await postJson(t, payload), 400, 'email_required');
    });

    it('answers 400 for malformed JSON', async () => {
      const t = await start();
      expectError(await postJson(t, '{"email": "ada@example.com"'), 400, 'bad_request');
      expectError(await postJson(t, '{"__proto__": {"x": 1}, "email": "ada@example.com"}'), 400, 'bad_request');
    });

    it('ignores unknown fields', async () => {
      const t = await start();
      const res = await postJson(t, { email: 'extra@example.com', name: 'Ada', role: 'admin', id: 'chosen-id', created_at: '2000-01-01T00:00:00.000Z' });
      expect(res.statusCode).toBe(201);
      const row = (await rows(t))[0]!;
      expect(row.id).not.toBe('chosen-id');
      expect(toIsoTimestamp(row.created_at)).not.toBe('2000-01-01T00:00:00.000Z');
    });

    it('answers 413 with a JSON error when the body is over 8 KB', async () => {
      const t = await start();
      const res = await postJson(t, { email: 'big@example.com', padding: 'x'.repeat(9 * 1024) });
      expectError(res, 413, 'payload_too_large');
      expect(await rows(t)).toHaveLength(0);
    });

    it('answers 415 for an unsupported content type', async () => {
      const t = await start();
      for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x']) {
        const res = await t.app.inject({ method: 'POST', url: SIGNUP_PATH, payload: 'email=ada@example.com', headers: { 'content-type': type } });
        expectError(res, 415, 'unsupported_media_type');
      }
      expect(await rows(t)).toHaveLength(0);
    });

    it('answers a filled honeypot like a success and stores nothing', async () => {
      const t = await start();
      const res = await postJson(t, { email: 'bot@example.com', [HONEYPOT_FIELD]: 'https://spam.example' });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({ status: 'joined' });
      const form = await postForm(t, { email: 'bot2@example.com', [HONEYPOT_FIELD]: 'spam' });
      expect(form.statusCode).toBe(303);
      expect(form.headers.location).toBe('/thanks');
      expect(await rows(t)).toHaveLength(0);
      // An empty honeypot (what a person sends) does not block the signup.
      expect((await postJson(t, { email: 'person@example.com', [HONEYPOT_FIELD]: '' })).statusCode).toBe(201);
    });

    it('still stores the signup, with the IP and no location, when geolocation throws', async () => {
      const failing: Geolocator = { lookup: async () => Promise.reject(new Error('geo down')) };
      const t = await start({}, failing);
      const res = await postJson(t, { email: 'geo@example.com' }, { remoteAddress: '8.8.8.8' });
      expect(res.statusCode).toBe(201);
      expect((await rows(t))[0]).toMatchObject({ ip_address: '8.8.8.8', country: null, city: null, region: null });
    });

    it('stores exactly one of 50 concurrent signups of one address; the rest get 409, none 5xx', async () => {
      const t = await start();
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => postJson(t, { email: i % 2 ? 'race@example.com' : 'RACE@example.com' })),
      );
      const statuses = results.map((r) => r.statusCode);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(49);
      expect(await rows(t)).toHaveLength(1);
    });
  });

  describe('server faults', () => {
    it('never acknowledges a signup whose insert failed: masked 500 JSON, HTML page for the form', async () => {
      const t = await start();
      await sql`DROP TABLE waitlist`.execute(t.app.database.db);
      const res = await postJson(t, { email: 'lost@example.com' });
      expectError(res, 500, 'internal_error');
      // Neither SQLite's nor PostgreSQL's wording of the missing table leaks.
      expect(res.body).not.toContain('no such table');
      expect(res.body).not.toContain('does not exist');
      const form = await postForm(t, { email: 'lost@example.com' });
      expect(form.statusCode).toBe(500);
      expect(form.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(form.body).toContain('Something went wrong');
      expect(form.body).toContain('Please try again later.');
      expect(form.body).not.toContain('no such table');
      expect(form.body).not.toContain('does not exist');
    });
  });

  describe('rate limit', () => {
    it('answers 429 with Retry-After after N signups from one IP; another IP is unaffected', async () => {
      const t = await start({ SIGNUP_RATE_LIMIT_MAX: '3', SIGNUP_RATE_LIMIT_WINDOW_MS: '60000' });
      for (let i = 0; i < 3; i++) {
        expect((await postJson(t, { email: `r${i}@example.com` }, { remoteAddress: '198.51.100.1' })).statusCode).toBe(201);
      }
      const limited = await postJson(t, { email: 'r3@example.com' }, { remoteAddress: '198.51.100.1' });
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toEqual({
        error: { code: 'rate_limited', message: 'Too many signup attempts. Please wait a minute and try again.' },
      });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);

      // The same client as IPv4-mapped IPv6 shares the bucket.
      expect((await postJson(t, { email: 'r4@example.com' }, { remoteAddress: '::ffff:198.51.100.1' })).statusCode).toBe(429);

      const form = await postForm(t, { email: 'r5@example.com' }, '198.51.100.1');
      expect(form.statusCode).toBe(429);
      expect(form.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(form.headers['retry-after']).toBeDefined();
      expect(form.body).toContain('Too many signup attempts. Please wait a minute and try again.');

      expect((await postJson(t, { email: 'other@example.com' }, { remoteAddress: '198.51.100.2' })).statusCode).toBe(201);
      expect(await rows(t)).toHaveLength(4);
    });
  });

  describe('client address behind a proxy', () => {
    it('ignores X-Forwarded-For without TRUST_PROXY', async () => {
      const t = await start();
      const res = await postJson(t, { email: 'xff@example.com' }, { remoteAddress: '81.2.69.160', headers: { 'x-forwarded-for': '8.8.8.8' } });
      expect(res.statusCode).toBe(201);
      expect((await rows(t))[0]).toMatchObject({ ip_address: '81.2.69.160', country: 'United Kingdom' });
    });

    it('uses X-Forwarded-For with TRUST_PROXY=true', async () => {
      const t = await start({ TRUST_PROXY: 'true' });
      const res = await postJson(t, { email: 'xff@example.com' }, { remoteAddress: '10.0.0.5', headers: { 'x-forwarded-for': '8.8.8.8' } });
      expect(res.statusCode).toBe(201);
      expect((await rows(t))[0]).toMatchObject({ ip_address: '8.8.8.8', country: 'United States' });
    });

    it('stores no IP when a trusted X-Forwarded-For value is not an address', async () => {
      const t = await start({ TRUST_PROXY: 'true' });
      const res = await postJson(t, { email: 'junk@example.com' }, { remoteAddress: '10.0.0.5', headers: { 'x-forwarded-for': '<script>' } });
      expect(res.statusCode).toBe(201);
      expect((await rows(t))[0]).toMatchObject({ ip_address: null, country: null });
    });
  });

  describe('POST /api/waitlist (no-JavaScript form)', () => {
    it('redirects with 303 to /thanks and stores the entry', async () => {
      const t = await start();
      const res = await postForm(t, { email: ' Form@Example.com ', country: 'Narnia' }, '8.8.8.8');
      expect(res.statusCode).toBe(303);
      expect(res.headers.location).toBe('/thanks');
      expect((await rows(t))[0]).toMatchObject({ email: 'form@example.com', ip_address: '8.8.8.8', country: 'United States' });
    });

    it.each([
      [{ email: '' }, 400, 'Email required', 'Please enter your email address to join the waitlist.'],
      [{ email: 'nope' }, 400, 'Invalid email', 'Please enter a valid email address.'],
    ])('answers %j with the HTML error page', async (fields, status, title, message) => {
      const t = await start();
      const res = await postForm(t, fields);
      expect(res.statusCode).toBe(status);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain(`<h1>${title}</h1>`);
      expect(res.body).toContain(message);
      expect(res.body).not.toContain('{{');
    });

    it('answers a duplicate with 409 and an escaped message', async () => {
      const t = await start();
      expect((await postForm(t, { email: 'dup@example.com' })).statusCode).toBe(303);
      const res = await postForm(t, { email: 'DUP@example.com' });
      expect(res.statusCode).toBe(409);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('Already registered');
      expect(res.body).toContain('This email is already on our waitlist.');
    });

    it('answers an oversized form with 413 as HTML', async () => {
      const t = await start();
      const res = await postForm(t, { email: 'big@example.com', padding: 'x'.repeat(9 * 1024) });
      expect(res.statusCode).toBe(413);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    });

    it('uses the built signup-error.html template, HTML-escaping the substituted text', async () => {
      const t = await start();
      fs.mkdirSync(t.config.webRoot, { recursive: true });
      fs.writeFileSync(
        path.join(t.config.webRoot, 'signup-error.html'),
        '<html><title>{{title}} | Site</title><body><h1 class="x">{{title}}</h1><p>{{message}}</p></body></html>',
      );
      const res = await postForm(t, { email: 'dup' });
      expect(res.statusCode).toBe(400);
      expect(res.body).toBe(
        '<html><title>Invalid email | Site</title><body><h1 class="x">Invalid email</h1><p>Please enter a valid email address.</p></body></html>',
      );
    });
  });
});

describe('error page rendering', () => {
  it('escapes HTML and does not interpret $ patterns', async () => {
    const { renderErrorPage } = await import('../../../src/server/http/error-page.js');
    expect(renderErrorPage('<h1>{{title}}</h1><p>{{message}}</p>', `<b>"T"</b>`, `a & b's $& $1 <script>`)).toBe(
      '<h1>&lt;b&gt;&quot;T&quot;&lt;/b&gt;</h1><p>a &amp; b&#39;s $&amp; $1 &lt;script&gt;</p>',
    );
  });
});
