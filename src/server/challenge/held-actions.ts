import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { toWaitlistEntry, WAITLIST_COLUMNS } from '../db/waitlist-entries.js';
import { selectionIdChunks, type Selection } from '../admin/index.js';
import { confirmationMail, welcomeMail } from '../consent/index.js';
import type { MailService, TemplatedMessage } from '../mail/index.js';
import { webhookEvents, type WebhookQueue } from '../webhooks/index.js';
import type { WaitlistFilter } from '../../shared/admin/waitlist-filter.js';

/**
 * The admin's actions on held signups (held-routes.ts), chunk by chunk on the transaction they are
 * given: the route passes one, so the entries, their e-mails and the audit records are written
 * together or not at all. Only entries still `held` are changed: two admins approving the same
 * entries at once (PostgreSQL: the second waits for the first's row locks, then re-checks) never
 * send one person two e-mails.
 */

/** A select-all acts on held entries only: a filter on another status selects none of them. */
function heldOnly(selection: Selection): Selection | null {
  if ('ids' in selection) return selection;
  const filter: WaitlistFilter = selection.filter;
  if (filter.status !== undefined && filter.status !== 'held') return null;
  return { filter: { ...filter, status: 'held' }, except: selection.except };
}

export interface ApproveOptions {
  /** SIGNUP_CONFIRMATION=required: approved entries become pending and get the confirmation e-mail. */
  confirmation: 'off' | 'required';
  /** MAIL_WELCOME=on (with confirmation off): approved entries get the welcome e-mail. */
  welcome: boolean;
  mail: Pick<MailService, 'enabled' | 'enqueueMany'>;
  /** app.webhooks: an approved entry raises `signup.created`, as its signup would have. */
  webhooks: Pick<WebhookQueue, 'wants' | 'enqueue'>;
  now: Date;
}

/** Approves the selection's held entries: each joins as its signup would have; resolves to how many. */
export async function approveHeld(trx: Kysely<Database>, selection: Selection, options: ApproveOptions): Promise<number> {
  const held = heldOnly(selection);
  if (!held) return 0;
  const confirm = options.confirmation === 'required';
  const at = options.now.toISOString();
  let approved = 0;
  for await (const part of selectionIdChunks(trx, held)) {
    const rows = await trx
      .updateTable('waitlist')
      .set({ status: confirm ? 'pending' : 'joined', held_reason: null, confirmation_sent_at: confirm ? at : null })
      .where('id', 'in', part)
      .where('status', '=', 'held')
      .returning(WAITLIST_COLUMNS)
      .execute();
    const messages: TemplatedMessage[] = confirm
      ? rows.map((row) => confirmationMail(row))
      : options.welcome && options.mail.enabled
        ? rows.map(welcomeMail)
        : [];
    if (messages.length > 0) await options.mail.enqueueMany(trx, messages);
    if (options.webhooks.wants('signup.created')) await options.webhooks.enqueue(trx, rows.map((row) => webhookEvents.signupCreated(toWaitlistEntry(row))));
    approved += rows.length;
  }
  return approved;
}

/**
 * Deletes the selection's held entries and hands each chunk's deleted rows to `onChunk` (the
 * route's audit record, with keyed hashes of the addresses); resolves to how many.
 */
export async function rejectHeld(
  trx: Kysely<Database>,
  selection: Selection,
  onChunk: (rows: ReadonlyArray<{ id: string; email: string }>) => Promise<void>,
): Promise<number> {
  const held = heldOnly(selection);
  if (!held) return 0;
  let rejected = 0;
  for await (const part of selectionIdChunks(trx, held)) {
    const rows = await trx.deleteFrom('waitlist').where('id', 'in', part).where('status', '=', 'held').returning(['id', 'email']).execute();
    if (rows.length > 0) await onChunk(rows);
    rejected += rows.length;
  }
  return rejected;
}
