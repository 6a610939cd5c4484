import type { Kysely } from 'kysely';
import { recordAudit } from '../audit/audit-log.js';
import type { Database } from '../db/schema.js';
import type { MailCapper } from './caps.js';
import {
  claimDueMail,
  failExhaustedLeases,
  markDeferred,
  markFailed,
  markRetry,
  markSent,
  onEnqueue,
  redactIfSettled,
  releaseClaimed,
  renewLease,
  type OutboxRow,
  type RenderedMail,
  type SendRecorder,
  type TemplateRenderer,
} from './outbox.js';
import { classifySendError, describeSendError, type MailTransport } from './transport.js';
import { createPassRunner } from '../runtime/pass-runner.js';

/** Delay before attempt `attempts + 1`: 30 s × 2^(attempts − 1), at most an hour, with jitter (half to all of it). */
export function defaultBackoffMs(attempts: number, random: () => number = Math.random): number {
  const full = Math.min(3_600_000, 30_000 * 2 ** Math.max(0, attempts - 1));
  return Math.round(full * (0.5 + random() * 0.5));
}

export interface MailWorkerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface MailWorkerOptions {
  db: Kysely<Database>;
  transport: MailTransport;
  /** The From header (MAIL_FROM). */
  from: string;
  maxAttempts: number;
  log: MailWorkerLog;
  /** Time between polls when nothing wakes the worker. */
  pollIntervalMs?: number;
  /** How long a claim lasts; longer than any send can take (nodemailer gives up after its socket timeout). */
  leaseMs?: number;
  /** Rows claimed per pass (then sent one after another). */
  batchSize?: number;
  /** The clock (tests move it instead of waiting). */
  now?: () => Date;
  /** Delay before the next attempt after `attempts` failed ones. */
  backoffMs?: (attempts: number) => number;
  /** The registered templates (app.mail.registerTemplate), looked up when a templated row is sent. */
  templates?: ReadonlyMap<string, TemplateRenderer>;
  /**
   * Asked before a message's first attempt: why its recipient cannot receive mail (app.emailDomains:
   * the domain does not exist or has a null MX), and the message is then not sent but marked so.
   */
  recipientCheck?: (to: string) => Promise<string | null>;
  /** Who records each send (app.mail.recordSends), asked at send time. */
  recorders?: readonly SendRecorder[];
  /** The caps on capped messages (mail/caps.ts), checked just before each is sent; none when absent. */
  caps?: MailCapper;
}

export interface MailWorker {
  /** Polls every pollIntervalMs and whenever this process enqueues a message. */
  start(): void;
  /** One pass now (after any pass under way): claims due rows and sends them; resolves to how many were claimed. */
  runOnce(): Promise<number>;
  /** Stops polling, lets the message being sent finish, puts the rest of its claim back in the queue. */
  stop(): Promise<void>;
}

/**
 * The outbox's sender, inside the server process (started by buildApp when SMTP_URL is set).
 * Passes never overlap within one worker; several workers (instances) share the table safely
 * because each pass claims its rows with a lease first (outbox.ts).
 */
