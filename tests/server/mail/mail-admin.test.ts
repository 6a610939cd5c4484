import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../../src/server/audit/audit-log.js';
import { findOutboxMessage } from '../../../src/server/mail/outbox.js';
import {
  ADMIN_MAIL_PATH,
  ADMIN_OUTBOX_PATH,
  ADMIN_OUTBOX_RETRY_PATH,
  type MailStatus,
  type OutboxMessageView,
  type OutboxPage,
} from '../../../src/shared/admin/mail-api.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { cleanupsAfterEach, createAdminTestApp, drainOutbox, mailEnv, startTestSmtp, TEST_ADMIN as ADMIN, TEST_MAIL_FROM as MAIL_FROM } from '../../support/admin-app.js';
import type { SmtpAnswer, TestSmtpServer } from '../../support/smtp.js';
import type { TestApp } from '../../support/test-app.js';

/** The admin e-mail API (src/shared/admin/mail-api.ts) against a real SMTP server. */


const cleanups = cleanupsAfterEach();

interface Ctx {
  t: TestApp;
  token: string;
  server: TestSmtpServer | null;
}

async function setUp(dialect: TestDialect, options: { mail?: boolean; answer?: (to: string, index: number) => SmtpAnswer; env?: Record<string, string> } = {}): Promise<Ctx> {
  let server: TestSmtpServer | null = null;
  let env: Record<string, string> = options.env ?? {};
  if (options.mail !== false) {
    server = await startTestSmtp(cleanups, { answer: (mail, index) => options.answer?.(mail.to[0]!, index) });
    env = { ...mailEnv(server.url), ...env };
  }
  const { t, token } = await createAdminTestApp(env, { dialect, mailWorker: { pollIntervalMs: 3_600_000, backoffMs: () => 0 } });
  cleanups.push(() => t.close());
  return { t, token, server };
}

function call(ctx: Ctx, method: 'GET' | 'POST', url: string, options: { body?: unknown; auth?: string | null } = {}) {
  const auth = options.auth === undefined ? `Bearer ${ctx.token}` : options.auth;
  return ctx.t.app.inject({
    method,
    url,
    headers: auth === null ? {} : { authorization: auth },
    ...(options.body === undefined ? {} : { payload: options.body as object }),
  });
}

const message = (to: string) => ({ kind: 'test', to, subject: `Hello ${to}`, text: 'Plain words.\n', html: '<p>Plain words.</p>' });

