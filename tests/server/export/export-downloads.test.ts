import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { zstdDecompressSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listAudit } from '../../../src/server/audit/audit-log.js';
import { createAdmin } from '../../../src/server/auth/admins.js';
import {
  claimExportDownload,
  createExportDownload,
  exportDownloadStatus,
  finishExportDownload,
  HEARTBEAT_MS,
  sweepExportDownloads,
} from '../../../src/server/export/tickets.js';
import {
  ADMIN_EXPORT_DOWNLOAD_PATH,
  ADMIN_EXPORT_PATH,
  ADMIN_EXPORTS_PATH,
  EXPORT_TICKET_SECONDS,
  type ExportDownload,
  type ExportDownloadStatus,
} from '../../../src/shared/admin/waitlist-api.js';
import type { WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { waitlistEntry } from '../../support/entries.js';
import { signIn } from '../../support/sign-in.js';
import type { TestApp } from '../../support/test-app.js';
import { createAdminTestApp, TEST_ADMIN as ADMIN } from '../../support/admin-app.js';

/**
 * Export downloads by ticket (export/tickets.ts, the admin page's Export buttons): the
 * export prepared with the access token, the file answered to a plain form POST of a one-time
 * ticket, and the outcome told to its admin. On both databases.
 */

const OTHER = { email: 'other@example.com', password: 'another correct horse battery' };

let t: TestApp;
let token: string;

function api(method: 'GET' | 'POST', url: string, body?: unknown, auth: string | null = token) {
  return t.app.inject({ method, url, headers: auth === null ? {} : { authorization: `Bearer ${auth}` }, ...(body === undefined ? {} : { payload: body as object }) });
}

/** The form the page posts: no Authorization header, the ticket in an urlencoded body. */
function postTicket(ticket: string, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: ADMIN_EXPORT_DOWNLOAD_PATH,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams({ ticket }).toString(),
  });
}

async function prepare(body: unknown = {}, auth = token): Promise<ExportDownload> {
  const res = await api('POST', ADMIN_EXPORTS_PATH, body, auth);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as ExportDownload;
}

async function status(id: string, auth = token): Promise<ExportDownloadStatus> {
  const res = await api('GET', `${ADMIN_EXPORTS_PATH}/${id}`, undefined, auth);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as ExportDownloadStatus;
}

/**
 * The status once the download has ended. Its outcome is written as the answer ends, so it can
 * land just after the answer reaches the client (on PostgreSQL, on another pooled connection): the
 * page, too, asks until then.
 */
async function settled(id: string, auth = token): Promise<ExportDownloadStatus> {
  let outcome = await status(id, auth);
  for (let i = 0; i < 100 && outcome.status === 'running'; i++) {
    await new Promise((r) => setTimeout(r, 50));
    outcome = await status(id, auth);
  }
  return outcome;
}

let seq = 0;
const entry = (createdAt: string): WaitlistEntry =>
  waitlistEntry({ email: `user${++seq}@example.com`, created_at: createdAt, ip_address: '203.0.113.9', country: 'Germany', city: 'Berlin', region: 'Berlin' });

async function insert(rows: WaitlistEntry[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 1000) await t.app.database.db.insertInto('waitlist').values(rows.slice(i, i + 1000)).execute();
}

const hourly = (n: number) => Array.from({ length: n }, (_, i) => entry(new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString()));

async function exportAudits() {
  return (await listAudit(t.app.database.db, 50)).filter((a) => a.action === 'export');
}

