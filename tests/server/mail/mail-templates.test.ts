import { describe, expect, it } from 'vitest';
import { enqueueMail, findOutboxMessage, purgeExpiredMail, type TemplatedMessage, type TemplateRenderer } from '../../../src/server/mail/outbox.js';
import type { MailWorkerOverrides } from '../../../src/server/mail/index.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { mailParts } from '../../support/mime.js';
import { cleanupsAfterEach, createMailTestApp, drainOutbox, startTestSmtp, TEST_MAIL_FROM as MAIL_FROM } from '../../support/admin-app.js';
import type { TestSmtpServer } from '../../support/smtp.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/** Templated messages (rendered by the worker at send time), enqueueMany and the outbox retention. */

const cleanups = cleanupsAfterEach();
const smtp = (options: Parameters<typeof startTestSmtp>[1] = {}): Promise<TestSmtpServer> => startTestSmtp(cleanups, options);
const mailApp = (dialect: TestDialect, smtpUrl: string, worker: MailWorkerOverrides = {}, env: Record<string, string> = {}): Promise<TestApp> =>
  createMailTestApp(cleanups, dialect, smtpUrl, worker, env);
const drain = drainOutbox;

const templated = (to: string, data: Record<string, unknown> = {}, template = 'greeting'): TemplatedMessage => ({
  kind: 'greeting',
  to,
  subject: 'Stored subject',
  template,
  data,
});

/** A renderer that records its calls and greets by the data's name. */
function greetingRenderer(calls: Array<{ data: Record<string, unknown>; messageId: string; to: string }> = []): TemplateRenderer {
  return async (data, message) => {
    calls.push({ data, ...message });
    if (data.skip) return { skip: String(data.skip) };
    if (data.explode) throw new Error('cannot read property of undefined');
    return {
      subject: `Hello ${String(data.name)}`,
      text: `Hello ${String(data.name)}, this is ${message.to}.\n`,
      html: `<p>Hello <b>${String(data.name)}</b></p>`,
      headers: { 'List-Unsubscribe': '<https://waitlist.example.com/unsubscribe?token=t>', 'X-Rendered': 'at send time' },
    };
  };
}

