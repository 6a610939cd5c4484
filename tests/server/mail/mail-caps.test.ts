import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { listAudit } from '../../../src/server/audit/audit-log.js';
import { ConfigError, loadConfig } from '../../../src/server/config.js';
import { createLinkToken } from '../../../src/server/consent/links.js';
import { listOutboxPage } from '../../../src/server/mail/outbox-admin.js';
import { DEFAULT_REDIS_PREFIX } from '../../../src/server/rate-limit/index.js';
import { ERASE_API_PATH } from '../../../src/shared/waitlist/consent-contract.js';
import { SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { cleanupsAfterEach, createMailTestApp, drainOutbox, startTestSmtp } from '../../support/admin-app.js';
import { TEST_DIALECTS, TEST_REDIS_URL, type TestDialect } from '../../support/databases.js';
import type { TestSmtpServer } from '../../support/smtp.js';
import type { TestApp } from '../../support/test-app.js';

/**
 * Issue 28, point 2: no mail bombing. Confirmation (and restore) e-mails are capped per address,
 * per recipient domain and per client address; a global hourly budget defers the rest, which waits
 * in the outbox. A real SMTP server receives what is sent; the worker's clock is moved, never waited for.
 */

const cleanups = cleanupsAfterEach();
const HOUR = 3_600_000;

/** An app with double opt-in and every resend allowed at once (so each signup queues a confirmation), on a clock the test moves. */
async function capApp(dialect: TestDialect, smtp: TestSmtpServer, env: Record<string, string> = {}) {
  const clock = { now: Date.now() };
  const t = await createMailTestApp(cleanups, dialect, smtp.url, { now: () => new Date(clock.now) }, {
    SIGNUP_CONFIRMATION: 'required',
    CONFIRMATION_RESEND_SECONDS: '0',
    SIGNUP_RATE_LIMIT_MAX: '1000',
    ...env,
  });
  return { t, clock };
}

function signUp(t: TestApp, email: string, remoteAddress = '198.51.100.7') {
  return t.app.inject({ method: 'POST', url: SIGNUP_PATH, payload: { email }, remoteAddress });
}

/** Sends everything due (an enqueue also wakes the worker: its pass is waited for too). */
async function drain(t: TestApp): Promise<void> {
  await drainOutbox(t);
  await vi.waitFor(async () => {
    const sending = await t.app.database.db.selectFrom('mail_outbox').select('id').where('status', '=', 'sending').execute();
    expect(sending).toEqual([]);
  }, { timeout: 20_000 }); // the first send of an app loads the e-mail templates
  await drainOutbox(t);
}

async function rows(t: TestApp) {
  return t.app.database.db.selectFrom('mail_outbox').select(['to_address', 'kind', 'status', 'last_error', 'next_attempt_at']).orderBy('created_at').orderBy('to_address').execute();
}

const capAudits = async (t: TestApp) => (await listAudit(t.app.database.db, 100)).filter((a) => a.action === 'mail_capped');

describe('e-mail cap settings', () => {
  const env = { SMTP_URL: 'smtp://127.0.0.1:2525', MAIL_FROM: 'hello@example.com', PUBLIC_URL: 'https://example.com' };
  it('default to 3 per address a day, 200 per domain and 20 per client an hour, 1000 an hour in all; 0 is off; nonsense is refused', () => {
    expect(loadConfig(env).mail!.caps).toEqual({ perAddress: 3, perDomainHourly: 200, perClientHourly: 20, budgetHourly: 1000 });
    const off = { MAIL_CAP_PER_ADDRESS: '0', MAIL_CAP_PER_DOMAIN_HOURLY: '0', MAIL_CAP_PER_CLIENT_HOURLY: '0', MAIL_CONFIRMATION_BUDGET_HOURLY: '0' };
    expect(loadConfig({ ...env, ...off }).mail!.caps).toEqual({ perAddress: 0, perDomainHourly: 0, perClientHourly: 0, budgetHourly: 0 });
    expect(() => loadConfig({ ...env, MAIL_CAP_PER_ADDRESS: 'many' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...env, MAIL_CONFIRMATION_BUDGET_HOURLY: '-1' })).toThrow(/MAIL_CONFIRMATION_BUDGET_HOURLY/);
  });
});

describe.each(TEST_DIALECTS)('e-mail caps (%s)', (dialect: TestDialect) => {
  it('sends at most 3 confirmations to one address in 24 hours, then none until the window passes; the outbox view and the audit log say so', async () => {
    const smtp = await startTestSmtp(cleanups);
    const { t, clock } = await capApp(dialect, smtp);
    for (let i = 0; i < 5; i++) expect((await signUp(t, 'victim@example.com')).json()).toEqual({ status: 'pending' });
    await drain(t);
    expect(smtp.messages).toHaveLength(3);
    const held = (await rows(t)).filter((r) => r.status === 'failed');
    expect(held).toHaveLength(2);
    const reason = 'Not sent: cap reached (at most 3 confirmation e-mails to one address in 24 hours)';
    // The admin's outbox view (its query) shows each held message and why.
    const page = await listOutboxPage(t.app.database.db, { limit: 10 });
    expect(page.messages.filter((m) => m.status === 'failed').map((m) => m.lastError)).toEqual([reason, reason]);
    // One audit record for the cap's window, without the address.
    const audits = await capAudits(t);
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({ actorEmail: null, ip: null, detail: { cap: 'address', kind: 'confirmation' } });
    expect(JSON.stringify(audits[0])).not.toContain('victim');

    clock.now += 24 * HOUR - 60_000;
    await signUp(t, 'victim@example.com');
    await drain(t);
    expect(smtp.messages).toHaveLength(3);
    clock.now += 2 * 60_000;
    await signUp(t, 'victim@example.com');
    await drain(t);
    expect(smtp.messages).toHaveLength(4);
  });

  it('caps confirmations per client address and per recipient domain in an hour', async () => {
    const smtp = await startTestSmtp(cleanups);
    const { t, clock } = await capApp(dialect, smtp, { MAIL_CAP_PER_CLIENT_HOURLY: '2', MAIL_CAP_PER_DOMAIN_HOURLY: '3' });
    // One after another, each sent (or held) before the next arrives.
    const signups = [
      ['a@one.example', '192.0.2.1'],
      ['b@one.example', '192.0.2.1'],
      ['c@two.example', '192.0.2.1'], // the third from one client
      ['d@one.example', '192.0.2.2'],
      ['e@one.example', '192.0.2.3'], // the fourth to one domain
      ['f@two.example', '192.0.2.3'],
    ] as const;
    for (const [email, ip] of signups) {
      await signUp(t, email, ip);
      await drain(t);
    }
    expect(smtp.messages.map((m) => m.to[0]).sort()).toEqual(['a@one.example', 'b@one.example', 'd@one.example', 'f@two.example']);
    const failed = Object.fromEntries((await rows(t)).filter((r) => r.status === 'failed').map((r) => [r.to_address, r.last_error]));
    expect(failed).toEqual({
      'c@two.example': 'Not sent: cap reached (at most 2 confirmation e-mails caused by one client address in an hour)',
      'e@one.example': 'Not sent: cap reached (at most 3 confirmation e-mails to one domain in an hour)',
    });
    expect((await capAudits(t)).map((a) => a.detail.cap).sort()).toEqual(['client', 'domain']);

    clock.now += HOUR + 1000;
    await signUp(t, 'g@one.example', '192.0.2.1');
    await drain(t);
    expect(smtp.messages.map((m) => m.to[0])).toContain('g@one.example');
  });

  it('defers what exceeds the hourly budget: it waits in the outbox and goes when the budget frees', async () => {
    const smtp = await startTestSmtp(cleanups);
    const { t, clock } = await capApp(dialect, smtp, { MAIL_CONFIRMATION_BUDGET_HOURLY: '2' });
    for (const [i, email] of ['one@example.com', 'two@example.net', 'three@example.org', 'four@example.info'].entries()) await signUp(t, email, `192.0.2.${i + 1}`);
    await drain(t);
    expect(smtp.messages).toHaveLength(2);
    const waiting = (await rows(t)).filter((r) => r.status === 'queued');
    expect(waiting).toHaveLength(2);
    for (const row of waiting) {
      expect(row.last_error).toBe('Deferred: the hourly budget of 2 confirmation e-mails is used up; sent when it frees');
      expect(Date.parse(String(row.next_attempt_at))).toBeGreaterThan(clock.now);
    }
    // Other e-mails are not held by the budget.
    await t.app.mail.enqueue(t.app.database.db, { kind: 'test', to: 'admin@example.com', subject: 'Test', text: 'Test' });
    await drain(t);
    expect(smtp.messages).toHaveLength(3);

    clock.now += HOUR + 1000;
    await drain(t);
    expect(smtp.messages).toHaveLength(5);
    expect((await rows(t)).every((r) => r.status === 'sent')).toBe(true);
  });

  it('caps the "confirm it\'s you" e-mails of an erased address too', async () => {
    const smtp = await startTestSmtp(cleanups);
    const { t } = await capApp(dialect, smtp, { SIGNUP_CONFIRMATION: 'off', MAIL_CAP_PER_ADDRESS: '1' });
    await signUp(t, 'erased@example.com');
    const { id } = (await t.app.database.db.selectFrom('waitlist').select('id').executeTakeFirstOrThrow());
    const token = createLinkToken(t.app.secretBox, { entryId: id, purpose: 'erase', expiresAt: Math.floor(Date.now() / 1000) + 3600 });
    await t.app.inject({ method: 'POST', url: ERASE_API_PATH, payload: { token } });
    await signUp(t, 'erased@example.com');
    await signUp(t, 'erased@example.com');
    await drain(t);
    expect(smtp.messages).toHaveLength(1);
    expect((await rows(t)).map((r) => [r.kind, r.status])).toEqual([
      ['restore', 'sent'],
      ['restore', 'failed'],
    ]);
  });
});

describe.runIf(TEST_DIALECTS.includes('postgres'))('e-mail caps across instances', () => {
  const backends = [{ redis: false }, ...(TEST_REDIS_URL ? [{ redis: true }] : [])];
  it.each(backends)('two instances share the hourly budget (redis: $redis)', async ({ redis }) => {
    const key = `${DEFAULT_REDIS_PREFIX}mail_budget:confirmations`;
    // A Redis database of this test's own: the budget's counter is one key for every app on a Redis,
    // and other test files' apps, running beside this one, count their confirmations in it too.
    const redisUrl = TEST_REDIS_URL ? Object.assign(new URL(TEST_REDIS_URL), { pathname: '/11' }).toString() : null;
    const client = redis ? new Redis(redisUrl!) : null;
    if (client) {
      await client.del(key);
      cleanups.push(async () => {
        await client.del(key);
        client.disconnect();
      });
    }
    const smtp = await startTestSmtp(cleanups);
    const env = { SIGNUP_CONFIRMATION: 'required', MAIL_CONFIRMATION_BUDGET_HOURLY: '1', ...(redis ? { REDIS_URL: redisUrl! } : {}) };
    const a = await createMailTestApp(cleanups, 'postgres', smtp.url, {}, env);
    // On one database (PostgreSQL) or, with Redis, each on its own: the budget is shared all the same.
    const b = await createMailTestApp(cleanups, 'postgres', smtp.url, {}, redis ? env : { ...env, DATABASE_URL: a.databaseUrl });
    // Addresses and clients of this run only: counters in a shared Redis outlive a run.
    const run = randomBytes(4).toString('hex');
    const [first, second] = [`first-${run}@example.com`, `second-${run}@example.com`];
    const clientIp = () => `198.18.${randomBytes(1)[0]}.${1 + (randomBytes(1)[0]! % 254)}`;
    await signUp(a, first, clientIp());
    await drain(a);
    await signUp(b, second, clientIp());
    await drain(b);
    expect(smtp.messages.map((m) => m.to[0])).toEqual([first]);
    const deferred = (await rows(b)).find((r) => r.to_address === second)!;
    expect(deferred).toMatchObject({ status: 'queued', last_error: expect.stringMatching(/^Deferred: the hourly budget of 1/) });
  });
});
