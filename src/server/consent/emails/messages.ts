import type { TemplatedMessage } from '../../mail/index.js';
import { waitlistEmailSubject, type WaitlistEmailTemplate } from './words.js';

/**
 * The outbox message of a waitlist e-mail for an entry (app.mail.enqueue / enqueueMany): only the
 * template's name and the entry's id are stored; the worker renders it when it sends (index.ts).
 */
export function waitlistEmailMessage(template: WaitlistEmailTemplate, entry: { id: string; email: string }): TemplatedMessage {
  return { kind: template, to: entry.email, subject: waitlistEmailSubject(template), template, data: { entryId: entry.id } };
}
