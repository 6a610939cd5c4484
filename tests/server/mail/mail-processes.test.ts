import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../../src/server/db/database.js';
import { migrateToLatest } from '../../../src/server/db/migrate.js';
import { enqueueMail } from '../../../src/server/mail/outbox.js';
import { createScratchPostgres, describeWhen, type ScratchPostgres } from '../../support/databases.js';
import { startInstance, stopInstance, waitHealthy, type Instance } from '../../support/server-process.js';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp.js';

/**
 * The outbox across real server processes: a SIGKILL while messages are queued loses none and
 * repeats only what SMTP had already acknowledged; two processes on one PostgreSQL send each once.
 */

const PUBLIC_URL = 'https://waitlist.example';

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function mailEnv(smtp: TestSmtpServer, databaseUrl: string, dir: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Waitlist <hello@waitlist.example>',
    PUBLIC_URL,
    AUTH_SECRET_KEY_FILE: path.join(dir, 'secret.key'),
    WEB_ROOT: path.join(dir, 'no-web-build'),
  };
}

async function enqueueMany(handle: DatabaseHandle, count: number, tag: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const { messageId } = await enqueueMail(
      handle.db,
      { kind: 'test', to: `person-${tag}-${i}@example.com`, subject: `Message ${i}`, text: `Body ${i}` },
      { messageIdHost: 'waitlist.example' },
    );
    ids.push(messageId);
  }
  return ids;
}

const receivedIds = (smtp: TestSmtpServer) => smtp.messages.map((m) => m.header('message-id') ?? '');

describe('the outbox across server processes', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('SIGKILL while messages are queued: after a restart every message is delivered, and only ones SMTP had acknowledged twice', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mail-kill-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'waitlist.db');
    // Each message is held 40 ms before SMTP accepts it, so the kill lands mid-batch.
    const smtp = await startSmtpServer({ answer: () => new Promise((resolve) => setTimeout(() => resolve(undefined), 40)) });
    cleanups.push(() => smtp.close());

    const handle = openDatabase({ dialect: 'sqlite', filename: file });
    cleanups.push(() => handle.close());
    await migrateToLatest(handle.db);
    const queued = await enqueueMany(handle, 60, 'kill');

    const first = startInstance('first', mailEnv(smtp, `file:${file}`, dir));
    cleanups.push(() => stopInstance(first));
    await waitHealthy(first, 60_000);
    await until(() => smtp.messages.length >= 8, 30_000, 'the first messages');
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    // A message the dead process had fully transmitted is still accepted once its 40 ms hold ends
    // (the sender never saw that answer): wait for those before noting what SMTP received.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const acknowledgedBeforeKill = new Set(receivedIds(smtp));

    // Rows the dead process held: `sending`, leased. Their lease is made to run out now rather
    // than in five minutes (the worker's lease), as if the restart came later.
    const inFlight = await handle.db.selectFrom('mail_outbox').select(['message_id']).where('status', '=', 'sending').execute();
    const sentRows = await handle.db.selectFrom('mail_outbox').select(['message_id']).where('status', '=', 'sent').execute();
    expect(inFlight.length + sentRows.length).toBeGreaterThan(0);
    expect(queued.length - sentRows.length).toBeGreaterThan(0); // the kill left work undone
    await handle.db.updateTable('mail_outbox').set({ lease_until: new Date(Date.now() - 1000).toISOString() }).where('status', '=', 'sending').execute();

    const second = startInstance('second', mailEnv(smtp, `file:${file}`, dir));
    cleanups.push(() => stopInstance(second));
    await waitHealthy(second, 60_000);
    await until(() => new Set(receivedIds(smtp)).size === queued.length, 60_000, 'every message');
    await until(
      async () => (await handle.db.selectFrom('mail_outbox').select('id').where('status', '!=', 'sent').execute()).length === 0,
      10_000,
      'every row marked sent',
    );

    const received = receivedIds(smtp);
    expect(new Set(received)).toEqual(new Set(queued));
    // A message arrives twice only when SMTP acknowledged it before the kill while its row was
    // still `sending` (at-least-once delivery; the Message-ID lets the receiver drop the copy).
    const counts = new Map<string, number>();
    for (const id of received) counts.set(id, (counts.get(id) ?? 0) + 1);
    const inFlightIds = new Set(inFlight.map((r) => r.message_id));
    for (const [id, count] of counts) {
      expect(count).toBeLessThanOrEqual(2);
      if (count === 2) {
        expect(acknowledgedBeforeKill.has(id)).toBe(true);
        expect(inFlightIds.has(id)).toBe(true);
      }
    }
    // Rows already marked sent before the kill were never sent again.
    for (const { message_id } of sentRows) expect(counts.get(message_id)).toBe(1);
  }, 180_000);

  describeWhen(Boolean(process.env.TEST_DATABASE_URL))('on one PostgreSQL', () => {
    it('two server processes send every message exactly once', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mail-two-'));
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      const scratch: ScratchPostgres = await createScratchPostgres();
      cleanups.push(() => scratch.drop());
      const smtp = await startSmtpServer({ answer: () => new Promise((resolve) => setTimeout(() => resolve(undefined), 5)) });
      cleanups.push(() => smtp.close());
      const handle = openDatabase({ dialect: 'postgres', connectionString: scratch.url });
      cleanups.push(() => handle.close());
      await migrateToLatest(handle.db);

      const env = mailEnv(smtp, scratch.url, dir);
      const a: Instance = startInstance('a', env);
      const b: Instance = startInstance('b', env);
      cleanups.push(() => stopInstance(a), () => stopInstance(b));
      await Promise.all([waitHealthy(a, 60_000), waitHealthy(b, 60_000)]);

      const queued = await enqueueMany(handle, 120, 'two');
      await until(() => smtp.messages.length >= queued.length, 60_000, 'every message');
      await until(
        async () => (await handle.db.selectFrom('mail_outbox').select('id').where('status', '!=', 'sent').execute()).length === 0,
        10_000,
        'every row marked sent',
      );
      // Give a wrongly duplicated send time to show up before counting.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const received = receivedIds(smtp);
      expect(received.length).toBe(queued.length);
      expect(new Set(received)).toEqual(new Set(queued));
    }, 180_000);
  });
});