export function createMailWorker(options: MailWorkerOptions): MailWorker {
  const { db, transport, from, maxAttempts, log } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 5_000;
  const leaseMs = options.leaseMs ?? 5 * 60_000;
  const batchSize = options.batchSize ?? 10;
  const now = options.now ?? (() => new Date());
  const backoffMs = options.backoffMs ?? ((attempts: number) => defaultBackoffMs(attempts));
  const templates = options.templates ?? new Map<string, TemplateRenderer>();
  const recorders = options.recorders ?? [];

  let unsubscribe: (() => void) | null = null;

  /**
   * A templated row's subject, bodies and headers, made now (docs/decisions/008), or the reason it
   * must not be sent: the renderer said skip (the person unsubscribed…), or there is no renderer or
   * it threw. Those last two are bugs, not outages: the row fails at once instead of retrying.
   */
  async function render(row: OutboxRow & { template: string }): Promise<RenderedMail | { notSent: string }> {
    const renderer = templates.get(row.template);
    if (!renderer) {
      const reason = `Not sent: no template "${row.template}" is registered`;
      log.error({ id: row.id, kind: row.kind, template: row.template }, 'mail: unknown template');
      return { notSent: reason };
    }
    let rendered: RenderedMail | { skip: string };
    try {
      rendered = await renderer(row.templateData ?? {}, { messageId: row.messageId, to: row.to });
    } catch (err) {
      log.error({ err, id: row.id, kind: row.kind, template: row.template }, 'mail: template failed to render');
      return { notSent: `Not sent: template "${row.template}" failed to render: ${describeSendError(err)}`.slice(0, 1000) };
    }
    if ('skip' in rendered) {
      log.info({ id: row.id, kind: row.kind, reason: rendered.skip }, 'mail: not sent');
      return { notSent: `Not sent: ${rendered.skip}` };
    }
    return rendered;
  }

  /**
   * The send outlived its lease and another worker has claimed the row since: that worker's claim
   * decides the row, so this outcome is only logged.
   */
  function leaseLost(row: OutboxRow, outcome: string): void {
    log.warn({ id: row.id, kind: row.kind, attempts: row.attempts, outcome }, 'mail: the lease ran out during the send and another worker holds the row; this outcome is discarded');
  }

  /** What the recorders write with the row marked sent; null (and the row queued again) when one failed. */
  async function prepareRecords(row: OutboxRow): Promise<Array<(trx: Kysely<Database>, sentAt: Date) => Promise<void>> | null> {
    const writes = [];
    try {
      for (const recorder of recorders) {
        const write = await recorder({ messageId: row.messageId, kind: row.kind, template: row.template, data: row.templateData });
        if (write) writes.push(write);
      }
    } catch (err) {
      const error = `Not sent yet: the send could not be recorded: ${describeSendError(err)}`.slice(0, 1000);
      log.error({ err, id: row.id, kind: row.kind }, 'mail: the send could not be recorded; retrying later');
      if (!(await markRetry(db, row, new Date(now().getTime() + backoffMs(row.attempts)), error))) leaseLost(row, 'not recorded');
      return null;
    }
    return writes;
  }

  /** Marks the row sent with what the recorders write; if their writes fail, the row is still marked sent (it went). */
  async function settleSent(row: OutboxRow, writes: Array<(trx: Kysely<Database>, sentAt: Date) => Promise<void>>): Promise<boolean> {
    const sentAt = now();
    if (writes.length === 0) return markSent(db, row, sentAt);
    try {
      return await db.transaction().execute(async (trx) => {
        if (!(await markSent(trx, row, sentAt))) return false;
        for (const write of writes) await write(trx, sentAt);
        return true;
      });
    } catch (err) {
      log.error({ err, id: row.id, kind: row.kind }, 'mail: sent, but the send record could not be written');
      return markSent(db, row, sentAt);
    }
  }

  /**
   * The caps' decision on a capped message (mail/caps.ts): true to send it; else it was held back
   * for good (failed with the cap as its reason, the first one of a cap's window audited, without
   * the address) or deferred (queued again for when the hourly budget frees).
   */
  async function withinCaps(row: OutboxRow, caps: MailCapper): Promise<boolean> {
    const decision = await caps(row);
    if ('send' in decision) return true;
    if ('deferred' in decision) {
      if (await markDeferred(db, row, decision.deferred, decision.reason)) log.info({ id: row.id, kind: row.kind, until: decision.deferred }, 'mail: deferred by the hourly budget');
      else leaseLost(row, 'deferred');
      return false;
    }
    if (!(await markFailed(db, row, decision.reason))) {
      leaseLost(row, 'held back');
      return false;
    }
    log.warn({ id: row.id, kind: row.kind, cap: decision.held }, 'mail: held back by a cap');
    if (decision.first) {
      await recordAudit(db, { action: 'mail_capped', actorEmail: null, actorId: null, ip: null, detail: { cap: decision.held, kind: row.kind, message_id: row.id } });
    }
    return false;
  }

  async function send(row: OutboxRow): Promise<void> {
    const dead = row.attempts === 1 && options.recipientCheck ? await options.recipientCheck(row.to) : null;
    if (dead) {
      log.info({ id: row.id, kind: row.kind, reason: dead }, 'mail: not sent');
      if (!(await markFailed(db, row, `Not sent: ${dead}`))) leaseLost(row, 'not sent');
      return;
    }
    let mail: Pick<RenderedMail, 'subject' | 'text' | 'html' | 'headers'> = row;
    if (row.template !== null) {
      const rendered = await render({ ...row, template: row.template });
      if ('notSent' in rendered) {
        if (!(await markFailed(db, row, rendered.notSent))) leaseLost(row, 'not sent');
        return;
      }
      // The stored headers (none for a template) first; the render's own may add to them.
      mail = { ...rendered, headers: { ...row.headers, ...rendered.headers } };
      if (options.caps && !(await withinCaps(row, options.caps))) return;
    }
    const records = await prepareRecords(row);
    if (!records) return;
    try {
      await transport.sendMail({
        from,
        to: row.to,
        subject: mail.subject,
        text: mail.text,
        ...(mail.html === null ? {} : { html: mail.html }),
        headers: mail.headers,
        messageId: row.messageId,
      });
    } catch (err) {
      const error = describeSendError(err);
      if (classifySendError(err) === 'permanent' || row.attempts >= maxAttempts) {
        if (await markFailed(db, row, error)) log.warn({ id: row.id, kind: row.kind, attempts: row.attempts, error }, 'mail: failed, not retrying');
        else leaseLost(row, 'failed');
      } else {
        const retryAt = new Date(now().getTime() + backoffMs(row.attempts));
        if (await markRetry(db, row, retryAt, error)) log.info({ id: row.id, kind: row.kind, attempts: row.attempts, error, retryAt }, 'mail: temporary failure, will retry');
        else leaseLost(row, 'failed');
      }
      return;
    }
    // If this write fails the lease runs out and the message goes again: at least once, never lost.
    if (await settleSent(row, records)) log.info({ id: row.id, kind: row.kind, attempts: row.attempts }, 'mail: sent');
    else leaseLost(row, 'sent');
  }

  async function pass(): Promise<number> {
    if (runner.stopping()) return 0;
    await failExhaustedLeases(db, now(), maxAttempts);
    const claimedAt = now().getTime();
    const rows = await claimDueMail(db, { now: new Date(claimedAt), leaseMs, limit: batchSize, maxAttempts });
    for (let i = 0; i < rows.length; i++) {
      if (runner.stopping()) {
        await releaseClaimed(db, rows.slice(i));
        break;
      }
      const row = rows[i]!;
      // A slow server can use up the batch's lease: past half of it, renew before each send (or skip
      // a row another worker has taken meanwhile).
      if (now().getTime() - claimedAt > leaseMs / 2 && !(await renewLease(db, row, new Date(now().getTime() + leaseMs)))) continue;
      await send(row);
      await redactIfSettled(db, row);
    }
    return rows.length;
  }

  const runner = createPassRunner({ pass, batchSize, pollIntervalMs, log, failure: 'mail: outbox pass failed' });

  return {
    start() {
      if (runner.start()) unsubscribe = onEnqueue(runner.wake);
    },
    runOnce: runner.runOnce,
    async stop() {
      unsubscribe?.();
      unsubscribe = null;
      await runner.stop();
      transport.close();
    },
  };
}
