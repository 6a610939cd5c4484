import { randomUUID } from 'node:crypto';
import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from 'node:zlib';
import { decodeJwt } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditEmailHash, listAudit } from '../../../src/server/audit/audit-log.js';
import { signAccessToken } from '../../../src/server/auth/tokens.js';
import { ADMIN_DELETE_MATCHING_PATH, ADMIN_INSIGHTS_PATH, ADMIN_WAITLIST_PATH, type WaitlistPage } from '../../../src/shared/admin/waitlist-api.js';
import { formatDateJoined } from '../../../src/shared/waitlist/display.js';
import type { WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { NO_ATTRIBUTION } from '../../../src/shared/waitlist/attribution.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { createAdminTestApp, TEST_ADMIN as ADMIN } from '../../support/admin-app.js';
import type { TestApp } from '../../support/test-app.js';
import { NO_CONSENT_RECORD } from '../../../src/shared/waitlist/entry.js';

let t: TestApp;
let token: string;

type Method = 'GET' | 'POST';
function call(method: Method, url: string, options: { body?: unknown; auth?: string | null } = {}) {
  const auth = options.auth === undefined ? `Bearer ${token}` : options.auth;
  return t.app.inject({
    method,
    url,
    headers: auth === null ? {} : { authorization: auth },
    ...(options.body === undefined ? {} : { payload: options.body as object }),
  });
}

let seq = 0;
function entry(createdAt: string, over: Partial<WaitlistEntry> = {}): WaitlistEntry {
  seq++;
  return { id: randomUUID(), email: `user${seq}@example.com`, created_at: createdAt, ip_address: null, country: null, city: null, region: null, ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION, ...over };
}

async function insert(rows: WaitlistEntry[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 1000) {
    await t.app.database.db.insertInto('waitlist').values(rows.slice(i, i + 1000)).execute();
  }
}

function newestFirst(a: WaitlistEntry, b: WaitlistEntry): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** Splits a CSV body (BOM stripped) into records; fine for these tests, whose quoted cells hold no CRLF. */
function records(body: string): string[] {
  expect(body.startsWith('\uFEFF')).toBe(true);
  const lines = body.slice(1).split('\r\n');
  expect(lines.pop()).toBe('');
  return lines;
}

describe.each(TEST_DIALECTS)('admin waitlist API (%s)', (dialect: TestDialect) => {
  // A fresh app on a fresh database per test (a scratch PostgreSQL database copied from the migrated template).
  beforeEach(async () => {
    ({ t, token } = await createAdminTestApp({}, { dialect }));
  });
  afterEach(async () => {
    await t?.close();
  });

  describe('authentication', () => {
    const routes: Array<[Method, string, unknown]> = [
      ['GET', ADMIN_WAITLIST_PATH, undefined],
      ['GET', `${ADMIN_WAITLIST_PATH}?q=example&country=Germany`, undefined],
      ['POST', `${ADMIN_WAITLIST_PATH}/delete`, { ids: [randomUUID()] }],
      ['POST', ADMIN_DELETE_MATCHING_PATH, { filter: {} }],
      ['POST', `${ADMIN_WAITLIST_PATH}/export`, {}],
      ['POST', `${ADMIN_WAITLIST_PATH}/export`, { filter: { country: 'Germany' } }],
      ['GET', ADMIN_INSIGHTS_PATH, undefined],
    ];

    async function badTokens(): Promise<Array<[string, string | null]>> {
      const claims = decodeJwt(token) as { sub: string; email: string; session_id: string };
      const now = Math.floor(Date.now() / 1000);
      const expired = await signAccessToken(t.app.database.db, {
        userId: claims.sub,
        email: claims.email,
        sessionId: claims.session_id,
        userMetadata: {},
        role: 'owner',
        passwordAt: now - 7200,
        issuedAt: now - 7200,
        expiresInSeconds: 3600,
      });
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const otherPayload = Buffer.from(JSON.stringify({ ...decodeJwt(token), email: 'attacker@example.com' })).toString('base64url');
      const noneHeader = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      return [
        ['no Authorization header', null],
        ['a garbage token', 'Bearer not-a-jwt'],
        ['another scheme', `Basic ${Buffer.from('admin:pw').toString('base64')}`],
        ['an expired token', `Bearer ${expired.token}`],
        ['a forged payload', `Bearer ${header}.${otherPayload}.${signature}`],
        ['alg none', `Bearer ${noneHeader}.${payload}.`],
      ];
    }

    it('answers 401 unauthorized on every route for every bad credential', async () => {
      const cases = await badTokens();
      for (const [method, url, body] of routes) {
        for (const [name, auth] of cases) {
          const res = await call(method, url, { body, auth });
          expect(res.statusCode, `${method} ${url} with ${name}`).toBe(401);
          expect(res.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
          expect(res.headers['content-type']).toMatch(/^application\/json/);
          expect(res.headers['cache-control']).toBe('no-store');
        }
      }
    });

    it('rejects the tokens of a signed-out session on every route', async () => {
      const [row] = [entry('2026-01-01T00:00:00.000Z')];
      await insert([row!]);
      const out = await t.app.inject({ method: 'POST', url: '/auth/v1/logout?scope=local', headers: { authorization: `Bearer ${token}` } });
      expect(out.statusCode).toBe(204);
      for (const [method, url, body] of routes) {
        // Bodies that would remove the row if the check let them through.
        const res = await call(method, url, { body: method === 'POST' ? (url === ADMIN_DELETE_MATCHING_PATH ? body : { ids: [row!.id] }) : undefined });
        expect(res.statusCode, `${method} ${url}`).toBe(401);
        expect(res.json().error.code).toBe('unauthorized');
      }
      const count = await t.app.database.db.selectFrom('waitlist').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
      expect(Number(count.n)).toBe(1);
    });

    it('checks the token before reading the body, so anonymous callers learn nothing about validation', async () => {
      const res = await call('POST', `${ADMIN_WAITLIST_PATH}/delete`, { body: { nope: true }, auth: null });
      expect(res.statusCode).toBe(401);
    });

    it('lets a fresh sign-in through', async () => {
      const res = await call('GET', ADMIN_WAITLIST_PATH);
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
    });
  });

  describe('GET /api/admin/waitlist', () => {
    it('returns an empty page for an empty waitlist', async () => {
      const res = await call('GET', ADMIN_WAITLIST_PATH);
      expect(res.json()).toEqual({ entries: [], total: 0, matching: 0, asOf: expect.any(String), nextCursor: null });
    });

    it('pages 2,500 entries newest first in three pages of up to 1,000 without gaps or duplicates', async () => {
      const base = Date.UTC(2026, 0, 1);
      const rows: WaitlistEntry[] = [];
      for (let i = 0; i < 2500; i++) {
        // Every 10 rows share one timestamp, so ties straddle the page boundaries at 1,000 and 2,000.
        rows.push(entry(new Date(base + Math.floor((i + 5) / 10) * 1000).toISOString()));
      }
      // Shuffle the insert order so the table's physical order proves nothing.
      await insert([...rows].sort(() => Math.random() - 0.5));

      const pages: WaitlistPage[] = [];
      let cursor: string | null = null;
      do {
        const url: string = `${ADMIN_WAITLIST_PATH}?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const res = await call('GET', url);
        expect(res.statusCode, res.body).toBe(200);
        const page = res.json<WaitlistPage>();
        pages.push(page);
        cursor = page.nextCursor;
      } while (cursor);

      expect(pages.map((p) => p.entries.length)).toEqual([1000, 1000, 500]);
      // Counted on the first page only; every page says when it was read.
      expect(pages.map((p) => [p.total, p.matching])).toEqual([
        [2500, 2500],
        [null, null],
        [null, null],
      ]);
      for (const p of pages) expect(Date.parse(p.asOf)).not.toBeNaN();
      const ids = pages.flatMap((p) => p.entries.map((e) => e.id));
      expect(new Set(ids).size).toBe(2500);
      expect(ids).toEqual([...rows].sort(newestFirst).map((e) => e.id));
    });

    it('uses 1,000 as the default page size and allows up to 5,000', async () => {
      const rows = Array.from({ length: 1001 }, (_, i) => entry(new Date(Date.UTC(2026, 0, 1) + i).toISOString()));
      await insert(rows);
      const first = (await call('GET', ADMIN_WAITLIST_PATH)).json<WaitlistPage>();
      expect(first.entries).toHaveLength(1000);
      expect(first.nextCursor).toEqual(expect.any(String));
      const all = (await call('GET', `${ADMIN_WAITLIST_PATH}?limit=5000`)).json<WaitlistPage>();
      expect(all.entries).toHaveLength(1001);
      expect(all.nextCursor).toBeNull();
    });

    it('sends exactly the entry fields, created_at as ISO UTC', async () => {
      const row = entry('2026-03-04T05:06:07.089Z', { ip_address: '203.0.113.9', country: 'Germany', city: 'Berlin', region: 'Land Berlin' });
      await insert([row]);
      const page = (await call('GET', ADMIN_WAITLIST_PATH)).json<WaitlistPage>();
      expect(page.entries).toEqual([row]);
    });

    it.each([
      ['limit=0'],
      ['limit=5001'],
      ['limit=abc'],
      ['cursor=not-a-cursor'],
      [`cursor=${Buffer.from('["2026-01-01T00:00:00.000Z","x"]').toString('base64url')}`],
      // A UTC offset PostgreSQL cannot parse: must be a 400, never a database error.
      [`cursor=${Buffer.from('["2026-01-01T00:00:00.000+99:99","00000000-0000-4000-8000-000000000000"]').toString('base64url')}`],
      ['cursor='],
    ])('answers 400 for %s', async (query) => {
      const res = await call('GET', `${ADMIN_WAITLIST_PATH}?${query}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toMatch(/^(bad_request|invalid_cursor)$/);
    });
  });

  describe('POST /api/admin/waitlist/delete', () => {
    it('deletes the given entries, returns them, and writes an audit record', async () => {
      const rows = [entry('2026-01-01T00:00:00.000Z'), entry('2026-01-02T00:00:00.000Z'), entry('2026-01-03T00:00:00.000Z')];
      await insert(rows);
      const res = await call('POST', `${ADMIN_WAITLIST_PATH}/delete`, { body: { ids: [rows[0]!.id, rows[2]!.id] } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ deleted: [rows[2], rows[0]] });

      const left = (await call('GET', ADMIN_WAITLIST_PATH)).json<WaitlistPage>();
      expect(left.entries.map((e) => e.id)).toEqual([rows[1]!.id]);
      expect(left.total).toBe(1);

      const [audit] = await listAudit(t.app.database.db, 1);
      expect(audit).toMatchObject({
        action: 'delete',
        actorEmail: ADMIN.email,
        detail: {
          count: 2,
          ids: [rows[2]!.id, rows[0]!.id],
          email_hashes: [auditEmailHash(t.app.secretBox, rows[2]!.email), auditEmailHash(t.app.secretBox, rows[0]!.email)],
        },
      });
      // Issue 8 point 11: the log keeps no copy of the erased addresses.
      expect(audit!.detail).not.toHaveProperty('emails');
      expect(JSON.stringify(audit)).not.toContain(rows[0]!.email);
      expect(audit!.actorId).toEqual(expect.any(String));
    });

    it('ignores unknown ids and returns only what existed', async () => {
      const rows = [entry('2026-01-01T00:00:00.000Z')];
      await insert(rows);
      const res = await call('POST', `${ADMIN_WAITLIST_PATH}/delete`, { body: { ids: [randomUUID(), rows[0]!.id, rows[0]!.id] } });
      expect(res.json()).toEqual({ deleted: [rows[0]] });
      const again = await call('POST', `${ADMIN_WAITLIST_PATH}/delete`, { body: { ids: [rows[0]!.id] } });
      expect(again.json()).toEqual({ deleted: [] });
    });

    it('deletes more entries than one SQL statement can name, in one request', async () => {
      const rows = Array.from({ length: 12_000 }, (_, i) => entry(new Date(Date.UTC(2026, 0, 1) + i).toISOString()));
      await insert(rows);
      const res = await call('POST', `${ADMIN_WAITLIST_PATH}/delete`, { body: { ids: rows.slice(0, 11_500).map((r) => r.id) } });
      expect(res.statusCode).toBe(200);
      expect(res.json<{ deleted: WaitlistEntry[] }>().deleted).toHaveLength(11_500);
      expect((await call('GET', ADMIN_WAITLIST_PATH)).json<WaitlistPage>().total).toBe(500);
    });

    it.each([
      ['no ids', {}],
      ['an empty list', { ids: [] }],
      ['a non-UUID id', { ids: ['1 OR 1=1'] }],
      ['ids that are not strings', { ids: [1, 2] }],
      ['ids that are not a list', { ids: 'abc' }],
      ['too many ids', { ids: Array.from({ length: 100_001 }, () => '00000000-0000-4000-8000-000000000000') }],
    ])('answers 400 for %s', async (_name, body) => {
      const res = await call('POST', `${ADMIN_WAITLIST_PATH}/delete`, { body });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('bad_request');
    });

    it('answers 400 for a body that is not JSON', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: `${ADMIN_WAITLIST_PATH}/delete`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: '{"ids": [',
      });
      expect(res.statusCode).toBe(400);
    });
  });

  describe('POST /api/admin/waitlist/export', () => {
    const tricky = () => [
      entry('2026-01-01T10:00:00.000Z', { email: 'plain@example.com', ip_address: '203.0.113.1', city: 'Berlin', region: 'Land Berlin', country: 'Germany' }),
      entry('2026-01-02T10:00:00.000Z', { email: '=cmd|calc@example.com', ip_address: '', country: null }),
      entry('2026-01-03T10:00:00.000Z', { email: '+sum@example.com', city: 'Quote "Town"' }),
      entry('2026-01-04T10:00:00.000Z', { email: '-minus@example.com', city: 'Line\nBreak' }),
      entry('2026-01-05T10:00:00.000Z', { email: '@at@example.com', region: '=HYPERLINK("x")' }),
      entry('2026-01-06T10:00:00.000Z', { email: '\ttab@example.com', country: 'Korea, Republic of' }),
      entry('2026-01-07T10:00:00.000Z', { email: '\rcr@example.com' }),
    ];

    it('exports everything newest first as a CSV attachment, neutralising formulas, in the given time zone', async () => {
      const rows = tricky();
      await insert(rows);
      const res = await call('POST', `${ADMIN_WAITLIST_PATH}/export`, { body: { timeZone: 'America/Los_Angeles' } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(res.headers['content-disposition']).toBe('attachment; filename="waitlist_all.csv"');
      expect(res.headers['cache-control']).toBe('no-store');

      const tz = 'America/Los_Angeles';
      const d = (iso: string) => `"${formatDateJoined(iso, tz)}"`;
      expect(formatDateJoined('2026-01-01T10:00:00.000Z', tz)).toBe('Jan 1, 2026, 02:00 AM');
      expect(res.body).toBe(
        '\uFEFF' +
          [
            'Email,Date Joined,IP Address,Location',
            `"'\rcr@example.com",${d(rows[6]!.created_at)},N/A,Unknown`,
            `'\ttab@example.com,${d(rows[5]!.created_at)},N/A,"Korea, Republic of"`,
            `'@at@example.com,${d(rows[4]!.created_at)},N/A,"'=HYPERLINK(""x"")"`,
            `'-minus@example.com,${d(rows[3]!.created_at)},N/A,"Line\nBreak"`,
            `'+sum@example.com,${d(rows[2]!.created_at)},N/A,"Quote ""Town"""`,
            `'=cmd|calc@example.com,${d(rows[1]!.created_at)},N/A,Unknown`,
            `plain@example.com,${d(rows[0]!.created_at)},203.0.113.1,"Berlin, Land Berlin, Germany"`,
          ].join('\r\n') +
          '\r\n',
      );

      const [audit] = await listAudit(t.app.database.db, 1);
      expect(audit).toMatchObject({ action: 'export', actorEmail: ADMIN.email, detail: { count: 7, scope: 'all' } });
    });

    it('writes Date Joined in UTC when no time zone is given, also without a body', async () => {
      await insert([entry('2026-11-22T06:04:05.000Z', { email: 'utc@example.com' })]);
      const res = await t.app.inject({ method: 'POST', url: `${ADMIN_WAITLIST_PATH}/export`, headers: { authorization: `Bearer ${token}` } });
      expect(res.statusCode, res.body).toBe(200);
      expect(records(res.body)).toEqual(['Email,Date Joined,IP Address,Location', 'utc@example.com,"Nov 22, 2026, 06:04 AM",N/A,Unknown']);
    });

    it('exports only the selected entries that exist, as waitlist_selected.csv', async () => {
      const rows = tricky();
      await insert(rows);
      const res = await call('POST', `${ADMIN_WAITLIST_PATH}/export`, { body: { ids: [rows[0]!.id, randomUUID(), rows[2]!.id] } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-disposition']).toBe('attachment; filename="waitlist_selected.csv"');
      const lines = records(res.body);
      expect(lines).toHaveLength(3);
      expect(lines[1]).toMatch(/^'\+sum@example\.com,/);
      expect(lines[2]).toMatch(/^plain@example\.com,/);

      const [audit] = await listAudit(t.app.database.db, 1);
      expect(audit).toMatchObject({ action: 'export', detail: { count: 2, scope: 'selected' } });
    });

    it('streams a large export across several batches without losing or repeating rows', async () => {
      const rows = Array.from({ length: 12_001 }, (_, i) => entry(new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 3) * 1000).toISOString()));
      await insert(rows);
      const res = await call('POST', `${ADMIN_WAITLIST_PATH}/export`, { body: {} });
      const lines = records(res.body);
      expect(lines).toHaveLength(12_002);
      expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual([...rows].sort(newestFirst).map((r) => r.email));
      const [audit] = await listAudit(t.app.database.db, 1);
      expect(audit).toMatchObject({ action: 'export', detail: { count: 12_001, scope: 'all' } });
    });

    it('compresses the stream when the client accepts gzip', async () => {
      const rows = Array.from({ length: 50 }, (_, i) => entry(new Date(Date.UTC(2026, 0, 1) + i).toISOString()));
      await insert(rows);
      const res = await t.app.inject({
        method: 'POST',
        url: `${ADMIN_WAITLIST_PATH}/export`,
        headers: { authorization: `Bearer ${token}`, 'accept-encoding': 'gzip' },
        payload: {},
      });
      expect(res.headers['content-encoding']).toBe('gzip');
      expect(records(gunzipSync(res.rawPayload).toString('utf8'))).toHaveLength(51);
    });

    it.each([
      // What Chromium sends: zstd is our first choice among equals.
      ['gzip, deflate, br, zstd', 'zstd'],
      // The client's q-values come first.
      ['zstd;q=0.5, br', 'br'],
      ['br, zstd;q=0', 'br'],
      ['gzip', 'gzip'],
      // Read as @fastify/compress reads it: `*` means gzip, case does not matter.
      ['*', 'gzip'],
      ['zstd;q=0, *', 'gzip'],
      ['ZSTD', 'zstd'],
    ])('answers Accept-Encoding "%s" with %s, byte for byte the same file', async (acceptEncoding, expected) => {
      const rows = Array.from({ length: 6_001 }, (_, i) => entry(new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString()));
      await insert(rows);
      const plain = await call('POST', `${ADMIN_WAITLIST_PATH}/export`, { body: {} });
      const res = await t.app.inject({
        method: 'POST',
        url: `${ADMIN_WAITLIST_PATH}/export`,
        headers: { authorization: `Bearer ${token}`, 'accept-encoding': acceptEncoding },
        payload: {},
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-encoding']).toBe(expected);
      expect(res.headers['vary']).toMatch(/accept-encoding/i);
      expect(res.headers['content-disposition']).toBe('attachment; filename="waitlist_all.csv"');
      const decoded = { zstd: zstdDecompressSync, br: brotliDecompressSync, gzip: gunzipSync }[expected]!(res.rawPayload);
      expect(res.rawPayload.length).toBeLessThan(decoded.length / 2);
      expect(decoded.equals(plain.rawPayload)).toBe(true);
      expect(records(decoded.toString('utf8'))).toHaveLength(6_002);
      const audits = (await listAudit(t.app.database.db, 2)).filter((a) => a.action === 'export');
      expect(audits.map((a) => a.detail)).toEqual([expect.objectContaining({ count: 6_001, scope: 'all' }), expect.objectContaining({ count: 6_001, scope: 'all' })]);
    });

    it.each([
      ['an unknown time zone', { timeZone: 'Mars/Olympus_Mons' }, 'invalid_time_zone'],
      ['an empty id list', { ids: [] }, 'bad_request'],
      ['a non-UUID id', { ids: ['abc'] }, 'bad_request'],
      ['a time zone that is not a string', { timeZone: { name: 'UTC' } }, 'bad_request'],
    ])('answers 400 for %s and writes no audit record', async (_name, body, code) => {
      const res = await call('POST', `${ADMIN_WAITLIST_PATH}/export`, { body });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe(code);
      expect((await listAudit(t.app.database.db, 10)).filter((a) => a.action === 'export')).toEqual([]);
    });
  });
});
