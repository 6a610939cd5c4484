import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';
import type { WebhookEventType } from '../../shared/admin/webhooks-api.js';
import type { WebhookEvent } from './queue.js';
import { PORTAL_LIST } from '../../shared/waitlist/signup-contract.js';

/**
 * What other features take from webhooks (the declared interface; they import nothing else of
 * webhooks/): the queue they raise events through, `app.webhooks`, and the events' builders, so
 * each event's payload is declared here once.
 */
export type { WebhookEvent } from './queue.js';
export type { WebhookEventType } from '../../shared/admin/webhooks-api.js';

export interface WebhookQueue {
  /**
   * Whether an enabled endpoint takes `type`, from what this process knows (read at start, after
   * each change made here, and every WEBHOOK_REFRESH_MS): false lets a caller skip the transaction
   * it would open only for the event. An endpoint added by another instance or the CLI gets the
   * events raised after this process has read it.
   */
  wants(type: WebhookEventType): boolean;
  /**
   * Writes the events and their deliveries with `db`, the caller's transaction, so they exist
   * exactly when the change that causes them does; resolves to the deliveries written (none when no
   * enabled endpoint takes them).
   */
  enqueue(db: Kysely<Database>, events: readonly WebhookEvent[]): Promise<number>;
  /** Erasure: every stored event about these entries goes, delivered or not (their payloads held the address). */
  forgetEntries(db: Kysely<Database>, entryIds: readonly string[]): Promise<void>;
}

type EntryFields = Pick<WaitlistEntry, 'id' | 'email' | 'status'>;

/** The events' payloads (`data`): the entry's id always; the address except in `signup.erased`. */
export const webhookEvents = {
  /** `list`: the slug of the list the entry joined (the portal's, or an offering list's; issue 31). */
  signupCreated(entry: WaitlistEntry, list: string = PORTAL_LIST): WebhookEvent {
    // The entry as the admin API sends it, without the client's network addresses and the consent
    // internals (a receiver needs who, when, where from; the consent record stays with us).
    const { ip_address: _ip, confirmed_ip: _confirmedIp, consent_version: _version, consent_record: _record, confirmation_sent_at: _sent, held_reason: _held, ...data } = entry;
    return { type: 'signup.created', entryId: entry.id, data: { ...data, list } };
  },
  signupConfirmed(entry: EntryFields, confirmedAt: string): WebhookEvent {
    return { type: 'signup.confirmed', entryId: entry.id, data: { id: entry.id, email: entry.email, status: 'confirmed', confirmed_at: confirmedAt } };
  },
  signupUnsubscribed(entry: EntryFields, unsubscribedAt: string): WebhookEvent {
    return { type: 'signup.unsubscribed', entryId: entry.id, data: { id: entry.id, email: entry.email, status: 'unsubscribed', unsubscribed_at: unsubscribedAt } };
  },
  /** No address: the entry is gone, and so is every stored event that held it. */
  signupErased(entryId: string, erasedAt: string, by: 'subject' | 'admin'): WebhookEvent {
    return { type: 'signup.erased', entryId: null, data: { id: entryId, erased_at: erasedAt, by } };
  },
  inviteSent(entry: Pick<WaitlistEntry, 'id' | 'email'>, invitedAt: string): WebhookEvent {
    return { type: 'invite.sent', entryId: entry.id, data: { id: entry.id, email: entry.email, status: 'invited', invited_at: invitedAt } };
  },
};