describe.each(TEST_DIALECTS)('admin e-mail API (%s)', (dialect: TestDialect) => {
  it('401 without a valid token on every route; nothing changed', async () => {
    const ctx = await setUp(dialect, { answer: () => ({ code: 550, message: 'No such user' }) });
    const queued = (await ctx.t.app.mail.enqueue(ctx.t.app.database.db, message('x@example.com')))!;
    await drainOutbox(ctx.t);
    for (const auth of [null, 'Bearer not-a-token', 'Basic YWRtaW46YWRtaW4=']) {
      for (const [method, url, body] of [
        ['GET', ADMIN_MAIL_PATH, undefined],
        ['GET', ADMIN_OUTBOX_PATH, undefined],
        ['POST', ADMIN_OUTBOX_RETRY_PATH, { ids: [queued.id] }],
      ] as const) {
        const res = await call(ctx, method, url, { auth, body });
        expect(res.statusCode, `${method} ${url} with ${auth}`).toBe(401);
        expect(res.json()).toMatchObject({ error: { code: 'unauthorized' } });
        expect(res.headers['cache-control']).toBe('no-store');
      }
    }
    expect(await findOutboxMessage(ctx.t.app.database.db, queued.id)).toMatchObject({ status: 'failed', attempts: 1 });
  });

  it('e-mail off: the settings say so, counts are zero, a retry is refused', async () => {
    const ctx = await setUp(dialect, { mail: false });
    const res = await call(ctx, 'GET', ADMIN_MAIL_PATH);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      enabled: false,
      confirmation: 'off',
      welcome: false,
      from: null,
      counts: { queued: 0, sending: 0, sent: 0, failed: 0 },
    } satisfies MailStatus);
    expect((await call(ctx, 'GET', ADMIN_OUTBOX_PATH)).json()).toEqual({ messages: [], nextCursor: null });
    const retry = await call(ctx, 'POST', ADMIN_OUTBOX_RETRY_PATH, { body: { ids: [randomUUID()] } });
    expect(retry.statusCode).toBe(409);
    expect(retry.json()).toMatchObject({ error: { code: 'mail_disabled' } });
  });

  it('settings and counts by status', async () => {
    const ctx = await setUp(dialect, {
      answer: (to) => (to.startsWith('bounce') ? { code: 550, message: 'No such user' } : undefined),
      env: { SIGNUP_CONFIRMATION: 'required', MAIL_WELCOME: 'on' },
    });
    const db = ctx.t.app.database.db;
    for (const to of ['a@example.com', 'b@example.com', 'c@example.com', 'bounce@example.com']) await ctx.t.app.mail.enqueue(db, message(to));
    await drainOutbox(ctx.t);
    // One due tomorrow (written with its time in one transaction: the worker never sees it due).
    await db.transaction().execute(async (trx) => {
      const { id } = (await ctx.t.app.mail.enqueue(trx, message('later@example.com')))!;
      await trx.updateTable('mail_outbox').set({ next_attempt_at: new Date(Date.now() + 86_400_000).toISOString() }).where('id', '=', id).execute();
    });
    const res = await call(ctx, 'GET', ADMIN_MAIL_PATH);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      enabled: true,
      confirmation: 'required',
      welcome: true,
      from: MAIL_FROM,
      counts: { queued: 1, sending: 0, sent: 3, failed: 1 },
    } satisfies MailStatus);
  });

  it('the outbox page by page, newest first, filtered by status, without bodies', async () => {
    const ctx = await setUp(dialect, { answer: (to) => (to.startsWith('bounce') ? { code: 550, message: '5.1.1 No such user' } : undefined) });
    const db = ctx.t.app.database.db;
    // 5 one at a time, then 25 in one enqueueMany (the same created_at: the id breaks the tie).
    for (let i = 0; i < 5; i++) {
      await ctx.t.app.mail.enqueue(db, message(i === 2 ? 'bounce@example.com' : `single${i}@example.com`));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await drainOutbox(ctx.t);
    await ctx.t.app.mail.enqueueMany(
      db,
      Array.from({ length: 25 }, (_, i) => ({ kind: 'invite', to: `many${i}@example.com`, subject: 'Invite', template: 'unregistered', data: {} })),
    );
    await drainOutbox(ctx.t);

    const all: OutboxMessageView[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await call(ctx, 'GET', `${ADMIN_OUTBOX_PATH}?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      const page = res.json() as OutboxPage;
      expect(page.messages.length).toBeLessThanOrEqual(7);
      all.push(...page.messages);
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(5);
    expect(all).toHaveLength(30);
    expect(new Set(all.map((m) => m.id)).size).toBe(30);
    // Newest first, ties by id.
    const sorted = [...all].sort((a, b) => (a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? 1 : -1) : a.id < b.id ? 1 : -1));
    expect(all.map((m) => m.id)).toEqual(sorted.map((m) => m.id));
    expect(all.slice(0, 25).every((m) => m.kind === 'invite')).toBe(true);
    expect(all[29]!.to).toBe('single0@example.com');
    // No bodies: exactly the declared fields.
    expect(Object.keys(all[29]!).sort()).toEqual(['attempts', 'createdAt', 'id', 'kind', 'lastError', 'nextAttemptAt', 'sentAt', 'status', 'subject', 'to'].sort());
    expect(all[29]).toMatchObject({ kind: 'test', subject: 'Hello single0@example.com', status: 'sent', attempts: 1, lastError: null });
    expect(all[29]!.sentAt).not.toBeNull();

    const failed = (await call(ctx, 'GET', `${ADMIN_OUTBOX_PATH}?status=failed&limit=500`)).json() as OutboxPage;
    expect(failed.nextCursor).toBeNull();
    expect(failed.messages).toHaveLength(26);
    expect(failed.messages.find((m) => m.to === 'bounce@example.com')!.lastError).toMatch(/550 5\.1\.1 No such user/);
    expect(failed.messages.find((m) => m.to === 'many0@example.com')!.lastError).toBe('Not sent: no template "unregistered" is registered');
    const sent = (await call(ctx, 'GET', `${ADMIN_OUTBOX_PATH}?status=sent`)).json() as OutboxPage;
    expect(sent.messages.map((m) => m.to).sort()).toEqual(['single0@example.com', 'single1@example.com', 'single3@example.com', 'single4@example.com']);
    expect((await call(ctx, 'GET', `${ADMIN_OUTBOX_PATH}?status=queued`)).json()).toEqual({ messages: [], nextCursor: null });
  });

  it('bad queries: a clear 400', async () => {
    const ctx = await setUp(dialect);
    const bad = [
      `${ADMIN_OUTBOX_PATH}?status=bounced`,
      `${ADMIN_OUTBOX_PATH}?limit=0`,
      `${ADMIN_OUTBOX_PATH}?limit=501`,
      `${ADMIN_OUTBOX_PATH}?limit=abc`,
      `${ADMIN_OUTBOX_PATH}?cursor=${'x'.repeat(201)}`,
    ];
    for (const url of bad) {
      const res = await call(ctx, 'GET', url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json()).toMatchObject({ error: { code: 'bad_request' } });
    }
    const forged = [
      'not!base64',
      Buffer.from('{"a":1}').toString('base64url'),
      Buffer.from(JSON.stringify(['2030-02-31T00:00:00.000Z', randomUUID()])).toString('base64url'),
      Buffer.from(JSON.stringify(['2030-01-01T00:00:00.000Z', "x' OR 1=1 --"])).toString('base64url'),
      Buffer.from(JSON.stringify(['yesterday', randomUUID()])).toString('base64url'),
    ];
    for (const cursor of forged) {
      const res = await call(ctx, 'GET', `${ADMIN_OUTBOX_PATH}?cursor=${encodeURIComponent(cursor)}`);
      expect(res.statusCode, cursor).toBe(400);
      expect(res.json()).toMatchObject({ error: { code: 'invalid_cursor' } });
    }
    for (const body of [{}, { ids: [] }, { ids: ['not-a-uuid'] }, { ids: 'all' }, [randomUUID()]]) {
      const res = await call(ctx, 'POST', ADMIN_OUTBOX_RETRY_PATH, { body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ error: { code: 'bad_request' } });
    }
  });

  it('retry: a failed message queued again (attempts reset, the error kept until sent), then delivered; others ignored; audit-logged', async () => {
    let refuse = true;
    const ctx = await setUp(dialect, { answer: (to) => (refuse && to === 'flaky@example.com' ? { code: 550, message: 'Mailbox full' } : undefined) });
    const db = ctx.t.app.database.db;
    const failed = (await ctx.t.app.mail.enqueue(db, message('flaky@example.com')))!;
    const sent = (await ctx.t.app.mail.enqueue(db, message('fine@example.com')))!;
    await drainOutbox(ctx.t);
    expect(await findOutboxMessage(db, failed.id)).toMatchObject({ status: 'failed', attempts: 1 });
    expect(ctx.server!.messages.map((m) => m.to[0])).toEqual(['fine@example.com']);

    refuse = false;
    const res = await call(ctx, 'POST', ADMIN_OUTBOX_RETRY_PATH, { body: { ids: [failed.id, sent.id, randomUUID(), failed.id.toUpperCase()] } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ retried: 1 });
    const [entry] = await listAudit(db, 1);
    expect(entry).toMatchObject({ action: 'mail_retry', actorEmail: ADMIN.email, detail: { count: 1, requested: 4, ids: [failed.id] } });

    await drainOutbox(ctx.t);
    expect(ctx.server!.messages.map((m) => m.to[0])).toEqual(['fine@example.com', 'flaky@example.com']);
    const flaky = ctx.server!.messages[1]!;
    expect(flaky.header('message-id')).toBe(failed.messageId);
    expect(await findOutboxMessage(db, failed.id)).toMatchObject({ status: 'sent', attempts: 1, lastError: null });
    expect(await findOutboxMessage(db, sent.id)).toMatchObject({ status: 'sent', attempts: 1 });

    // A second retry of the now-sent message changes nothing.
    expect((await call(ctx, 'POST', ADMIN_OUTBOX_RETRY_PATH, { body: { ids: [failed.id] } })).json()).toEqual({ retried: 0 });
    await drainOutbox(ctx.t);
    expect(ctx.server!.messages).toHaveLength(2);
  });

  it('retry keeps the last error while the message waits', async () => {
    const ctx = await setUp(dialect, { answer: () => ({ code: 550, message: 'Mailbox full' }) });
    const db = ctx.t.app.database.db;
    const failed = (await ctx.t.app.mail.enqueue(db, message('full@example.com')))!;
    await drainOutbox(ctx.t);
    // The worker is stopped, so the row stays as the retry left it.
    await ctx.t.app.mail.worker!.stop();
    expect((await call(ctx, 'POST', ADMIN_OUTBOX_RETRY_PATH, { body: { ids: [failed.id] } })).json()).toEqual({ retried: 1 });
    const page = (await call(ctx, 'GET', `${ADMIN_OUTBOX_PATH}?status=queued`)).json() as OutboxPage;
    expect(page.messages).toHaveLength(1);
    expect(page.messages[0]).toMatchObject({ id: failed.id, status: 'queued', attempts: 0 });
    expect(page.messages[0]!.lastError).toMatch(/550 Mailbox full/);
    expect(Math.abs(Date.parse(page.messages[0]!.nextAttemptAt) - Date.now())).toBeLessThan(60_000);
  });
});
