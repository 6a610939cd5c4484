import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/server/config.js';
import { openDatabase, type DatabaseHandle } from '../../../src/server/db/database.js';
import { claimDueMail, enqueueMail, findOutboxMessage, renewLease } from '../../../src/server/mail/outbox.js';
import { defaultBackoffMs } from '../../../src/server/mail/worker.js';
import { classifySendError } from '../../../src/server/mail/transport.js';
import type { MailWorkerOverrides } from '../../../src/server/mail/index.js';
import { TEST_DIALECTS, describeWhen, type TestDialect } from '../../support/databases.js';
import { cleanupsAfterEach, createMailTestApp, drainOutbox, startTestSmtp, TEST_MAIL_FROM as MAIL_FROM, TEST_PUBLIC_URL as PUBLIC_URL } from '../../support/admin-app.js';
import { unusedPort, type SmtpAnswer, type TestSmtpServer } from '../../support/smtp.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const cleanups = cleanupsAfterEach();
const smtp = (options: Parameters<typeof startTestSmtp>[1] = {}): Promise<TestSmtpServer> => startTestSmtp(cleanups, options);

/** A clock the test moves; the worker and enqueue read it. */
function testClock() {
  let t = Date.parse('2030-01-01T00:00:00Z');
  return { now: () => new Date(t), advance: (ms: number) => (t += ms) };
}

// No polling by itself: the tests drive passes with runOnce (enqueue still wakes the worker).
const mailApp = (dialect: TestDialect, smtpUrl: string, worker: MailWorkerOverrides = {}, env: Record<string, string> = {}): Promise<TestApp> =>
  createMailTestApp(cleanups, dialect, smtpUrl, worker, env);
const drain = drainOutbox;

const message = (to = 'you@example.com') => ({ kind: 'test', to, subject: 'Hello', text: 'Plain words.\n' });

