import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { MailConfig } from '../config.js';
import type { Database } from '../db/schema.js';
import { enqueueMail, enqueueManyMail, startMailRetention, type OutboxMessage, type SendRecorder, type TemplatedMessage, type TemplateRenderer } from './outbox.js';

// What other features need to queue and render their e-mails (this file is mail's declared interface).
export type { OutboxMessage, RenderedMail, SendRecorder, SendingMessage, TemplatedMessage, TemplateRenderer } from './outbox.js';
import { createMailTransport } from './transport.js';
import { createMailWorker, type MailWorker, type MailWorkerOptions } from './worker.js';

/** What the rest of the server sees of e-mail: `app.mail`. */
export interface MailService {
  /** False without SMTP_URL: nothing is queued or sent. */
  enabled: boolean;
  /**
   * Queues a message with `db` or the caller's transaction, so it exists exactly when the change
   * that causes it does; resolves to null (and writes nothing) when e-mail is off.
   */
  enqueue(db: Kysely<Database>, message: OutboxMessage | TemplatedMessage): Promise<{ id: string; messageId: string } | null>;
  /** Queues many templated messages in multi-row inserts (launch invites); resolves to how many (0 when e-mail is off). */
  enqueueMany(db: Kysely<Database>, messages: readonly TemplatedMessage[]): Promise<number>;
  /** Registers the renderer of a template (a feature's e-mails); does nothing when e-mail is off. */
  registerTemplate(name: string, render: TemplateRenderer): void;
  /** Adds a recorder of every message sent (the records room); does nothing when e-mail is off. */
  recordSends(recorder: SendRecorder): void;
  /** The outbox's sender; null when e-mail is off. */
  worker: MailWorker | null;
}

/** Worker settings tests replace (the clock, the backoff, the poll interval). */
export type MailWorkerOverrides = Partial<Pick<MailWorkerOptions, 'now' | 'backoffMs' | 'pollIntervalMs' | 'leaseMs' | 'batchSize'>>;

declare module 'fastify' {
  interface FastifyInstance {
    mail: MailService;
  }
}

/** The host of PUBLIC_URL, which names every Message-ID. */
export function messageIdHost(mail: Pick<MailConfig, 'publicUrl'>): string {
  return new URL(mail.publicUrl).hostname;
}

/**
 * Decorates `app.mail` and, when SMTP_URL is set, starts the outbox worker; the worker stops before
 * the database closes (preClose), letting the message being sent finish. The outbox retention
 * (MAIL_RETENTION_DAYS) runs at start and daily either way: rows may remain from when e-mail was on.
 */
export function registerMail(app: FastifyInstance, mail: MailConfig | null, overrides: MailWorkerOverrides = {}): void {
  let stopRetention: (() => void) | null = null;
  app.addHook('onReady', async () => {
    stopRetention = await startMailRetention(app.database.db, app.config.consent.outboxRetentionDays, app.log, overrides.now);
  });
  app.addHook('onClose', async () => stopRetention?.());

  if (!mail) {
    app.decorate('mail', {
      enabled: false,
      enqueue: async () => null,
      enqueueMany: async () => 0,
      registerTemplate: () => undefined,
      recordSends: () => undefined,
      worker: null,
    } satisfies MailService);
    return;
  }
  const host = messageIdHost(mail);
  const templates = new Map<string, TemplateRenderer>();
  const recorders: SendRecorder[] = [];
  const worker = createMailWorker({
    db: app.database.db,
    transport: createMailTransport(mail, { pool: true }),
    from: mail.from,
    maxAttempts: mail.maxAttempts,
    log: app.log,
    templates,
    recorders,
    ...overrides,
  });
  const enqueueOptions = () => ({ messageIdHost: host, ...(overrides.now ? { now: overrides.now() } : {}) });
  app.decorate('mail', {
    enabled: true,
    enqueue: (db, message) => enqueueMail(db, message, enqueueOptions()),
    enqueueMany: (db, messages) => enqueueManyMail(db, messages, enqueueOptions()),
    registerTemplate(name, render) {
      if (templates.has(name)) throw new Error(`mail: a template named "${name}" is registered already`);
      templates.set(name, render);
    },
    recordSends(recorder) {
      recorders.push(recorder);
    },
    worker,
  } satisfies MailService);
  app.addHook('onReady', async () => worker.start());
  app.addHook('preClose', async () => worker.stop());
}
