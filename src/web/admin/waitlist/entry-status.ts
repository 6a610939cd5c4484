import type { EntryStatus, WaitlistEntry } from '../../../shared/waitlist/entry.js';
import type { InviteCounts } from './copy.js';
import type { Selection } from './selection.js';

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

/** What an invite of the selection is expected to do, from what the page knows of the selected entries. */
export interface InviteExpectation {
  counts: InviteCounts;
  /** The loaded rows that will be invited: they show as invited once the server has answered. */
  loadedInvitable: Set<string>;
}

/**
 * What inviting the selection will do, from the rows the page shows: their statuses (invited ones
 * as invited). A select-all that reaches past the loaded rows has its entries counted by status by
 * the database (`statuses`, for the select-all's filter), less the rows unticked in it.
 */
export function expectInvite(
  selection: Selection,
  entries: readonly WaitlistEntry[],
  invitedAt: (id: string) => string | undefined,
  statuses: ReadonlyArray<{ status: EntryStatus; count: number }> | null,
): InviteExpectation {
  const loadedInvitable = new Set<string>();
  const counts: InviteCounts = { invited: 0, skipped: { pending: 0, unsubscribed: 0, alreadyInvited: 0 } };
  const tally = (status: EntryStatus, n: number) => {
    if (isInvitable(status)) counts.invited += n;
    else if (status === 'pending') counts.skipped.pending += n;
    else if (status === 'unsubscribed') counts.skipped.unsubscribed += n;
    else if (status === 'invited') counts.skipped.alreadyInvited += n;
    // Held: not invited and, as the server counts, in none of the skipped groups.
  };
  if (statuses) for (const { status, count } of statuses) tally(status, count);
  // One pass over the loaded rows (the unticked rows of a select-all are among them).
  for (const entry of entries) {
    const status = shownStatusOnly(entry, invitedAt(entry.id));
    if (selection.isSelected(entry)) {
      if (isInvitable(status)) loadedInvitable.add(entry.id);
      if (!statuses) tally(status, 1);
    } else if (statuses && selection.covers(entry)) {
      // Counted by the database (which knows the invites this page sent), but left out of the selection.
      tally(status, -1);
    }
  }
  return { counts, loadedInvitable };
}