describe.each(TEST_DIALECTS)('templated outbox messages (%s)', (dialect: TestDialect) => {
  it('stores the template and its data (no body), renders at send time, adds the rendered headers', async () => {
    const server = await smtp();
    const t = await mailApp(dialect, server.url);
    const calls: Parameters<typeof greetingRenderer>[0] = [];
    t.app.mail.registerTemplate('greeting', greetingRenderer(calls));
    const db = t.app.database.db;

    // One transaction, so the worker (woken by the enqueue) sees the row only after it is checked.
    const queued = await db.transaction().execute(async (trx) => {
      const q = (await t.app.mail.enqueue(trx, templated('ada@example.com', { name: 'Ada' })))!;
      const row = await trx.selectFrom('mail_outbox').selectAll().where('id', '=', q.id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ kind: 'greeting', subject: 'Stored subject', text_body: '', html_body: null, template: 'greeting', status: 'queued' });
      expect(JSON.parse(row.template_data!)).toEqual({ name: 'Ada' });
      // Nothing is rendered when the message is queued. (Checked here, before the commit: once the
      // row is visible, the worker the enqueue woke may render it before the next line runs.)
      expect(calls).toEqual([]);
      return q;
    });
    await drain(t);

    expect(calls).toEqual([{ data: { name: 'Ada' }, messageId: queued.messageId, to: 'ada@example.com' }]);
    expect(server.messages).toHaveLength(1);
    const mail = server.messages[0]!;
    expect(mail.header('subject')).toBe('Hello Ada');
    expect(mail.header('from')).toBe(MAIL_FROM);
    expect(mail.header('message-id')).toBe(queued.messageId);
    expect(mail.header('list-unsubscribe')).toBe('<https://waitlist.example.com/unsubscribe?token=t>');
    expect(mail.header('x-rendered')).toBe('at send time');
    const parts = mailParts(mail);
    expect(parts.text).toBe('Hello Ada, this is ada@example.com.\n');
    expect(parts.html).toContain('<b>Ada</b>');
    expect(await findOutboxMessage(db, queued.id)).toMatchObject({ status: 'sent', attempts: 1, lastError: null });
  });

  it('{skip}: failed with the reason, the SMTP server never contacted', async () => {
    const server = await smtp();
    const t = await mailApp(dialect, server.url);
    t.app.mail.registerTemplate('greeting', greetingRenderer());
    const queued = (await t.app.mail.enqueue(t.app.database.db, templated('gone@example.com', { skip: 'the recipient unsubscribed' })))!;
    await drain(t);
    expect(await findOutboxMessage(t.app.database.db, queued.id)).toMatchObject({ status: 'failed', lastError: 'Not sent: the recipient unsubscribed' });
    expect(server.attempts).toBe(0);
  });

  it('an unknown template or a renderer that throws: failed at once with a clear reason, never retried', async () => {
    const server = await smtp();
    const t = await mailApp(dialect, server.url, { backoffMs: () => 0 });
    t.app.mail.registerTemplate('greeting', greetingRenderer());
    const db = t.app.database.db;
    const unknown = (await t.app.mail.enqueue(db, templated('a@example.com', {}, 'no-such-template')))!;
    const broken = (await t.app.mail.enqueue(db, templated('b@example.com', { explode: true })))!;
    await drain(t);
    expect(await findOutboxMessage(db, unknown.id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: 'Not sent: no template "no-such-template" is registered',
    });
    expect(await findOutboxMessage(db, broken.id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: 'Not sent: template "greeting" failed to render: cannot read property of undefined',
    });
    expect(server.attempts).toBe(0);
  });

  it('a template name is registered once', async () => {
    const server = await smtp();
    const t = await mailApp(dialect, server.url);
    t.app.mail.registerTemplate('greeting', greetingRenderer());
    expect(() => t.app.mail.registerTemplate('greeting', greetingRenderer())).toThrow(/registered already/);
  });

  it('enqueueMany: 10,000 messages in one transaction, stored once each; a sample of them delivered once', async () => {
    const server = await smtp();
    const t = await mailApp(dialect, server.url, { batchSize: 100 });
    t.app.mail.registerTemplate('greeting', greetingRenderer());
    const db = t.app.database.db;
    const count = 10_000;
    const messages = Array.from({ length: count }, (_, i) => templated(`person${i}@example.com`, { name: `Person ${i}` }));

    // A failing transaction writes nothing.
    await expect(
      db.transaction().execute(async (trx) => {
        await t.app.mail.enqueueMany(trx, messages.slice(0, 10));
        throw new Error('the invite failed');
      }),
    ).rejects.toThrow('the invite failed');
    expect(await db.selectFrom('mail_outbox').select('id').execute()).toEqual([]);

    // Sending 10,000 through SMTP one by one would take minutes here; every 40th message (250,
    // spread over both insert chunks) is sent, the rest are set aside as if already sent. Set aside
    // in the enqueue's own transaction: the enqueue wakes the worker, which must never see them queued.
    const sample = new Set(Array.from({ length: count / 40 }, (_, i) => `person${i * 40}@example.com`));
    const enqueued = await db.transaction().execute(async (trx) => {
      const n = await t.app.mail.enqueueMany(trx, messages);
      const statuses = await trx.selectFrom('mail_outbox').select('status').distinct().execute();
      expect(statuses).toEqual([{ status: 'queued' }]);
      await trx.updateTable('mail_outbox').set({ status: 'sent' }).where('to_address', 'not in', [...sample]).execute();
      return n;
    });
    expect(enqueued).toBe(count);
    const stored = await db.selectFrom('mail_outbox').select(['to_address', 'template', 'template_data', 'subject', 'status', 'text_body']).execute();
    expect(stored).toHaveLength(count);
    expect(stored.find((r) => r.to_address === 'person1234@example.com')).toMatchObject({
      template: 'greeting',
      template_data: JSON.stringify({ name: 'Person 1234' }),
      subject: 'Stored subject',
      status: 'sent',
      text_body: '',
    });

    // Passes of our own join the worker's (one at a time: a worker's passes never overlap) until
    // nothing is left.
    while ((await t.app.mail.worker!.runOnce()) > 0);

    expect(server.messages).toHaveLength(sample.size);
    expect(server.attempts).toBe(sample.size);
    expect(new Set(server.messages.map((m) => m.header('message-id'))).size).toBe(sample.size);
    expect(new Set(server.messages.map((m) => m.to[0]))).toEqual(sample);
    const person = server.messages.find((m) => m.to[0] === 'person9960@example.com')!;
    expect(person.header('subject')).toBe('Hello Person 9960');
  }, 180_000);

  it('without SMTP_URL: enqueueMany writes nothing, registerTemplate is harmless', async () => {
    const t = await createTestApp({}, { dialect });
    cleanups.push(() => t.close());
    t.app.mail.registerTemplate('greeting', greetingRenderer());
    expect(await t.app.mail.enqueueMany(t.app.database.db, [templated('a@example.com')])).toBe(0);
    expect(await t.app.mail.enqueue(t.app.database.db, templated('a@example.com'))).toBeNull();
    expect(await t.app.database.db.selectFrom('mail_outbox').select('id').execute()).toEqual([]);
  });
});

