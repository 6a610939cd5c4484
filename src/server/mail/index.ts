import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { MailConfig } from '../config.js';
import type { Database } from '../db/schema.js';
import { enqueueMail, type OutboxMessage } from './outbox.js';
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
  enqueue(db: Kysely<Database>, message: OutboxMessage): Promise<{ id: string; messageId: string } | null>;
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
 * the database closes (preClose), letting the message being sent finish.
 */
export function registerMail(app: FastifyInstance, mail: MailConfig | null, overrides: MailWorkerOverrides = {}): void {
  if (!mail) {
    app.decorate('mail', { enabled: false, enqueue: async () => null, worker: null } satisfies MailService);
    return;
  }
  const host = messageIdHost(mail);
  const worker = createMailWorker({
    db: app.database.db,
    transport: createMailTransport(mail),
    from: mail.from,
    maxAttempts: mail.maxAttempts,
    log: app.log,
    ...overrides,
  });
  app.decorate('mail', {
    enabled: true,
    enqueue: (db, message) => enqueueMail(db, message, { messageIdHost: host, ...(overrides.now ? { now: overrides.now() } : {}) }),
    worker,
  } satisfies MailService);
  app.addHook('onReady', async () => worker.start());
  app.addHook('preClose', async () => worker.stop());
}
