import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { countScreening } from '../../../src/server/signup/screening-counter.js';
import { ADMIN_INSIGHTS_PATH, waitlistInsightsSchema } from '../../../src/shared/admin/waitlist-api.js';
import { SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import type { ScreeningCounts } from '../../../src/shared/waitlist/screening.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { cleanupsAfterEach, createAdminTestApp, mailEnv, startTestSmtp } from '../../support/admin-app.js';
import { startDnsServer, type TestDnsServer } from '../../support/dns.js';
import type { TestApp } from '../../support/test-app.js';

/**
 * POST /api/waitlist with the address screening on (issue 28, points 3 and 5): throwaway and dead
 * domains are refused with 422 and a code of the signup contract, nothing stored or sent, each
 * refusal counted by reason and shown by the insights route for its period. DNS answers come from
 * a real DNS server started by the test.
 */

const cleanups = cleanupsAfterEach();

async function dnsServer(): Promise<TestDnsServer> {
  const server = await startDnsServer({
    'mx.example': { kind: 'mx', exchange: 'mail.mx.example' },
    'null.example': { kind: 'null-mx' },
    'a-only.example': { kind: 'a-only', address: '192.0.2.10' },
    'silent.example': { kind: 'silent' },
    'mailinator.com': { kind: 'mx', exchange: 'mail.mailinator.com' },
  });
  cleanups.push(() => server.close());
  return server;
}

async function app(dialect: TestDialect, dns: TestDnsServer, env: Record<string, string> = {}): Promise<{ t: TestApp; token: string }> {
  const made = await createAdminTestApp(
    // A bound well above the test DNS server's answers, even on a loaded machine (the late answer's test sets its own).
    { SIGNUP_CHECK_MX: 'on', DNS_SERVERS: dns.address, SIGNUP_MX_TIMEOUT_MS: '2000', SIGNUP_RATE_LIMIT_MAX: '1000', ...env },
    { dialect, mailWorker: { pollIntervalMs: 3_600_000 } },
  );
  cleanups.push(() => made.t.close());
  return made;
}

const postJson = (t: TestApp, email: string) =>
  t.app.inject({ method: 'POST', url: SIGNUP_PATH, payload: JSON.stringify({ email }), headers: { 'content-type': 'application/json' } });
const postForm = (t: TestApp, email: string) =>
  t.app.inject({ method: 'POST', url: SIGNUP_PATH, payload: new URLSearchParams({ email }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });

async function stored(t: TestApp): Promise<{ entries: number; mails: number }> {
  const count = async (table: 'waitlist' | 'mail_outbox') =>
    Number((await t.app.database.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  return { entries: await count('waitlist'), mails: await count('mail_outbox') };
}

async function screening(t: TestApp, token: string, query = ''): Promise<Record<string, number>> {
  await t.app.signupScreening.flush();
  const res = await t.app.inject({ method: 'GET', url: `${ADMIN_INSIGHTS_PATH}${query}`, headers: { authorization: `Bearer ${token}` } });
  expect(res.statusCode, res.body).toBe(200);
  const counts: ScreeningCounts = waitlistInsightsSchema.parse(res.json()).screening;
  expect(counts.map((c) => c.reason)).toEqual(['disposable', 'dead-domain', 'no-challenge', 'rate-limit']);
  return Object.fromEntries(counts.map((c) => [c.reason, c.count]));
}

describe.each(TEST_DIALECTS)('signup screening (%s)', (dialect: TestDialect) => {
  it('refuses throwaway and dead domains with 422 and their codes, stores and sends nothing, and counts them', async () => {
    const dns = await dnsServer();
    const smtp = await startTestSmtp(cleanups);
    // Double opt-in on: an accepted signup queues a confirmation, a refused one must not.
    const { t, token } = await app(dialect, dns, { ...mailEnv(smtp.url), SIGNUP_CONFIRMATION: 'required' });

    for (const [email, code, message] of [
      ['someone@mailinator.com', 'email_disposable', 'Please use a permanent email address.'],
      ['someone@eu.mailinator.com', 'email_disposable', 'Please use a permanent email address.'],
      ['someone@gone.example', 'email_undeliverable', 'This email domain cannot receive email.'],
      ['someone@null.example', 'email_undeliverable', 'This email domain cannot receive email.'],
    ] as const) {
      const res = await postJson(t, email);
      expect(res.statusCode, email).toBe(422);
      expect(res.json(), email).toEqual({ error: { code, message } });
    }
    expect(await stored(t)).toEqual({ entries: 0, mails: 0 });
    // The throwaway list is looked at first: no DNS question for a listed domain.
    expect(dns.queries.has('mailinator.com')).toBe(false);

    // The form without JavaScript: the same status, and the message on the script-free page.
    const form = await postForm(t, 'other@null.example');
    expect(form.statusCode).toBe(422);
    expect(form.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(form.body).toContain('Email cannot be delivered');
    expect(form.body).toContain('This email domain cannot receive email.');
    const throwaway = await postForm(t, 'other@mailinator.com');
    expect(throwaway.statusCode).toBe(422);
    expect(throwaway.body).toContain('Please use a permanent email address.');

    // An MX, an A record without MX, and a DNS server that never answers (within the 2 s bound) all join.
    for (const email of ['a@mx.example', 'b@a-only.example', 'c@silent.example']) {
      const res = await postJson(t, email);
      expect(res.statusCode, email).toBe(201);
    }
    expect(await stored(t)).toEqual({ entries: 3, mails: 3 });
    expect(await screening(t, token)).toEqual({ disposable: 3, 'dead-domain': 3, 'no-challenge': 0, 'rate-limit': 0 });
  });

  it('switched off: SIGNUP_BLOCK_DISPOSABLE=off and SIGNUP_CHECK_MX=off accept what they would refuse, without asking DNS', async () => {
    const dns = await dnsServer();
    const { t, token } = await app(dialect, dns, { SIGNUP_BLOCK_DISPOSABLE: 'off', SIGNUP_CHECK_MX: 'off' });
    for (const email of ['a@mailinator.com', 'b@gone.example', 'c@null.example']) expect((await postJson(t, email)).statusCode, email).toBe(201);
    expect(dns.queries.size).toBe(0);
    expect(await screening(t, token)).toEqual({ disposable: 0, 'dead-domain': 0, 'no-challenge': 0, 'rate-limit': 0 });
  });

  it("refuses the domains of the operator's SIGNUP_BLOCKED_DOMAINS_FILE", async () => {
    const dns = await dnsServer();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blocked-'));
    cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'blocked.txt');
    fs.writeFileSync(file, '# seen in our logs\nmx.example\n');
    const { t } = await app(dialect, dns, { SIGNUP_BLOCKED_DOMAINS_FILE: file });
    expect((await postJson(t, 'a@mx.example')).json()).toEqual({ error: { code: 'email_disposable', message: 'Please use a permanent email address.' } });
    expect((await postJson(t, 'a@a-only.example')).statusCode).toBe(201);
  });

  it('counts signups refused by the per-client limit', async () => {
    const dns = await dnsServer();
    const { t, token } = await app(dialect, dns, { SIGNUP_RATE_LIMIT_MAX: '1' });
    expect((await postJson(t, 'a@mx.example')).statusCode).toBe(201);
    expect((await postJson(t, 'b@mx.example')).statusCode).toBe(429);
    expect((await postJson(t, 'c@mx.example')).statusCode).toBe(429);
    expect(await screening(t, token)).toEqual({ disposable: 0, 'dead-domain': 0, 'no-challenge': 0, 'rate-limit': 2 });
  });

  it('the insight panel counts the hours of its period only (from/to UTC days, inclusive)', async () => {
    const dns = await dnsServer();
    const { t, token } = await app(dialect, dns);
    const db = t.app.database.db;
    await countScreening(db, 'disposable', 2, new Date('2026-03-01T00:00:00Z'));
    await countScreening(db, 'disposable', 3, new Date('2026-03-01T23:59:59Z'));
    await countScreening(db, 'dead-domain', 1, new Date('2026-03-02T12:00:00Z'));
    await countScreening(db, 'no-challenge', 7, new Date('2026-03-03T00:00:00Z'));
    await countScreening(db, 'rate-limit', 5, new Date('2026-02-28T23:59:59Z'));
    // The same hour and reason again: one row, upserted.
    await countScreening(db, 'disposable', 1, new Date('2026-03-01T23:00:00Z'));
    expect(await db.selectFrom('signup_screening').select('n').where('reason', '=', 'disposable').execute()).toHaveLength(2);

    expect(await screening(t, token)).toEqual({ disposable: 6, 'dead-domain': 1, 'no-challenge': 7, 'rate-limit': 5 });
    expect(await screening(t, token, '?from=2026-03-01&to=2026-03-02')).toEqual({ disposable: 6, 'dead-domain': 1, 'no-challenge': 0, 'rate-limit': 0 });
    expect(await screening(t, token, '?from=2026-03-02')).toEqual({ disposable: 0, 'dead-domain': 1, 'no-challenge': 7, 'rate-limit': 0 });
    expect(await screening(t, token, '?to=2026-02-28')).toEqual({ disposable: 0, 'dead-domain': 0, 'no-challenge': 0, 'rate-limit': 5 });
    // Other filters narrow the entries, not these counts.
    expect(await screening(t, token, '?from=2026-03-03&country=Germany')).toEqual({ disposable: 0, 'dead-domain': 0, 'no-challenge': 7, 'rate-limit': 0 });
  });

  it('a domain whose DNS answered too late is checked again before its first e-mail: not sent, and marked so in the outbox', async () => {
    const dns = await dnsServer();
    // NXDOMAIN, but only well after the signup's 200 ms.
    dns.zones.set('late.example', { kind: 'nxdomain', delayMs: 1500 });
    const smtp = await startTestSmtp(cleanups);
    const { t } = await app(dialect, dns, { ...mailEnv(smtp.url), SIGNUP_CONFIRMATION: 'required', SIGNUP_MX_TIMEOUT_MS: '200' });
    expect((await postJson(t, 'someone@late.example')).statusCode).toBe(201);
    expect((await postJson(t, 'someone@mx.example')).statusCode).toBe(201);
    await t.app.mail.worker!.runOnce();
    const rows = await t.app.database.db.selectFrom('mail_outbox').select(['to_address', 'status', 'last_error']).orderBy('to_address').execute();
    expect(rows).toEqual([
      { to_address: 'someone@late.example', status: 'failed', last_error: 'Not sent: the recipient domain does not exist (NXDOMAIN)' },
      { to_address: 'someone@mx.example', status: 'sent', last_error: null },
    ]);
    expect(smtp.messages.map((m) => m.to)).toEqual([['someone@mx.example']]);
  });
});
