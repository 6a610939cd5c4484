import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../../src/server/audit/audit-log.js';
import { toIsoTimestamp } from '../../../src/server/db/database.js';
import { ADMIN_INVITE_PATH, ADMIN_MAX_IDS, inviteResultSchema, type InviteResult } from '../../../src/shared/admin/waitlist-api.js';
import { emailContent, siteContent } from '../../../src/shared/site/content.js';
import { NO_CONSENT_RECORD, type EntryStatus, type WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { NO_ATTRIBUTION } from '../../../src/shared/waitlist/attribution.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { cleanupsAfterEach, createAdminTestApp, mailEnv, startTestSmtp, TEST_ADMIN as ADMIN } from '../../support/admin-app.js';
import type { TestSmtpServer } from '../../support/smtp.js';
import type { TestApp } from '../../support/test-app.js';

/**
 * POST /api/admin/waitlist/invite (contract: src/shared/admin/waitlist-api.ts): joined and
 * confirmed entries become invited and get the invite queued in the outbox, in one transaction;
 * the rest is skipped and counted. Real databases, a real SMTP server for the e-mail-on app.
 */

const INVITE_SUBJECT = emailContent.invite.subject.replaceAll('{productName}', siteContent.productName);

const cleanups = cleanupsAfterEach();

interface Harness {
  t: TestApp;
  token: string;
  smtp: TestSmtpServer | null;
}

async function harness(dialect: TestDialect, mail: boolean): Promise<Harness> {
  const smtp = mail ? await startTestSmtp(cleanups) : null;
  const { t, token } = await createAdminTestApp(
    smtp ? mailEnv(smtp.url) : {},
    // No polling by itself: what is queued stays visible to the assertions until a test drains it.
    { dialect, mailWorker: { pollIntervalMs: 3_600_000 } },
  );
  cleanups.push(() => t.close());
  return { t, token, smtp };
}

function invite(h: Harness, body: unknown, auth: string | null = `Bearer ${h.token}`) {
  return h.t.app.inject({
    method: 'POST',
    url: ADMIN_INVITE_PATH,
    headers: auth === null ? {} : { authorization: auth },
    ...(body === undefined ? {} : { payload: body as object }),
  });
}

let seq = 0;
function entry(status: EntryStatus, over: Partial<WaitlistEntry> = {}): WaitlistEntry {
  seq++;
  return {
    id: randomUUID(),
    email: `person${seq}@example.com`,
    created_at: new Date(Date.UTC(2026, 0, 1) + seq * 1000).toISOString(),
    ip_address: null,
    country: null,
    city: null,
    region: null,
    ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION,
    status,
    ...(status === 'confirmed' ? { confirmed_at: '2026-02-01T00:00:00.000Z', confirmed_ip: '203.0.113.9' } : {}),
    ...(status === 'invited' ? { invited_at: '2026-03-01T00:00:00.000Z' } : {}),
    ...(status === 'unsubscribed' ? { unsubscribed_at: '2026-03-02T00:00:00.000Z' } : {}),
    ...over,
  };
}

async function insert(h: Harness, rows: WaitlistEntry[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 1000) await h.t.app.database.db.insertInto('waitlist').values(rows.slice(i, i + 1000)).execute();
}

async function statuses(h: Harness): Promise<Map<string, { status: string; invited_at: string | null }>> {
  const rows = await h.t.app.database.db.selectFrom('waitlist').select(['id', 'status', 'invited_at']).execute();
  return new Map(rows.map((r) => [r.id, { status: r.status, invited_at: r.invited_at === null ? null : toIsoTimestamp(r.invited_at) }]));
}

async function outbox(h: Harness) {
  return h.t.app.database.db.selectFrom('mail_outbox').select(['kind', 'to_address', 'subject', 'template', 'template_data', 'status']).execute();
}

async function outboxCount(h: Harness): Promise<number> {
  const row = await h.t.app.database.db.selectFrom('mail_outbox').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

describe.each(TEST_DIALECTS)('admin invite API (%s)', (dialect: TestDialect) => {
  it('invites joined and confirmed entries, skips and counts the rest, queues one invite each, and audits', async () => {
    const h = await harness(dialect, true);
    const rows = {
      pending: [entry('pending'), entry('pending')],
      joined: [entry('joined'), entry('joined'), entry('joined')],
      confirmed: [entry('confirmed'), entry('confirmed')],
      invited: [entry('invited')],
      unsubscribed: [entry('unsubscribed'), entry('unsubscribed')],
    };
    const notSelected = entry('joined');
    await insert(h, [...Object.values(rows).flat(), notSelected]);
    const invitable = [...rows.joined, ...rows.confirmed];
    const ids = Object.values(rows)
      .flat()
      .map((r) => r.id);
    // A repeated id and an unknown one are ignored.
    const before = Date.now();
    const res = await invite(h, { ids: [...ids, rows.joined[0]!.id, randomUUID()] });
    expect(res.statusCode).toBe(200);
    const body = inviteResultSchema.parse(res.json()) satisfies InviteResult;
    expect(body.invited).toBe(5);
    expect(body.skipped).toEqual({ pending: 2, unsubscribed: 2, alreadyInvited: 1 });
    expect(Date.parse(body.invitedAt)).toBeGreaterThanOrEqual(before - 1000);

    const after = await statuses(h);
    for (const r of invitable) expect(after.get(r.id)).toEqual({ status: 'invited', invited_at: body.invitedAt });
    // The rest is untouched, including the earlier invite's time.
    for (const r of [...rows.pending, ...rows.invited, ...rows.unsubscribed, notSelected]) {
      expect(after.get(r.id)).toEqual({ status: r.status, invited_at: r.invited_at });
    }

    const queued = await outbox(h);
    expect(queued).toHaveLength(5);
    expect(new Set(queued.map((m) => m.to_address))).toEqual(new Set(invitable.map((r) => r.email)));
    const byAddress = new Map(invitable.map((r) => [r.email, r.id]));
    for (const m of queued) {
      expect(m.kind).toBe('invite');
      expect(m.template).toBe('invite');
      expect(m.subject).toBe(INVITE_SUBJECT);
      expect(m.subject).not.toContain('{productName}');
      expect(JSON.parse(m.template_data!)).toEqual({ entryId: byAddress.get(m.to_address) });
    }

    const [audit] = await listAudit(h.t.app.database.db, 1);
    expect(audit).toMatchObject({
      action: 'invite',
      actorEmail: ADMIN.email,
      detail: { invited: 5, requested: ids.length + 2, skipped: { pending: 2, unsubscribed: 2, alreadyInvited: 1 } },
    });
    // The audit log keeps counts, never the invited addresses.
    expect(JSON.stringify(audit!.detail)).not.toContain('@');

    // Inviting the same people again sends nothing more.
    const again = await invite(h, { ids });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ invited: 0, skipped: { pending: 2, unsubscribed: 2, alreadyInvited: 6 } });
    expect(await outboxCount(h)).toBe(5);
  });

  it('invites every entry matching a filter but the excepted ones and those after until, and counts the rest', async () => {
    const h = await harness(dialect, true);
    const de = {
      joined: entry('joined', { country: 'Germany' }),
      confirmed: entry('confirmed', { country: 'Germany' }),
      pending: entry('pending', { country: 'Germany' }),
      unsubscribed: entry('unsubscribed', { country: 'Germany' }),
      invited: entry('invited', { country: 'Germany' }),
      excepted: entry('joined', { country: 'Germany' }),
    };
    const france = entry('joined', { country: 'France' });
    const until = new Date(Date.parse(france.created_at) + 500).toISOString();
    const late = entry('joined', { country: 'Germany' });
    await insert(h, [...Object.values(de), france, late]);
    const filter = { country: 'Germany', until };
    const res = await invite(h, { filter, except: [de.excepted.id] });
    expect(res.statusCode, res.body).toBe(200);
    const body = inviteResultSchema.parse(res.json());
    expect(body).toMatchObject({ invited: 2, skipped: { pending: 1, unsubscribed: 1, alreadyInvited: 1 } });

    const after = await statuses(h);
    for (const r of [de.joined, de.confirmed]) expect(after.get(r.id)).toEqual({ status: 'invited', invited_at: body.invitedAt });
    for (const r of [de.pending, de.unsubscribed, de.invited, de.excepted, france, late]) {
      expect(after.get(r.id)).toEqual({ status: r.status, invited_at: r.invited_at });
    }
    expect(new Set((await outbox(h)).map((m) => m.to_address))).toEqual(new Set([de.joined.email, de.confirmed.email]));
    const [audit] = await listAudit(h.t.app.database.db, 1);
    expect(audit).toMatchObject({
      action: 'invite',
      detail: { invited: 2, scope: 'matching', filter, except: 1, skipped: { pending: 1, unsubscribed: 1, alreadyInvited: 1 } },
    });
  });

  it('invites a filtered selection larger than one chunk', async () => {
    const h = await harness(dialect, true);
    const rows = Array.from({ length: 11_000 }, (_, i) => entry(i % 1000 === 0 ? 'pending' : 'joined', { source: i % 2 ? 'google' : null }));
    await insert(h, rows);
    const matching = rows.filter((r) => r.source === 'google');
    const res = await invite(h, { filter: { source: 'google' } });
    expect(res.statusCode, res.body).toBe(200);
    const body = inviteResultSchema.parse(res.json());
    const pending = matching.filter((r) => r.status === 'pending').length;
    expect(body).toMatchObject({ invited: matching.length - pending, skipped: { pending, unsubscribed: 0, alreadyInvited: 0 } });
    expect(await outboxCount(h)).toBe(body.invited);
    const after = await statuses(h);
    expect([...after.values()].filter((s) => s.status === 'invited')).toHaveLength(body.invited);
    for (const r of rows.filter((x) => x.source === null)) expect(after.get(r.id)?.status).toBe(r.status);
  });

  it('answers 400 invalid_filter for a bad filter and changes nothing', async () => {
    const h = await harness(dialect, true);
    const row = entry('joined');
    await insert(h, [row]);
    for (const filter of [{ status: 'vip' }, { from: '2026-02-30' }, { until: '2026-01-01T24:00:00Z' }, 'all']) {
      const res = await invite(h, { filter });
      expect(res.statusCode, JSON.stringify(filter)).toBe(400);
      expect(res.json().error.code).toBe('invalid_filter');
    }
    const both = await invite(h, { ids: [row.id], filter: {} });
    expect(both.statusCode).toBe(400);
    expect(both.json().error.code).toBe('bad_request');
    expect((await statuses(h)).get(row.id)?.status).toBe('joined');
    expect(await outboxCount(h)).toBe(0);
  });

  it('the queued invites reach the SMTP server, one per invited person', async () => {
    const h = await harness(dialect, true);
    const joined = [entry('joined'), entry('confirmed')];
    const skipped = [entry('pending'), entry('unsubscribed')];
    await insert(h, [...joined, ...skipped]);
    const res = await invite(h, { ids: [...joined, ...skipped].map((r) => r.id) });
    expect(res.json()).toMatchObject({ invited: 2 });
    for (let i = 0; i < 20 && (await h.t.app.mail.worker!.runOnce()) > 0; i++);
    expect(h.smtp!.messages.map((m) => m.to).flat().sort()).toEqual(joined.map((r) => r.email).sort());
    for (const m of h.smtp!.messages) expect(m.header('subject')).toBe(INVITE_SUBJECT);
    const sent = await outbox(h);
    expect(sent.map((m) => m.status)).toEqual(['sent', 'sent']);
  });

  it('handles selections larger than one statement chunk in one transaction', async () => {
    const h = await harness(dialect, true);
    // 12,000 entries: three chunks of 5,000 ids; every 1,000th pending, every 999th unsubscribed.
    const rows = Array.from({ length: 12_000 }, (_, i) => entry(i % 1000 === 0 ? 'pending' : i % 999 === 0 ? 'unsubscribed' : 'joined'));
    await insert(h, rows);
    const pending = rows.filter((r) => r.status === 'pending').length;
    const unsubscribed = rows.filter((r) => r.status === 'unsubscribed').length;
    const res = await invite(h, { ids: rows.map((r) => r.id) });
    expect(res.statusCode).toBe(200);
    const body = inviteResultSchema.parse(res.json());
    expect(body.skipped).toEqual({ pending, unsubscribed, alreadyInvited: 0 });
    expect(body.invited).toBe(12_000 - pending - unsubscribed);
    expect(await outboxCount(h)).toBe(body.invited);
    const after = await statuses(h);
    expect([...after.values()].filter((s) => s.status === 'invited')).toHaveLength(body.invited);
  });

  it('answers 401 without a valid token and changes nothing', async () => {
    const h = await harness(dialect, true);
    const row = entry('joined');
    await insert(h, [row]);
    for (const auth of [null, 'Bearer not-a-jwt', `Basic ${Buffer.from('admin:pw').toString('base64')}`]) {
      for (const body of [{ ids: [row.id] }, { filter: {} }]) {
        const res = await invite(h, body, auth);
        expect(res.statusCode, String(auth)).toBe(401);
        expect(res.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
      }
    }
    expect((await statuses(h)).get(row.id)?.status).toBe('joined');
    expect(await outboxCount(h)).toBe(0);
  });

  it('answers 400 for bad ids and changes nothing', async () => {
    const h = await harness(dialect, true);
    const row = entry('joined');
    await insert(h, [row]);
    const cases: Array<[string, unknown]> = [
      ['no body', undefined],
      ['no ids', {}],
      ['an empty id list', { ids: [] }],
      ['ids that are not a list', { ids: row.id }],
      ['a non-UUID id', { ids: [row.id, 'abc'] }],
      ['an id that is not a string', { ids: [42] }],
      ['a UUID with SQL in it', { ids: [`${row.id}' OR '1'='1`] }],
      ['too many ids', { ids: Array.from({ length: ADMIN_MAX_IDS + 1 }, () => row.id) }],
    ];
    for (const [name, body] of cases) {
      const res = await invite(h, body);
      expect(res.statusCode, name).toBe(400);
      expect(res.json().error.code, name).toBe('bad_request');
    }
    const notJson = await h.t.app.inject({
      method: 'POST',
      url: ADMIN_INVITE_PATH,
      headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' },
      payload: '{"ids": [',
    });
    expect(notJson.statusCode).toBe(400);
    expect((await statuses(h)).get(row.id)?.status).toBe('joined');
    expect(await outboxCount(h)).toBe(0);
    expect((await listAudit(h.t.app.database.db, 10)).filter((a) => a.action === 'invite')).toEqual([]);
  });

  it('answers 409 mail_disabled when e-mail is off and changes nothing', async () => {
    const h = await harness(dialect, false);
    expect(h.t.app.mail.enabled).toBe(false);
    const row = entry('joined');
    await insert(h, [row]);
    const res = await invite(h, { ids: [row.id] });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: { code: 'mail_disabled', message: expect.stringMatching(/SMTP_URL/) } });
    expect((await statuses(h)).get(row.id)).toEqual({ status: 'joined', invited_at: null });
    expect(await outboxCount(h)).toBe(0);
    expect((await listAudit(h.t.app.database.db, 10)).filter((a) => a.action === 'invite')).toEqual([]);
  });
});
