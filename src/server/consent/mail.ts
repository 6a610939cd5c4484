import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { capped, type MailService, type TemplatedMessage } from '../mail/index.js';
import { waitlistEmailMessage } from './emails/messages.js';

/**
 * The e-mails the signup and the confirmation queue, as the outbox stores them: a template's name
 * and the entry's id only (./emails renders them when the worker sends, with fresh links), so
 * nothing is rendered while a request waits and no link is ever stored.
 */

/** What queueing needs of `app.mail`. */
export type MailQueue = Pick<MailService, 'enabled' | 'enqueue'>;

/**
 * The confirmation, capped (mail/caps.ts: per address, domain and client address, and the hourly
 * budget); `client` is the keyed hash of the client address that caused it (mailClientKey), when known.
 */
export const confirmationMail = (entry: { id: string; email: string }, client: string | null = null): TemplatedMessage =>
  capped(waitlistEmailMessage('confirmation', entry), client);
export const welcomeMail = (entry: { id: string; email: string }): TemplatedMessage => waitlistEmailMessage('welcome', entry);
/** The erasure link the preferences page asks for (its `kind` is `erasure`, which an unsubscribe leaves queued). */
export const erasureMail = (entry: { id: string; email: string }): TemplatedMessage => waitlistEmailMessage('erasure', entry);

/**
 * Queues a message that must go out (the confirmation) with the caller's transaction. Throws when
 * e-mail is off rather than losing it silently; the configuration already refuses
 * SIGNUP_CONFIRMATION=required without SMTP_URL.
 */
export async function queueRequired(mail: MailQueue, trx: Kysely<Database>, message: TemplatedMessage): Promise<void> {
  if (!mail.enabled) throw new Error(`e-mail is off (no SMTP_URL): cannot queue the ${message.kind} e-mail`);
  await mail.enqueue(trx, message);
}