describe('mail configuration', () => {
  it('SMTP_URL without MAIL_FROM and PUBLIC_URL fails with a clear message', () => {
    let error: unknown;
    try {
      loadConfig({ SMTP_URL: 'smtp://127.0.0.1:2525' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const text = (error as ConfigError).message;
    expect(text).toMatch(/MAIL_FROM: required when SMTP_URL is set/);
    expect(text).toMatch(/PUBLIC_URL: required when SMTP_URL is set/);
  });

  it('checks each variable', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(problems({ PUBLIC_URL: 'https://example.com/some/path' })).toMatch(/PUBLIC_URL: must be the site's http\(s\) origin/);
    expect(problems({ PUBLIC_URL: 'ftp://example.com' })).toMatch(/PUBLIC_URL/);
    expect(problems({ SMTP_URL: 'http://mail.example.com', MAIL_FROM, PUBLIC_URL })).toMatch(/SMTP_URL: must be an smtp:\/\/ or smtps:\/\//);
    expect(problems({ SMTP_URL: 'smtp://h', MAIL_FROM: 'not an address', PUBLIC_URL })).toMatch(/MAIL_FROM: must be an address/);
    expect(problems({ SMTP_URL: 'smtp://h', MAIL_FROM, PUBLIC_URL, DKIM_DOMAIN: 'example.com' })).toMatch(/set all three/);
    expect(problems({ SMTP_URL: 'smtp://h', MAIL_FROM, PUBLIC_URL, MAIL_MAX_ATTEMPTS: '0' })).toMatch(/MAIL_MAX_ATTEMPTS/);

    const config = loadConfig({ SMTP_URL: 'smtps://u:p@smtp.example.com', MAIL_FROM: 'hello@example.com', PUBLIC_URL: 'https://example.com/' });
    expect(config.publicUrl).toBe('https://example.com');
    expect(config.mail).toMatchObject({ from: 'hello@example.com', publicUrl: 'https://example.com', maxAttempts: 8, dkim: null });
    expect(loadConfig({}).mail).toBeNull();
  });

  it('classifies failures and backs off exponentially, capped at an hour', () => {
    expect(classifySendError({ responseCode: 451 })).toBe('temporary');
    expect(classifySendError({ responseCode: 550 })).toBe('permanent');
    expect(classifySendError({ code: 'ECONNECTION' })).toBe('temporary');
    expect(classifySendError({ code: 'ETIMEDOUT' })).toBe('temporary');
    expect(defaultBackoffMs(1, () => 1)).toBe(30_000);
    expect(defaultBackoffMs(3, () => 1)).toBe(120_000);
    expect(defaultBackoffMs(30, () => 1)).toBe(3_600_000);
    expect(defaultBackoffMs(1, () => 0)).toBe(15_000);
  });
});

describe.each(TEST_DIALECTS)('mail outbox (%s)', (dialect: TestDialect) => {
  it('without SMTP_URL: no worker, nothing queued', async () => {
    const t = await createTestApp({}, { dialect });
    cleanups.push(() => t.close());
    expect(t.app.mail.enabled).toBe(false);
    expect(t.app.mail.worker).toBeNull();
    expect(await t.app.mail.enqueue(t.app.database.db, message())).toBeNull();
    const rows = await t.app.database.db.selectFrom('mail_outbox').selectAll().execute();
    expect(rows).toEqual([]);
  });

  it('delivers a queued message with its stable Message-ID and headers; a rolled-back enqueue sends nothing', async () => {
    const server = await smtp();
    const t = await mailApp(dialect, server.url);
    const db = t.app.database.db;

    await expect(
      db.transaction().execute(async (trx) => {
        await t.app.mail.enqueue(trx, message('rolled-back@example.com'));
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');

    const queued = await t.app.mail.enqueue(db, {
      ...message(),
      html: '<p>Plain words.</p>',
      headers: { 'X-Waitlist-Test': 'yes', 'List-Unsubscribe': '<https://waitlist.example.com/u/1>' },
    });
    expect(queued!.messageId).toMatch(/^<[0-9a-f-]{36}@waitlist\.example\.com>$/);
    await drain(t);

    expect(server.messages).toHaveLength(1);
    const received = server.messages[0]!;
    expect(received.to).toEqual(['you@example.com']);
    expect(received.from).toBe('hello@example.com');
    expect(received.header('message-id')).toBe(queued!.messageId);
    expect(received.header('from')).toBe(MAIL_FROM);
    expect(received.header('subject')).toBe('Hello');
    expect(received.header('x-waitlist-test')).toBe('yes');
    expect(received.header('list-unsubscribe')).toBe('<https://waitlist.example.com/u/1>');
    expect(received.raw).toContain('Plain words.');

    const row = await findOutboxMessage(db, queued!.id);
    expect(row).toMatchObject({ status: 'sent', attempts: 1, lastError: null });
    expect(row!.sentAt).not.toBeNull();
  });

  it('451 then accepted: delivered exactly once, attempts = 2', async () => {
    const server = await smtp({ answer: (_mail, index): SmtpAnswer => (index === 0 ? { code: 451, message: 'Try again later' } : undefined) });
    const clock = testClock();
    const t = await mailApp(dialect, server.url, { now: clock.now, backoffMs: () => 0 });
    const queued = await t.app.mail.enqueue(t.app.database.db, message());
    await drain(t);
    expect(server.attempts).toBe(2);
    expect(server.messages).toHaveLength(1);
    expect(server.messages[0]!.header('message-id')).toBe(queued!.messageId);
    expect(await findOutboxMessage(t.app.database.db, queued!.id)).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('550: failed at once, the reason kept', async () => {
    const server = await smtp({ answer: () => ({ code: 550, message: 'No such user here' }) });
    const t = await mailApp(dialect, server.url, { backoffMs: () => 0 });
    const queued = await t.app.mail.enqueue(t.app.database.db, message());
    await drain(t);
    const row = await findOutboxMessage(t.app.database.db, queued!.id);
    expect(row).toMatchObject({ status: 'failed', attempts: 1 });
    expect(row!.lastError).toMatch(/550/);
    expect(row!.lastError).toMatch(/No such user here/);
    expect(server.messages).toHaveLength(0);
  });

  it('temporary failures until MAIL_MAX_ATTEMPTS: failed with the last error', async () => {
    const server = await smtp({ answer: () => ({ code: 421, message: 'Busy' }) });
    const t = await mailApp(dialect, server.url, { backoffMs: () => 0 }, { MAIL_MAX_ATTEMPTS: '3' });
    const queued = await t.app.mail.enqueue(t.app.database.db, message());
    await drain(t);
    const row = await findOutboxMessage(t.app.database.db, queued!.id);
    expect(row).toMatchObject({ status: 'failed', attempts: 3 });
    expect(row!.lastError).toMatch(/421/);
    expect(server.attempts).toBe(3);
  });

  it('connection refused: retried later, delivered once the SMTP server is back', async () => {
    const port = await unusedPort();
    const clock = testClock();
    const t = await mailApp(dialect, `smtp://127.0.0.1:${port}`, { now: clock.now, backoffMs: () => 60_000 });
    const queued = await t.app.mail.enqueue(t.app.database.db, message());
    await drain(t);
    const waiting = await findOutboxMessage(t.app.database.db, queued!.id);
    expect(waiting).toMatchObject({ status: 'queued', attempts: 1 });
    expect(waiting!.lastError).toMatch(/ECONNREFUSED|ECONNECTION|ESOCKET/);
    expect(Date.parse(waiting!.nextAttemptAt)).toBe(clock.now().getTime() + 60_000);

    const server = await smtp({ port });
    await drain(t); // not due yet
    expect(server.messages).toHaveLength(0);
    clock.advance(61_000);
    await drain(t);
    expect(server.messages).toHaveLength(1);
    expect(await findOutboxMessage(t.app.database.db, queued!.id)).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('a row whose lease expired (a crashed sender) is claimed again; a live lease is not', async () => {
    const server = await smtp();
    const clock = testClock();
    const t = await mailApp(dialect, server.url, { now: clock.now, leaseMs: 60_000 });
    const db = t.app.database.db;
    // Claimed by a sender that then died, and by one still at work: written in one transaction,
    // so the worker (woken by the enqueue) never sees them queued.
    const past = new Date(clock.now().getTime() - 1000).toISOString();
    const future = new Date(clock.now().getTime() + 60_000).toISOString();
    const [crashed, busy] = await db.transaction().execute(async (trx) => {
      const options = { messageIdHost: 'x.example', now: clock.now() };
      const rows = [await enqueueMail(trx, message('crashed@example.com'), options), await enqueueMail(trx, message('busy@example.com'), options)];
      await trx.updateTable('mail_outbox').set({ status: 'sending', attempts: 1, lease_until: past }).where('id', '=', rows[0]!.id).execute();
      await trx.updateTable('mail_outbox').set({ status: 'sending', attempts: 1, lease_until: future }).where('id', '=', rows[1]!.id).execute();
      return rows as [(typeof rows)[0], (typeof rows)[0]];
    });

    await drain(t);
    expect(server.messages.map((m) => m.to[0])).toEqual(['crashed@example.com']);
    expect(await findOutboxMessage(db, crashed.id)).toMatchObject({ status: 'sent', attempts: 2 });
    expect(await findOutboxMessage(db, busy.id)).toMatchObject({ status: 'sending', attempts: 1 });

    clock.advance(120_000);
    await drain(t);
    expect(server.messages.map((m) => m.to[0])).toEqual(['crashed@example.com', 'busy@example.com']);
  });

  it('a lease is renewed only by the claim that holds it', async () => {
    const server = await smtp();
    const t = await mailApp(dialect, server.url);
    await t.app.mail.worker!.stop(); // this test claims by hand
    const db = t.app.database.db;
    await enqueueMail(db, message(), { messageIdHost: 'x.example' });
    const options = { leaseMs: 60_000, limit: 5, maxAttempts: 8 };
    const [mine] = await claimDueMail(db, { ...options, now: new Date(Date.now() + 1000) });
    expect(mine).toMatchObject({ attempts: 1 });
    expect(await renewLease(db, mine!, new Date(Date.now() + 120_000))).toBe(true);
    // The lease ran out and another worker took the row: the first claim may no longer renew it.
    const [theirs] = await claimDueMail(db, { ...options, now: new Date(Date.now() + 600_000) });
    expect(theirs).toMatchObject({ id: mine!.id, attempts: 2 });
    expect(await renewLease(db, mine!, new Date(Date.now() + 900_000))).toBe(false);
  });

  it('app.close() lets the message being sent finish and leaves the rest queued', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let inFlight!: () => void;
    const sending = new Promise<void>((resolve) => (inFlight = resolve));
    const server = await smtp({
      answer: async (_mail, index) => {
        if (index === 0) {
          inFlight();
          await released;
        }
        return undefined;
      },
    });
    const t = await mailApp(dialect, server.url);
    const observer: DatabaseHandle = openDatabase(t.config.database);
    cleanups.push(() => observer.close());
    const ids: string[] = [];
    // One transaction: the worker's pass (woken by enqueue) finds all three at once.
    await t.app.database.db.transaction().execute(async (trx) => {
      for (const to of ['one@example.com', 'two@example.com', 'three@example.com']) ids.push((await t.app.mail.enqueue(trx, message(to)))!.id);
    });
    void t.app.mail.worker!.runOnce();
    await sending;
    const closing = t.app.close();
    release();
    await closing;

    // Which of the three went first is the database's choice; exactly one did.
    expect(server.messages).toHaveLength(1);
    const rows = await observer.db.selectFrom('mail_outbox').select(['to_address', 'status', 'attempts', 'lease_until']).execute();
    expect(rows).toHaveLength(ids.length);
    const sent = rows.filter((r) => r.status === 'sent');
    expect(sent.map((r) => r.to_address)).toEqual([server.messages[0]!.to[0]]);
    expect(sent[0]).toMatchObject({ attempts: 1 });
    const rest = rows.filter((r) => r.status !== 'sent');
    expect(rest).toHaveLength(2);
    for (const r of rest) expect(r).toMatchObject({ status: 'queued', attempts: 0, lease_until: null });
  });
});

describeWhen(TEST_DIALECTS.includes('postgres'))('mail outbox, several instances on one PostgreSQL', () => {
  it('two concurrent claims take different rows', async () => {
    const server = await smtp();
    const t = await mailApp('postgres', server.url);
    await t.app.mail.worker!.stop(); // this test claims by hand
    const a = openDatabase(t.config.database);
    const b = openDatabase(t.config.database);
    cleanups.push(() => a.close(), () => b.close());
    for (let i = 0; i < 10; i++) await enqueueMail(a.db, message(`p${i}@example.com`), { messageIdHost: 'x.example' });
    const options = { now: new Date(Date.now() + 1000), leaseMs: 60_000, limit: 5, maxAttempts: 8 };
    const [first, second] = await Promise.all([claimDueMail(a.db, options), claimDueMail(b.db, options)]);
    const ids = [...first, ...second].map((r) => r.id);
    expect(first).toHaveLength(5);
    expect(second).toHaveLength(5);
    expect(new Set(ids).size).toBe(10);
  });

  it('two app instances send every message once', async () => {
    const server = await smtp();
    const one = await mailApp('postgres', server.url, { batchSize: 3 });
    const two = await mailApp('sqlite', server.url, { batchSize: 3 }, { DATABASE_URL: one.databaseUrl });
    expect(two.config.database.dialect).toBe('postgres');
    const messageIds = new Set<string>();
    for (let i = 0; i < 30; i++) messageIds.add((await one.app.mail.enqueue(one.app.database.db, message(`m${i}@example.com`)))!.messageId);
    for (let i = 0; i < 50; i++) {
      const [x, y] = await Promise.all([one.app.mail.worker!.runOnce(), two.app.mail.worker!.runOnce()]);
      if (x === 0 && y === 0) break;
    }
    expect(server.messages).toHaveLength(30);
    expect(new Set(server.messages.map((m) => m.header('message-id')))).toEqual(messageIds);
    const left = await one.app.database.db.selectFrom('mail_outbox').select('id').where('status', '!=', 'sent').execute();
    expect(left).toEqual([]);
  });
});