describe.each(TEST_DIALECTS)('export downloads by ticket (%s)', (dialect: TestDialect) => {
  beforeEach(async () => {
    ({ t, token } = await createAdminTestApp({}, { dialect }));
  });
  afterEach(async () => {
    await t?.close();
  });

  it('answers a ticket with the same file as the export route, once, and tells its admin the rows', async () => {
    await insert(hourly(7));
    const before = Date.now();
    const prepared = await prepare({ timeZone: 'America/New_York' });
    expect(prepared.ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Date(prepared.expiresAt).getTime()).toBeGreaterThanOrEqual(before + EXPORT_TICKET_SECONDS * 1000 - 1000);
    expect(new Date(prepared.expiresAt).getTime()).toBeLessThanOrEqual(Date.now() + EXPORT_TICKET_SECONDS * 1000);
    expect(await status(prepared.id)).toEqual({ status: 'ready', rows: null, message: null });
    // The table keeps the ticket's hash only, and the request until the ticket is used.
    const stored = await t.app.database.db.selectFrom('export_downloads').selectAll().execute();
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(prepared.ticket);
    expect(JSON.parse(stored[0]!.request!)).toEqual({ timeZone: 'America/New_York' });

    const file = await postTicket(prepared.ticket);
    expect(file.statusCode, file.body).toBe(200);
    expect(file.headers['content-disposition']).toBe('attachment; filename="waitlist_all.csv"');
    expect(file.headers['content-type']).toMatch(/^text\/csv/);
    expect(file.headers['cache-control']).toBe('no-store');
    // Framable by the admin page's hidden frame (our origin), by nobody else.
    expect(file.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(file.headers['content-security-policy']).toContain("frame-ancestors 'self'");
    expect(file.headers['content-security-policy']).not.toContain("frame-ancestors 'none'");
    const same = await api('POST', ADMIN_EXPORT_PATH, { timeZone: 'America/New_York' });
    expect(file.rawPayload.equals(same.rawPayload)).toBe(true);
    expect(file.body.split('\r\n')).toHaveLength(7 + 2);

    expect(await settled(prepared.id)).toEqual({ status: 'done', rows: 7, message: null });
    const [row] = await t.app.database.db.selectFrom('export_downloads').select(['request', 'status', 'rows', 'finished_at']).execute();
    expect(row).toMatchObject({ request: null, status: 'done', rows: 7 });
    expect(row!.finished_at).not.toBeNull();
    // Audited as the export route's exports are (this one and the comparison's).
    expect((await exportAudits()).map((a) => [a.actorEmail, a.detail])).toEqual([
      [ADMIN.email, expect.objectContaining({ count: 7, scope: 'all', timeZone: 'America/New_York' })],
      [ADMIN.email, expect.objectContaining({ count: 7, scope: 'all', timeZone: 'America/New_York' })],
    ]);

    // Used: a second post gets nothing, and the outcome stays.
    const again = await postTicket(prepared.ticket);
    expect(again.statusCode).toBe(410);
    expect(again.json().error.code).toBe('ticket_used');
    expect(again.headers['cache-control']).toBe('no-store');
    expect(again.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(await status(prepared.id)).toEqual({ status: 'done', rows: 7, message: null });
    expect(await exportAudits()).toHaveLength(2);
  });

  it('exports a selection with the attribution columns as waitlist_selected.csv, zstd when asked', async () => {
    const rows = hourly(5);
    await insert(rows);
    const body = { ids: [rows[1]!.id, rows[3]!.id, randomUUID()], attribution: true, timeZone: 'Asia/Tokyo' };
    const prepared = await prepare(body);
    const file = await postTicket(prepared.ticket, { 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-encoding']).toBe('zstd');
    expect(file.headers['content-disposition']).toBe('attachment; filename="waitlist_selected.csv"');
    const same = await api('POST', ADMIN_EXPORT_PATH, body);
    expect(zstdDecompressSync(file.rawPayload).equals(same.rawPayload)).toBe(true);
    expect(same.body).toContain(rows[3]!.email);
    expect(await settled(prepared.id)).toEqual({ status: 'done', rows: 2, message: null });
  });

  it('exports a select-all of a filtered view with its exceptions', async () => {
    const rows = hourly(6).map((r, i) => ({ ...r, country: i % 2 === 0 ? 'France' : 'Germany' }));
    await insert(rows);
    const body = { filter: { country: 'France' }, except: [rows[2]!.id] };
    const prepared = await prepare(body);
    const file = await postTicket(prepared.ticket);
    expect(file.statusCode).toBe(200);
    expect(file.rawPayload.equals((await api('POST', ADMIN_EXPORT_PATH, body)).rawPayload)).toBe(true);
    expect(await settled(prepared.id)).toEqual({ status: 'done', rows: 2, message: null });
  });

  it('gives a ticket posted twice at once to one of them only', async () => {
    await insert(hourly(3));
    const prepared = await prepare();
    const answers = await Promise.all([postTicket(prepared.ticket), postTicket(prepared.ticket), postTicket(prepared.ticket)]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 410, 410]);
    expect(await settled(prepared.id)).toEqual({ status: 'done', rows: 3, message: null });
  });

  it('refuses an expired ticket, and says the download never started', async () => {
    const admin = await t.app.database.db.selectFrom('admin_users').select('id').executeTakeFirstOrThrow();
    const session = await t.app.database.db.selectFrom('admin_sessions').select('id').executeTakeFirstOrThrow();
    const old = await createExportDownload(t.app.database.db, { userId: admin.id, sessionId: session.id }, {}, Date.now() - (EXPORT_TICKET_SECONDS + 1) * 1000);
    const res = await postTicket(old.ticket);
    expect(res.statusCode).toBe(410);
    expect(await status(old.id)).toEqual({ status: 'expired', rows: null, message: null });
    expect(await exportAudits()).toEqual([]);
  });

  it('refuses a ticket whose session was signed out after it was made', async () => {
    await insert(hourly(2));
    const prepared = await prepare();
    const other = await signIn(t.app, ADMIN);
    // Signed out everywhere from the other session: the ticket's session ends with the rest.
    const out = await t.app.inject({ method: 'POST', url: '/auth/v1/logout?scope=global', headers: { authorization: `Bearer ${other.access_token}` } });
    expect(out.statusCode).toBe(204);
    const res = await postTicket(prepared.ticket);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('unauthorized');
    expect(res.body).not.toContain('user1');
    expect(await exportAudits()).toEqual([]);
    const row = await t.app.database.db.selectFrom('export_downloads').select(['status', 'message', 'request']).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'failed', message: expect.stringMatching(/signed out/i), request: null });
  });

  it('refuses a ticket whose admin needs a second factor since it was made (an aal1 session)', async () => {
    await insert(hourly(2));
    const prepared = await prepare();
    const admin = await t.app.database.db.selectFrom('admin_users').select('id').executeTakeFirstOrThrow();
    const now = new Date().toISOString();
    await t.app.database.db
      .insertInto('admin_mfa_factors')
      .values({ id: randomUUID(), user_id: admin.id, friendly_name: 'phone', factor_type: 'totp', status: 'verified', secret: 'sealed', created_at: now, updated_at: now, last_challenged_at: null, last_verified_step: null })
      .execute();
    const res = await postTicket(prepared.ticket);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('insufficient_aal');
    expect(await exportAudits()).toEqual([]);
    const row = await t.app.database.db.selectFrom('export_downloads').select(['status', 'message']).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'failed', message: expect.stringMatching(/two-factor/i) });
  });

  it('says a download the browser stopped part way failed, with the rows sent so far', async () => {
    await insert(hourly(60_000));
    const prepared = await prepare();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const received = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: ADMIN_EXPORT_DOWNLOAD_PATH, headers: { 'content-type': 'application/x-www-form-urlencoded' } }, (res) => {
        expect(res.statusCode).toBe(200);
        res.once('data', (chunk: Buffer) => {
          // The first bytes arrived: the browser's download is cancelled.
          req.destroy();
          resolve(chunk.length);
        });
      });
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
      req.end(new URLSearchParams({ ticket: prepared.ticket }).toString());
    });
    expect(received).toBeGreaterThan(0);
    const outcome = await settled(prepared.id);
    expect(outcome).toEqual({ status: 'failed', rows: expect.any(Number), message: expect.stringMatching(/stopped before the whole file/) });
    expect(outcome.rows).toBeLessThan(60_000);
    // The audit record is written as the export's stream lets go of the database, a moment later.
    let audits = await exportAudits();
    for (let i = 0; i < 100 && audits.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      audits = await exportAudits();
    }
    expect(audits.map((a) => a.detail)).toEqual([expect.objectContaining({ incomplete: true })]);
  });

  it('checks the session the ticket was made for, not any session of its admin', async () => {
    await insert(hourly(2));
    const prepared = await prepare();
    // Another session of the same admin stays signed in; the ticket's own session signs out.
    const other = (await signIn(t.app, ADMIN)).access_token;
    const out = await t.app.inject({ method: 'POST', url: '/auth/v1/logout?scope=local', headers: { authorization: `Bearer ${token}` } });
    expect(out.statusCode).toBe(204);
    const res = await postTicket(prepared.ticket);
    expect(res.statusCode).toBe(401);
    expect(await status(prepared.id, other)).toEqual({ status: 'failed', rows: null, message: expect.stringMatching(/signed out/i) });
  });

  it('says a download failed when the export cannot start, and when its heartbeat stopped', async () => {
    await insert(hourly(3));
    const prepared = await prepare();
    // The database fails the export's first read (its table is gone).
    await t.app.database.db.schema.alterTable('waitlist').renameTo('waitlist_gone').execute();
    const res = await postTicket(prepared.ticket);
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toMatch(/waitlist_gone|at .*\.ts/);
    expect(await settled(prepared.id)).toEqual({ status: 'failed', rows: 0, message: 'The export could not be completed. Try again.' });

    // A download claimed by a server that died part way: running, its heartbeat old.
    const admin = await t.app.database.db.selectFrom('admin_users').select('id').executeTakeFirstOrThrow();
    const session = await t.app.database.db.selectFrom('admin_sessions').select('id').executeTakeFirstOrThrow();
    const now = Date.now();
    const lost = await createExportDownload(t.app.database.db, { userId: admin.id, sessionId: session.id }, {}, now - 50_000);
    expect(await claimExportDownload(t.app.database.db, lost.ticket, 'session', now - 40_000)).not.toBeNull();
    expect(await exportDownloadStatus(t.app.database.db, lost.id, { userId: admin.id }, now - 40_000 + 2 * HEARTBEAT_MS)).toEqual({ status: 'running', rows: null, message: null });
    expect(await status(lost.id)).toEqual({ status: 'failed', rows: null, message: expect.stringMatching(/did not finish/) });
    // The first outcome recorded stays.
    await finishExportDownload(t.app.database.db, lost.id, { status: 'done', rows: 5, message: null }, now);
    await finishExportDownload(t.app.database.db, lost.id, { status: 'failed', rows: 1, message: 'late' }, now);
    expect(await status(lost.id)).toEqual({ status: 'done', rows: 5, message: null });
  });

  it("clears an unused ticket's request once it expires", async () => {
    const prepared = await prepare({ filter: { q: 'someone@example.org' } });
    await sweepExportDownloads(t.app.database.db);
    expect((await t.app.database.db.selectFrom('export_downloads').select('request').executeTakeFirstOrThrow()).request).toContain('someone@example.org');
    await sweepExportDownloads(t.app.database.db, Date.now() + EXPORT_TICKET_SECONDS * 1000 + 1000);
    expect(await t.app.database.db.selectFrom('export_downloads').select(['id', 'request', 'status']).execute()).toEqual([{ id: prepared.id, request: null, status: 'ready' }]);
  });

  it("keeps a download's status to the admin who made it", async () => {
    const prepared = await prepare();
    await createAdmin(t.app.database.db, OTHER.email, OTHER.password);
    const other = (await signIn(t.app, OTHER)).access_token;
    const res = await api('GET', `${ADMIN_EXPORTS_PATH}/${prepared.id}`, undefined, other);
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('not_found');
    expect((await api('GET', `${ADMIN_EXPORTS_PATH}/${randomUUID()}`)).statusCode).toBe(404);
    expect((await api('GET', `${ADMIN_EXPORTS_PATH}/${prepared.id.toUpperCase()}`)).statusCode).toBe(200);
    expect((await api('GET', `${ADMIN_EXPORTS_PATH}/not-a-uuid`)).statusCode).toBe(400);
  });

  it('needs a signed-in admin to prepare a download or read its status', async () => {
    const prepared = await prepare();
    for (const auth of [null, 'not-a-token']) {
      expect((await api('POST', ADMIN_EXPORTS_PATH, {}, auth)).statusCode).toBe(401);
      expect((await api('GET', `${ADMIN_EXPORTS_PATH}/${prepared.id}`, undefined, auth)).statusCode).toBe(401);
    }
    expect(await t.app.database.db.selectFrom('export_downloads').select('id').execute()).toHaveLength(1);
  });

  it.each([
    ['an unknown time zone', { timeZone: 'Mars/Olympus_Mons' }, 'invalid_time_zone'],
    ['ids and a filter', { ids: [randomUUID()], filter: {} }, 'bad_request'],
    ['except without a filter', { except: [randomUUID()] }, 'bad_request'],
    ['a bad filter date', { filter: { from: '2026-02-30' } }, 'invalid_filter'],
    ['an empty id list', { ids: [] }, 'bad_request'],
  ])('answers 400 for %s and prepares nothing', async (_name, body, code) => {
    const res = await api('POST', ADMIN_EXPORTS_PATH, body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe(code);
    expect(await t.app.database.db.selectFrom('export_downloads').select('id').execute()).toEqual([]);
  });

  it('answers a malformed, unknown or oversized form with a 4xx and starts nothing', async () => {
    await prepare();
    const form = (payload: string) =>
      t.app.inject({ method: 'POST', url: ADMIN_EXPORT_DOWNLOAD_PATH, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload });
    expect((await form('')).statusCode).toBe(400);
    expect((await form('ticket=short')).statusCode).toBe(400);
    expect((await form(`ticket=${'A'.repeat(43)}`)).statusCode).toBe(410);
    expect((await form(`ticket=${'A'.repeat(43)}&pad=${'x'.repeat(2000)}`)).statusCode).toBe(413);
    expect((await t.app.database.db.selectFrom('export_downloads').select('status').execute()).map((r) => r.status)).toEqual(['ready']);
  });

  it('purges downloads made more than a day before a new one', async () => {
    const admin = await t.app.database.db.selectFrom('admin_users').select('id').executeTakeFirstOrThrow();
    const session = await t.app.database.db.selectFrom('admin_sessions').select('id').executeTakeFirstOrThrow();
    const owner = { userId: admin.id, sessionId: session.id };
    const day = 24 * 60 * 60 * 1000;
    const old = await createExportDownload(t.app.database.db, owner, {}, Date.now() - day - 60_000);
    const recent = await createExportDownload(t.app.database.db, owner, {}, Date.now() - day + 60_000);
    const fresh = await prepare();
    const ids = (await t.app.database.db.selectFrom('export_downloads').select('id').execute()).map((r) => r.id).sort();
    expect(ids).toEqual([recent.id, fresh.id].sort());
    expect(ids).not.toContain(old.id);
  });
});
