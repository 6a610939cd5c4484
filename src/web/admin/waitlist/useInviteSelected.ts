import { useRef, useState } from 'react';
import type { MouseEvent } from 'react';
import { ADMIN_MAX_IDS, MAIL_DISABLED_CODE, type InviteResult } from '../../../shared/admin/waitlist-api.js';
import type { WaitlistFilter } from '../../../shared/admin/waitlist-filter.js';
import { authErrorMessage } from '../../session/auth-client.js';
import { notifyError, notifySuccess } from '../../site/toast.js';
import { AdminApiError, fetchWaitlistInsights } from '../common/admin-api.js';
import { mailOffText } from '../common/copy.js';
import { waitlistToasts, type InviteCounts } from './copy.js';
import { expectInvite, type InviteExpectation } from './entry-status.js';
import type { Selection } from './selection.js';
import type { UseWaitlist } from './useWaitlist.js';
import { inviteMatchingEntries, inviteWaitlistEntries } from './waitlist-api.js';

export interface InviteSelectedOptions {
  filter: WaitlistFilter;
  /** E-mail on (true), off (false) or not known yet (null): Invite Selected needs it on. */
  mailEnabled: boolean | null;
  /** Invites were queued (or e-mail turned out off): the e-mail area reloads. */
  onMailChanged: () => void;
  onAccessError: (error: unknown) => boolean;
}

export interface InviteSelected {
  /** The confirm dialog is open. */
  open: boolean;
  setOpen: (open: boolean) => void;
  inviting: boolean;
  /** Counting the statuses of a select-all's entries, before the dialog opens. */
  preparing: boolean;
  /** What the dialog says: how many of the selection are invitable. */
  counts: { invitable: number; selected: number };
  /** Invite Selected was pressed: e-mail off or nothing selected keeps the dialog shut and says so. */
  openInvite: (event: MouseEvent<HTMLButtonElement>) => Promise<void>;
  /** The dialog's confirm: queues the invites and shows the invited rows as such. */
  confirmInvite: () => Promise<void>;
}

/** Invite Selected: what its dialog says, and the requests it sends. */
export function useInviteSelected(
  selection: Selection,
  { entries, hasMore, invitedAt, markInvited, reload }: Pick<UseWaitlist, 'entries' | 'hasMore' | 'invitedAt' | 'markInvited' | 'reload'>,
  { filter, mailEnabled, onMailChanged, onAccessError }: InviteSelectedOptions,
): InviteSelected {
  const [open, setOpen] = useState(false);
  const [inviting, setInviting] = useState(false);
  const [preparing, setPreparing] = useState(false);
  const [counts, setCounts] = useState({ invitable: 0, selected: 0 });
  const expectedRef = useRef<InviteExpectation | null>(null);

  async function openInvite(event: MouseEvent<HTMLButtonElement>) {
    if (mailEnabled === false) {
      event.preventDefault();
      notifyError(waitlistToasts.mailOff(mailOffText));
      return;
    }
    if (selection.size === 0) {
      event.preventDefault();
      notifyError(waitlistToasts.noSelectionInvite);
      return;
    }
    const selected = selection.size;
    if (selection.mode === 'ids' || !hasMore) {
      const expected = expectInvite(selection, entries, invitedAt, null);
      expectedRef.current = expected;
      setCounts({ invitable: expected.counts.invited, selected });
      return;
    }
    // A select-all reaching past the loaded rows: the database counts its entries by status first.
    event.preventDefault();
    setPreparing(true);
    try {
      const request = selection.toRequest();
      const insights = await fetchWaitlistInsights('filter' in request ? request.filter : filter);
      const expected = expectInvite(selection, entries, invitedAt, insights.statuses);
      expectedRef.current = expected;
      setCounts({ invitable: expected.counts.invited, selected });
      setOpen(true);
    } catch (error) {
      if (!onAccessError(error)) notifyError(waitlistToasts.inviteFailed(authErrorMessage(error)));
    } finally {
      setPreparing(false);
    }
  }

  async function confirmInvite() {
    const request = selection.toRequest();
    if (selection.size === 0) {
      setOpen(false);
      notifyError(waitlistToasts.noSelectionInvite);
      return;
    }
    setInviting(true);
    const expected = expectedRef.current ?? expectInvite(selection, entries, invitedAt, null);
    const done: InviteCounts = { invited: 0, skipped: { pending: 0, unsubscribed: 0, alreadyInvited: 0 } };
    const add = (chunk: readonly string[] | null, result: InviteResult) => {
      done.invited += result.invited;
      done.skipped.pending += result.skipped.pending;
      done.skipped.unsubscribed += result.skipped.unsubscribed;
      done.skipped.alreadyInvited += result.skipped.alreadyInvited;
      // The server does not list whom it invited (see the contract): the rows the table showed
      // as joined or confirmed are the ones, unless the counts below say otherwise.
      markInvited(chunk ? chunk.filter((id) => expected.loadedInvitable.has(id)) : expected.loadedInvitable, result.invitedAt);
    };
    try {
      if ('filter' in request) add(null, await inviteMatchingEntries(request));
      else {
        // At most ADMIN_MAX_IDS ids per request (each one transaction); larger selections go in several.
        for (let start = 0; start < request.ids.length; start += ADMIN_MAX_IDS) {
          const chunk = request.ids.slice(start, start + ADMIN_MAX_IDS);
          add(chunk, await inviteWaitlistEntries(chunk));
        }
      }
      selection.clear();
      notifySuccess(waitlistToasts.invited(done));
      // Someone changed these people since the table loaded them (confirmed, unsubscribed, invited
      // from another tab): the table reloads to show what the server has.
      if (!sameCounts(done, expected.counts)) reload();
    } catch (error) {
      if (!onAccessError(error)) notifyError(waitlistToasts.inviteFailed(error instanceof AdminApiError && error.code === MAIL_DISABLED_CODE ? mailOffText : authErrorMessage(error)));
    } finally {
      setInviting(false);
      setOpen(false);
      expectedRef.current = null;
      onMailChanged();
    }
  }

  return { open, setOpen, inviting, preparing, counts, openInvite, confirmInvite };
}

function sameCounts(a: InviteCounts, b: InviteCounts): boolean {
  return (
    a.invited === b.invited &&
    a.skipped.pending === b.skipped.pending &&
    a.skipped.unsubscribed === b.skipped.unsubscribed &&
    a.skipped.alreadyInvited === b.skipped.alreadyInvited
  );
}
