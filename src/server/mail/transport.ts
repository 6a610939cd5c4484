import type nodemailer from 'nodemailer';
import type { Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { MailConfig } from '../config.js';
import { optionalModule } from '../runtime/optional-module.js';

/** nodemailer, loaded only when a transport is made (e-mail is on, or the mail CLI). */
const loadNodemailer = optionalModule<typeof nodemailer>('nodemailer');

/** What the worker and the CLI use of a transport: one message at a time, then close. */
export type MailTransport = Pick<Transporter<SMTPTransport.SentMessageInfo | SMTPPool.SentMessageInfo>, 'sendMail' | 'close'>;

/** Seconds before an unanswered connection, greeting or socket is given up (then retried later). */
const TIMEOUTS = { connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 60_000 };

/**
 * One SMTP transport for the configured server (SMTP_URL), DKIM-signing when a key is configured.
 * `pool` (the outbox worker): one connection reused for up to 100 messages while they come back to
 * back, instead of a new connection, greeting and EHLO per message (servers pause before their
 * greeting to catch clients that talk too soon: smtp-server 100 ms, Postfix's postscreen more,
 * which alone capped a worker at under 10 messages a second), and closed after a second without
 * one, so an idle server holds no connection of ours. The worker still sends one message at a time,
 * and the pool never re-sends on its own (maxRequeues 0): every retry is the worker's, counted and
 * backed off.
 */
export function createMailTransport(mail: Pick<MailConfig, 'smtpUrl' | 'dkim'>, options: { pool?: boolean } = {}): MailTransport {
  const dkim = mail.dkim ? { dkim: { ...mail.dkim } } : {};
  if (options.pool) {
    const pooled: SMTPPool.Options = {
      url: mail.smtpUrl,
      ...TIMEOUTS,
      ...dkim,
      pool: true,
      maxConnections: 1,
      maxMessages: 100,
      maxRequeues: 0,
      idleTimeout: 1_000,
    };
    return loadNodemailer().createTransport(pooled);
  }
  const single: SMTPTransport.Options = { url: mail.smtpUrl, ...TIMEOUTS, ...dkim };
  return loadNodemailer().createTransport(single);
}

/** Errors of a connection that did not happen or broke: worth another try later. */
const TEMPORARY_CODES = new Set([
  'ECONNECTION',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ESOCKET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EDNS',
  'ETLS',
  'EPROTOCOL',
]);

/**
 * Temporary or permanent, as RFC 5321 says: a 4xx reply and a connection problem (refused, timed
 * out, reset) are temporary, a 5xx reply is permanent. Anything else (a message nodemailer cannot
 * build) would fail the same way again, so it is permanent too.
 */
export function classifySendError(err: unknown): 'temporary' | 'permanent' {
  const { responseCode, code } = (err ?? {}) as { responseCode?: unknown; code?: unknown };
  if (typeof responseCode === 'number') return responseCode >= 400 && responseCode < 500 ? 'temporary' : 'permanent';
  return typeof code === 'string' && TEMPORARY_CODES.has(code) ? 'temporary' : 'permanent';
}

/** What the server said (or what went wrong), one line, for last_error and the CLI. */
export function describeSendError(err: unknown): string {
  const { response, code, message } = (err ?? {}) as { response?: unknown; code?: unknown; message?: unknown };
  const text = typeof response === 'string' && response !== '' ? response : typeof message === 'string' ? message : String(err);
  const line = text.replace(/\s+/g, ' ').trim();
  return (typeof code === 'string' && !line.includes(code) ? `${code}: ${line}` : line).slice(0, 1000);
}
