import { afterEach, describe, expect, it } from 'vitest';
import { claimDueMail, enqueueMail, findOutboxMessage, markFailed, markRetry, markSent, renewLease } from '../../../src/server/mail/outbox.js';
import { createMailTransport } from '../../../src/server/mail/transport.js';
import { createMailWorker, type MailWorkerLog } from '../../../src/server/mail/worker.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { startSmtpServer, type SmtpAnswer } from '../../support/smtp.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Security review, finding 10: only the worker holding a row's lease records its outcome. A send
 * that outlives its lease (another worker has claimed the row since) must not mark the row.
 */

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const T0 = Date.parse('2030-01-01T00:00:00Z');
const LEASE_MS = 60_000;
const message = { kind: 'test', to: 'you@example.com', subject: 'Hello', text: 'Plain words.\n' };

/** A promise and its resolve, for holding an SMTP answer. */
function gate<T = void>() {
  let open!: (value: T) => void;
  const opened = new Promise<T>((resolve) => (open = resolve));
  return { open, opened };
}

function recordingLog(): MailWorkerLog & { warnings: Array<{ obj: object; msg: string }> } {
  const warnings: Array<{ obj: object; msg: string }> = [];
  return { warnings, info: () => undefined, error: () => undefined, warn: (obj, msg) => void warnings.push({ obj, msg }) };
}

describe.each(TEST_DIALECTS)('outbox lease (%s)', (dialect: TestDialect) => {
  async function app(): Promise<TestApp> {
    // E-mail off in the app itself: the test runs its own two workers on its database.
    const t = await createTestApp({}, { dialect });
    cleanups.push(() => t.close());
    return t;
  }

  it('a send held past its lease: the late worker’s result is discarded, the lease holder marks the row once', async () => {
    const t = await app();
    const db = t.app.database.db;
    const aInFlight = gate();
    const bInFlight = gate();
    const aAnswer = gate<SmtpAnswer>();
    const bAnswer = gate<SmtpAnswer>();
    const server = await startSmtpServer({
      answer: async (_mail, index) => {
        if (index === 0) {
          aInFlight.open();
          return aAnswer.opened;
        }
        bInFlight.open();
        return bAnswer.opened;
      },
    });
    cleanups.push(() => server.close());

    const { id } = await enqueueMail(db, message, { messageIdHost: 'waitlist.example.com', now: new Date(T0) });
    const worker = (at: number, log: MailWorkerLog) =>
      createMailWorker({
        db,
        transport: createMailTransport({ smtpUrl: server.url, dkim: null }),
        from: 'Product <hello@example.com>',
        maxAttempts: 5,
        log,
        leaseMs: LEASE_MS,
        pollIntervalMs: 3_600_000,
        now: () => new Date(at),
      });
    const logA = recordingLog();
    const logB = recordingLog();
    const a = worker(T0 + 1_000, logA);
    // B runs after A's lease has run out: it takes the row over.
    const b = worker(T0 + 2 * LEASE_MS, logB);
    cleanups.push(() => a.stop(), () => b.stop());
    // Should an assertion fail, the held answers are let go first, so the workers can stop.
    cleanups.push(async () => {
      aAnswer.open(undefined);
      bAnswer.open(undefined);
    });

    const passA = a.runOnce();
    await aInFlight.opened;
    const passB = b.runOnce();
    await bInFlight.opened;
    const claimedByB = await findOutboxMessage(db, id);
    expect(claimedByB).toMatchObject({ status: 'sending', attempts: 2 });

    // A's send ends (refused for good) while B holds the lease: nothing of it reaches the row.
    aAnswer.open({ code: 550, message: 'mailbox unavailable' });
    expect(await passA).toBe(1);
    expect(await findOutboxMessage(db, id)).toEqual(claimedByB);
    expect(logA.warnings).toEqual([
      { obj: expect.objectContaining({ id, attempts: 1, outcome: 'failed' }), msg: expect.stringMatching(/lease ran out.*discarded/) },
    ]);

    // B's send goes through: B, which holds the lease, marks the row sent.
    bAnswer.open(undefined);
    expect(await passB).toBe(1);
    expect(await findOutboxMessage(db, id)).toMatchObject({
      status: 'sent',
      attempts: 2,
      lastError: null,
      sentAt: new Date(T0 + 2 * LEASE_MS).toISOString(),
    });
    expect(logB.warnings).toEqual([]);
    expect(server.attempts).toBe(2);
  });

  it('a claim that lost its lease can neither renew nor mark the row; the new holder can', async () => {
    const t = await app();
    const db = t.app.database.db;
    const { id } = await enqueueMail(db, message, { messageIdHost: 'waitlist.example.com', now: new Date(T0) });
    const options = { leaseMs: LEASE_MS, limit: 5, maxAttempts: 8 };
    const [late] = await claimDueMail(db, { ...options, now: new Date(T0 + 1_000) });
    const [holder] = await claimDueMail(db, { ...options, now: new Date(T0 + 2 * LEASE_MS) });
    expect(late!.id).toBe(id);
    expect(holder!.id).toBe(id);
    expect(holder!.leaseToken).not.toBe(late!.leaseToken);

    expect(await renewLease(db, late!, new Date(T0 + 10 * LEASE_MS))).toBe(false);
    expect(await markSent(db, late!, new Date(T0 + 3 * LEASE_MS))).toBe(false);
    expect(await markRetry(db, late!, new Date(T0 + 4 * LEASE_MS), 'late retry')).toBe(false);
    expect(await markFailed(db, late!, 'late failure')).toBe(false);
    expect(await findOutboxMessage(db, id)).toMatchObject({ status: 'sending', attempts: 2, lastError: null, sentAt: null });

    expect(await markRetry(db, holder!, new Date(T0 + 5 * LEASE_MS), 'temporary')).toBe(true);
    expect(await findOutboxMessage(db, id)).toMatchObject({ status: 'queued', attempts: 2, lastError: 'temporary' });
    // Once settled, the holder's claim is spent too.
    expect(await markSent(db, holder!, new Date(T0 + 6 * LEASE_MS))).toBe(false);
  });
});
