import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { findWaitlistEntryByEmail } from '../db/waitlist-entries.js';
import { isSuppressed, type SuppressionBox } from '../consent/index.js';
import type { HeldReason, WaitlistEntry } from '../../shared/waitlist/entry.js';

/**
 * A signup without a valid proof-of-work solution (issue 28 point 4): stored with the status `held`
 * and its reason, with no e-mail queued and no suppression record touched, until an admin approves
 * or rejects it (held-actions.ts). What the visitor is told is the caller's (signup/service.ts):
 *
 * - `held`: a new address, stored held;
 * - `registered`: the address is on the list and joined, confirmed or invited: answered as a
 *   duplicate, exactly as without the challenge (the form showed that already);
 * - `unchanged`: the address is pending, unsubscribed or held already, or was erased by its owner:
 *   nothing is stored or changed (an unproven signup never brings an address back nor sends it an
 *   e-mail), and the visitor gets the normal success.
 */
export type HoldOutcome = 'held' | 'registered' | 'unchanged';

/** A new signup's entry as it is stored held: its reason, no confirmation sent. */
export function heldEntry(entry: WaitlistEntry, reason: HeldReason): WaitlistEntry {
  return { ...entry, status: 'held', held_reason: reason, confirmation_sent_at: null };
}

export async function holdSignup(db: Kysely<Database>, box: SuppressionBox, entry: WaitlistEntry, reason: HeldReason): Promise<HoldOutcome> {
  if (await isSuppressed(db, box, entry.email)) return 'unchanged';
  const result = await db.insertInto('waitlist').values(heldEntry(entry, reason)).onConflict((oc) => oc.doNothing()).executeTakeFirst();
  if (Number(result.numInsertedOrUpdatedRows ?? 0n) === 1) return 'held';
  const known = await findWaitlistEntryByEmail(db, entry.email);
  return known && (known.status === 'joined' || known.status === 'confirmed' || known.status === 'invited') ? 'registered' : 'unchanged';
}
