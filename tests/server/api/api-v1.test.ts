import { randomUUID } from 'node:crypto';
import { validate } from '@readme/openapi-parser';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { listAudit } from '../../../src/server/audit/audit-log.js';
import { createApiKey, LAST_USE_INTERVAL_MS, LastUseRecorder } from '../../../src/server/api/keys.js';
import { ADMIN_WAITLIST_PATH } from '../../../src/shared/admin/waitlist-api.js';
import { NO_ATTRIBUTION } from '../../../src/shared/waitlist/attribution.js';
import { NO_CONSENT_RECORD, type WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import type { ApiScope } from '../../../src/shared/api/scopes.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { createAdminTestApp } from '../../support/admin-app.js';
import type { TestApp } from '../../support/test-app.js';
import { loadContract, type OpenApiContract } from './openapi-contract.js';

/**
 * The versioned API (issue 32 point 2) on both databases: every answer is checked against the
 * OpenAPI document the server publishes (openapi-contract.ts), which itself must be valid.
 */
const DAY = 86_400_000;
const CLI = { userId: null, email: null, ip: null };

describe.each(TEST_DIALECTS)('API v1 (%s)', (dialect: TestDialect) => {
  let t: TestApp;
  let adminToken: string;
  let contract: OpenApiContract;

  beforeEach(async () => {
    ({ t, token: adminToken } = await createAdminTestApp({}, { dialect }));
    contract = await loadContract(t.app);
  });
  afterEach(async () => {
    await t.close();
  });

  async function key(scopes: ApiScope[], options: { rateLimit?: number; expiresInDays?: number; now?: number } = {}) {
    const made = await createApiKey(t.app.database.db, { name: 'Zapier', scopes, rateLimit: options.rateLimit ?? 600, expiresInDays: options.expiresInDays }, CLI, options.now);
    return made;
  }

  /** A request to the API, checked against the document (`template`: the document's path, when the URL has an id or a query). */
  async function api(method: 'GET' | 'POST', url: string, token: string | null, body?: unknown, template?: string) {
    const res = await t.app.inject({
      method,
      url,
      headers: token === null ? {} : { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
    contract.check(method, template ?? url.split('?')[0]!, res);
    return res;
  }

  let seq = 0;
  function entry(createdAt: string, over: Partial<WaitlistEntry> = {}): WaitlistEntry {
    seq++;
    return { id: randomUUID(), email: `user${seq}@example.com`, created_at: createdAt, ip_address: null, country: null, city: null, region: null, ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION, ...over };
  }

  it('publishes a valid OpenAPI 3.1 document, generated from the routes, and a page of it without scripts', async () => {
    const result = await validate(structuredClone(contract.document) as never);
    expect(result.valid, JSON.stringify(result)).toBe(true);
    expect(contract.document.openapi).toBe('3.1.0');
    expect(Object.keys(contract.document.paths).sort()).toEqual(
      ['/api/v1/entries', '/api/v1/entries/{id}', '/api/v1/exports', '/api/v1/exports/download', '/api/v1/exports/{id}', '/api/v1/signups'].sort(),
    );
    // The filter's names come from the admin's query schema, not a copy.
    const listParams = contract.document.paths['/api/v1/entries']!.get!.parameters!.map((p) => p.name);
    expect(listParams).toEqual(['limit', 'cursor', 'q', 'from', 'to', 'country', 'source', 'campaign', 'status', 'list']);

    const page = await t.app.inject({ method: 'GET', url: '/api/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(String(page.headers['content-security-policy'])).toContain("script-src 'self'");
    expect(page.body).not.toMatch(/<script|<link|src=/i);
    for (const summary of ['Add a signup', 'List entries', 'Read one entry', 'Start an export', 'Follow an export', 'Download an export']) {
      expect(page.body).toContain(summary);
    }
    expect(page.body).toContain('href="/api/v1/openapi.json"');
  });

  it('adds a signup with its attribution to the portal list only, audited without the address', async () => {
    const { token, key: made } = await key(['signups:write']);
    const res = await api('POST', '/api/v1/signups', token, {
      email: '  Ann@Example.com ',
      list: 'portal',
      ip_address: '203.0.113.9',
      utm_source: 'Partner',
      utm_campaign: 'launch',
      referrer: 'https://news.example/story?id=1',
      landing_path: '/pricing?x=1',
    });
    expect(res.statusCode, res.body).toBe(201);
    const { id, status } = res.json() as { id: string; status: string };
    expect(status).toBe('joined');
    const stored = await t.app.database.db.selectFrom('waitlist').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ email: 'ann@example.com', ip_address: '203.0.113.9', utm_source: 'Partner', source: 'partner', utm_campaign: 'launch', referrer: 'https://news.example', landing_path: '/pricing' });

    // Without an ip_address, the calling server's address is not stored as the person's.
    const bare = await api('POST', '/api/v1/signups', token, { email: 'bob@example.com' });
    expect(bare.statusCode).toBe(201);
    const bob = await t.app.database.db.selectFrom('waitlist').select(['ip_address']).where('email', '=', 'bob@example.com').executeTakeFirstOrThrow();
    expect(bob.ip_address).toBeNull();

    expect((await api('POST', '/api/v1/signups', token, { email: 'ann@example.com' })).json()).toEqual({ error: { code: 'already_registered', message: expect.any(String) } });
    const refused = [
      [{ email: 'c@example.com', list: 'vip' }, 400, 'unknown_list'],
      [{ email: 'not an address' }, 400, 'email_invalid'],
      [{ email: '' }, 400, 'email_required'],
      [{ email: 'd@example.com', ip_address: 'somewhere' }, 400, 'invalid_ip_address'],
      [{ list: 'portal' }, 400, 'bad_request'],
    ] as const;
    for (const [body, statusCode, code] of refused) {
      const answer = await api('POST', '/api/v1/signups', token, body);
      expect(answer.statusCode, JSON.stringify(body)).toBe(statusCode);
      expect(answer.json().error.code).toBe(code);
    }
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/signups', headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' }, payload: 'x' })).statusCode).toBe(415);

    const audit = (await listAudit(t.app.database.db, 50)).filter((a) => a.action === 'api_signup');
    expect(audit).toHaveLength(2);
    expect(audit.map((a) => a.detail.entry_id)).toContain(id);
    expect(audit.every((a) => a.detail.api_key_id === made.id && a.actorId === made.id && a.actorEmail === null)).toBe(true);
    expect(JSON.stringify(await listAudit(t.app.database.db, 100))).not.toMatch(/ann@example\.com|bob@example\.com/i);
  });

  it('lists entries with the admin\'s filter and cursor, and reads one', async () => {
    const rows = [
      entry('2026-11-20T10:00:00.000Z', { country: 'Germany' }),
      entry('2026-11-21T10:00:00.000Z', { country: 'France' }),
      entry('2026-11-22T10:00:00.000Z', { country: 'Germany' }),
      entry('2026-11-23T10:00:00.000Z', { country: 'Germany' }),
    ];
    await t.app.database.db.insertInto('waitlist').values(rows).execute();
    const { token } = await key(['entries:read']);

    const first = await api('GET', '/api/v1/entries?limit=2&country=Germany', token);
    expect(first.statusCode).toBe(200);
    const page1 = first.json();
    expect(page1.entries.map((e: WaitlistEntry) => e.id)).toEqual([rows[3]!.id, rows[2]!.id]);
    expect(page1).toMatchObject({ total: 4, matching: 3 });
    const second = await api('GET', `/api/v1/entries?limit=2&country=Germany&cursor=${page1.nextCursor}`, token);
    expect(second.json()).toMatchObject({ entries: [{ id: rows[0]!.id }], nextCursor: null, total: null });

    // The same page as the admin's table.
    const admin = await t.app.inject({ method: 'GET', url: `${ADMIN_WAITLIST_PATH}?limit=2&country=Germany`, headers: { authorization: `Bearer ${adminToken}` } });
    expect(admin.json().entries).toEqual(page1.entries);

    expect((await api('GET', '/api/v1/entries?from=2026-13-01', token)).json().error.code).toBe('invalid_filter');
    expect((await api('GET', '/api/v1/entries?cursor=bm90LWEtY3Vyc29y', token)).json().error.code).toBe('invalid_cursor');
    expect((await api('GET', '/api/v1/entries?limit=0', token)).statusCode).toBe(400);

    const one = await api('GET', `/api/v1/entries/${rows[1]!.id}`, token, undefined, '/api/v1/entries/{id}');
    expect(one.json()).toEqual({ ...rows[1], created_at: '2026-11-21T10:00:00.000Z' });
    expect((await api('GET', `/api/v1/entries/${randomUUID()}`, token, undefined, '/api/v1/entries/{id}')).statusCode).toBe(404);
    expect((await api('GET', '/api/v1/entries/not-an-id', token, undefined, '/api/v1/entries/{id}')).statusCode).toBe(400);
  });

  it('starts an export, downloads it once by its ticket and follows it, audited as the key', async () => {
    const rows = [entry('2026-11-20T10:00:00.000Z', { country: 'Germany' }), entry('2026-11-21T10:00:00.000Z', { country: 'France' })];
    await t.app.database.db.insertInto('waitlist').values(rows).execute();
    const { token, key: made } = await key(['export']);

    const started = await api('POST', '/api/v1/exports', token, { filter: { country: 'Germany' } });
    expect(started.statusCode, started.body).toBe(201);
    const { id, ticket, downloadUrl } = started.json();
    expect(downloadUrl).toBe('/api/v1/exports/download');
    expect((await api('GET', `/api/v1/exports/${id}`, token, undefined, '/api/v1/exports/{id}')).json()).toEqual({ status: 'ready', rows: null, message: null });

    const file = await api('POST', downloadUrl, null, { ticket });
    expect(file.statusCode).toBe(200);
    expect(file.body.trim().split('\r\n')).toEqual(['Email,Date Joined,IP Address,Location', expect.stringContaining(rows[0]!.email)]);
    expect(file.headers['content-disposition']).toContain('waitlist_selected.csv');
    expect((await api('POST', downloadUrl, null, { ticket })).json().error.code).toBe('ticket_used');
    await vi.waitFor(async () => {
      expect((await api('GET', `/api/v1/exports/${id}`, token, undefined, '/api/v1/exports/{id}')).json()).toEqual({ status: 'done', rows: 1, message: null });
    });
    // Another key cannot follow it; an admin's download route does not take a key's ticket.
    const other = await key(['export']);
    expect((await api('GET', `/api/v1/exports/${id}`, other.token, undefined, '/api/v1/exports/{id}')).statusCode).toBe(404);
    const second = (await api('POST', '/api/v1/exports', token, {})).json();
    const adminDownload = await t.app.inject({ method: 'POST', url: '/api/admin/waitlist/exports/download', payload: { ticket: second.ticket } });
    expect(adminDownload.statusCode).toBe(410);
    // Still unused here: the key's own route takes it (as a form, too).
    const form = await t.app.inject({ method: 'POST', url: downloadUrl, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `ticket=${second.ticket}` });
    expect(form.statusCode).toBe(200);
    contract.check('POST', downloadUrl, form);

    const exports = (await listAudit(t.app.database.db, 50)).filter((a) => a.action === 'export');
    expect(exports).toHaveLength(2);
    expect(exports.every((a) => a.actorId === made.id && a.actorEmail === null && a.detail.api_key_id === made.id)).toBe(true);
    expect(exports.map((a) => a.detail.count).sort()).toEqual([1, 2]);

    // A ticket of a key revoked meanwhile is refused.
    const third = (await api('POST', '/api/v1/exports', token, {})).json();
    await t.app.inject({ method: 'POST', url: `/api/admin/api-keys/${made.id}/revoke`, headers: { authorization: `Bearer ${adminToken}` } });
    const refused = await api('POST', downloadUrl, null, { ticket: third.ticket });
    expect(refused.statusCode).toBe(401);
    expect((await listAudit(t.app.database.db, 50)).filter((a) => a.action === 'export')).toHaveLength(2);
  });

  it('checks the key: missing, unknown, revoked, expired, and its scopes', async () => {
    const reader = await key(['entries:read']);
    const expired = await key(['entries:read'], { expiresInDays: 1, now: Date.now() - 2 * DAY });
    const revoked = await key(['entries:read']);
    await t.app.inject({ method: 'POST', url: `/api/admin/api-keys/${revoked.key.id}/revoke`, headers: { authorization: `Bearer ${adminToken}` } });

    const codes = async (token: string | null) => (await api('GET', '/api/v1/entries', token)).json().error?.code ?? 'ok';
    expect(await codes(reader.token)).toBe('ok');
    expect(await codes(null)).toBe('unauthorized');
    expect(await codes(`wl_${'A'.repeat(43)}`)).toBe('unauthorized');
    expect(await codes(adminToken)).toBe('unauthorized');
    expect(await codes(expired.token)).toBe('key_expired');
    expect(await codes(revoked.token)).toBe('key_revoked');
    const missing = await api('GET', '/api/v1/entries', null);
    expect(missing.headers['www-authenticate']).toBe('Bearer');

    expect((await api('POST', '/api/v1/signups', reader.token, { email: 'x@example.com' })).json().error.code).toBe('insufficient_scope');
    expect((await api('POST', '/api/v1/exports', reader.token, {})).json().error.code).toBe('insufficient_scope');
    expect((await api('GET', `/api/v1/exports/${randomUUID()}`, reader.token, undefined, '/api/v1/exports/{id}')).statusCode).toBe(403);
    const writer = await key(['signups:write']);
    expect((await api('GET', '/api/v1/entries', writer.token)).statusCode).toBe(403);
  });

  it('never lets a key into /auth/v1 or the admin API', async () => {
    const { token } = await key(['entries:read', 'signups:write', 'export']);
    const bearer = { authorization: `Bearer ${token}` };
    const attempts = [
      ['GET', ADMIN_WAITLIST_PATH],
      ['POST', '/api/admin/waitlist/exports'],
      ['POST', '/api/admin/waitlist/delete'],
      ['GET', '/api/admin/api-keys'],
      ['POST', '/api/admin/api-keys'],
      ['GET', '/auth/v1/user'],
      ['PUT', '/auth/v1/user'],
      ['POST', '/auth/v1/logout'],
      ['POST', '/auth/v1/factors'],
    ] as const;
    for (const [method, url] of attempts) {
      const res = await t.app.inject({ method, url, headers: { ...bearer, 'content-type': 'application/json' }, payload: method === 'GET' ? undefined : '{}' });
      expect([401, 403], `${method} ${url}: ${res.statusCode} ${res.body}`).toContain(res.statusCode);
    }
    // With the admin's own token these work: the refusal is the key's.
    const ok = await t.app.inject({ method: 'GET', url: '/api/admin/api-keys', headers: { authorization: `Bearer ${adminToken}` } });
    expect(ok.statusCode).toBe(200);
  });

  it('gives each key its own rate limit, and records its last use at most once a minute', async () => {
    const a = await key(['entries:read'], { rateLimit: 2 });
    const b = await key(['entries:read'], { rateLimit: 2 });
    expect((await api('GET', '/api/v1/entries', a.token)).headers['x-ratelimit-remaining']).toBe('1');
    expect((await api('GET', '/api/v1/entries', a.token)).statusCode).toBe(200);
    const limited = await api('GET', '/api/v1/entries', a.token);
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await api('GET', '/api/v1/entries', b.token)).statusCode).toBe(200);

    const lastUsed = async (id: string) =>
      (await t.app.database.db.selectFrom('api_keys').select('last_used_at').where('id', '=', id).executeTakeFirstOrThrow()).last_used_at;
    await vi.waitFor(async () => expect(await lastUsed(b.key.id)).not.toBeNull());
  });

  it('writes a key\'s last use once a minute at most', async () => {
    const { key: made } = await key(['entries:read']);
    const db = t.app.database.db;
    const errors: unknown[] = [];
    const recorder = new LastUseRecorder(db, (err) => errors.push(err));
    const lastUsed = async () => (await db.selectFrom('api_keys').select('last_used_at').where('id', '=', made.id).executeTakeFirstOrThrow()).last_used_at;
    const t0 = Date.parse('2026-11-28T10:00:00.000Z');
    recorder.used(made.id, t0);
    await recorder.settle();
    expect(new Date(String(await lastUsed())).toISOString()).toBe('2026-11-28T10:00:00.000Z');
    await db.updateTable('api_keys').set({ last_used_at: null }).where('id', '=', made.id).execute();
    for (let s = 1; s < 60; s += 7) recorder.used(made.id, t0 + s * 1000);
    await recorder.settle();
    expect(await lastUsed()).toBeNull();
    recorder.used(made.id, t0 + LAST_USE_INTERVAL_MS);
    await recorder.settle();
    expect(new Date(String(await lastUsed())).toISOString()).toBe('2026-11-28T10:01:00.000Z');
    expect(errors).toEqual([]);
  });
});
