import type { EntryStatus, WaitlistEntry } from '../../shared/waitlist/entry.js';

/** What the Status column shows for a row, and since when (null: not recorded). */
export interface ShownStatus {
  status: EntryStatus;
  since: string | null;
}

/** Only these get the launch invite; the server applies the same rule. */
export function isInvitable(status: EntryStatus): boolean {
  return status === 'joined' || status === 'confirmed';
}

/** The status alone, without allocating (loops over every row use it). */
export function shownStatusOnly(entry: WaitlistEntry, invitedAt: string | undefined): EntryStatus {
  return invitedAt !== undefined ? 'invited' : entry.status;
}

/** The row's status: invited when the page invited it after loading it (`invitedAt`), else as loaded. */
export function shownStatus(entry: WaitlistEntry, invitedAt: string | undefined): ShownStatus {
  if (invitedAt !== undefined) return { status: 'invited', since: invitedAt };
  switch (entry.status) {
    case 'pending':
      return { status: entry.status, since: entry.confirmation_sent_at };
    case 'confirmed':
      return { status: entry.status, since: entry.confirmed_at };
    case 'invited':
      return { status: entry.status, since: entry.invited_at };
    case 'unsubscribed':
      return { status: entry.status, since: entry.unsubscribed_at };
    default:
      return { status: entry.status, since: null };
  }
}