describe.each(TEST_DIALECTS)('outbox retention (%s)', (dialect: TestDialect) => {
  const DAY = 24 * 60 * 60 * 1000;
  const message = (to: string) => ({ kind: 'test', to, subject: 'Hello', text: 'Plain words.\n' });

  /** Writes rows as they would stand after their history, `daysAgo` before now. */
  async function seed(t: TestApp, now: number) {
    const db = t.app.database.db;
    const at = (days: number) => new Date(now - days * DAY).toISOString();
    const ids: Record<string, string> = {};
    // One transaction: the worker never sees these rows queued.
    await db.transaction().execute(async (trx) => {
      const add = async (name: string, days: number, set: Record<string, unknown>) => {
        const { id } = await enqueueMail(trx, message(`${name}@example.com`), { messageIdHost: 'x.example', now: new Date(now - days * DAY) });
        await trx.updateTable('mail_outbox').set(set).where('id', '=', id).execute();
        ids[name] = id;
      };
      await add('sent-old', 40, { status: 'sent', sent_at: at(40) });
      // Queued 40 days ago, sent after retries 10 days ago: kept (counted from its last activity).
      await add('sent-late', 40, { status: 'sent', next_attempt_at: at(11), sent_at: at(10) });
      await add('sent-recent', 5, { status: 'sent', sent_at: at(5) });
      await add('failed-old', 35, { status: 'failed', last_error: '550 No such user' });
      // Failed long ago, retried by the admin yesterday and failed again: kept.
      await add('failed-retried', 60, { status: 'failed', next_attempt_at: at(1), last_error: '550' });
      // Never touched, whatever their age: still to be sent.
      await add('queued-old', 90, { status: 'queued', next_attempt_at: at(90) });
      await add('sending-old', 90, { status: 'sending', lease_until: at(89) });
    });
    return ids;
  }

  it('deletes sent and failed messages older than MAIL_RETENTION_DAYS, keeps the rest', async () => {
    const t = await createTestApp({}, { dialect });
    cleanups.push(() => t.close());
    const now = Date.now();
    const ids = await seed(t, now);
    expect(await purgeExpiredMail(t.app.database.db, 30, new Date(now))).toBe(2);
    const left = await t.app.database.db.selectFrom('mail_outbox').select('to_address').orderBy('to_address').execute();
    expect(left.map((r) => r.to_address)).toEqual(
      ['failed-retried', 'queued-old', 'sending-old', 'sent-late', 'sent-recent'].map((n) => `${n}@example.com`),
    );
    expect(await findOutboxMessage(t.app.database.db, ids['sent-old']!)).toBeUndefined();
    // A shorter retention takes more; nothing twice.
    expect(await purgeExpiredMail(t.app.database.db, 3, new Date(now))).toBe(2);
    expect(await purgeExpiredMail(t.app.database.db, 3, new Date(now))).toBe(0);
  });

  it('runs when the server starts (e-mail on or off)', async () => {
    const first = await createTestApp({}, { dialect });
    cleanups.push(() => first.close());
    await seed(first, Date.now());
    const server = await smtp();
    // A second instance on the same database, started now with a 30-day retention.
    const second = await mailApp(dialect, server.url, {}, { DATABASE_URL: first.databaseUrl, MAIL_RETENTION_DAYS: '30' });
    const left = await second.app.database.db.selectFrom('mail_outbox').select('to_address').execute();
    expect(left.map((r) => r.to_address).sort()).toEqual(
      ['failed-retried', 'queued-old', 'sending-old', 'sent-late', 'sent-recent'].map((n) => `${n}@example.com`),
    );
    // And without SMTP_URL too: the rows are personal data either way.
    const third = await createTestApp({ DATABASE_URL: first.databaseUrl, MAIL_RETENTION_DAYS: '3' }, { dialect });
    cleanups.push(() => third.close());
    const rest = await third.app.database.db.selectFrom('mail_outbox').select('to_address').execute();
    expect(rest.map((r) => r.to_address).sort()).toEqual(['failed-retried', 'queued-old', 'sending-old'].map((n) => `${n}@example.com`));
  });
});
