import { useState } from 'react';
import type { MouseEvent } from 'react';
import { ADMIN_MAX_IDS } from '../../../shared/admin/waitlist-api.js';
import type { WaitlistEntry } from '../../../shared/waitlist/entry.js';
import { authErrorMessage } from '../../session/auth-client.js';
import { notifyError, notifySuccess } from '../../site/toast.js';
import { waitlistToasts } from './copy.js';
import type { Selection } from './selection.js';
import type { UseWaitlist } from './useWaitlist.js';
import { deleteMatchingEntries, deleteWaitlistEntries } from './waitlist-api.js';

export interface DeleteSelected {
  /** The confirm dialog is open. */
  open: boolean;
  setOpen: (open: boolean) => void;
  deleting: boolean;
  /** Delete Selected was pressed: nothing selected keeps the dialog shut and says so. */
  openDelete: (event: MouseEvent<HTMLButtonElement>) => void;
  /** The dialog's Delete: removes the selected entries (a select-all's on the server, then reloads). */
  confirmDelete: () => Promise<void>;
}

/** Delete Selected: its dialog's state and the requests it sends. */
export function useDeleteSelected(
  selection: Selection,
  { removeEntries, reload }: Pick<UseWaitlist, 'removeEntries' | 'reload'>,
  onAccessError: (error: unknown) => boolean,
): DeleteSelected {
  const [open, setOpen] = useState(false);
  const [deleting, setDeleting] = useState(false);

  function openDelete(event: MouseEvent<HTMLButtonElement>) {
    if (selection.size === 0) {
      event.preventDefault();
      notifyError(waitlistToasts.noSelectionDelete);
    }
  }

  async function confirmDelete() {
    if (selection.size === 0) {
      setOpen(false);
      notifyError(waitlistToasts.noSelectionDelete);
      return;
    }
    setDeleting(true);
    const request = selection.toRequest();
    if ('filter' in request) {
      // A select-all: the server deletes every match (loaded or not), and the view reloads.
      try {
        const deleted = await deleteMatchingEntries(request);
        selection.clear();
        notifySuccess(waitlistToasts.deleted(deleted));
        reload();
      } catch (error) {
        if (!onAccessError(error)) notifyError(waitlistToasts.deleteFailed(authErrorMessage(error)));
      } finally {
        setDeleting(false);
        setOpen(false);
      }
      return;
    }
    const ids = request.ids;
    let deleted: WaitlistEntry[] = [];
    try {
      // The API takes at most ADMIN_MAX_IDS ids per request; larger selections go in several.
      for (let start = 0; start < ids.length; start += ADMIN_MAX_IDS) {
        const result = await deleteWaitlistEntries(ids.slice(start, start + ADMIN_MAX_IDS));
        deleted = deleted.concat(result.deleted);
      }
      removeEntries(deleted.map((entry) => entry.id));
      selection.clear();
      notifySuccess(waitlistToasts.deleted(deleted.length));
    } catch (error) {
      if (deleted.length > 0) {
        const gone = deleted.map((entry) => entry.id);
        removeEntries(gone);
        selection.remove(gone);
      }
      if (!onAccessError(error)) notifyError(waitlistToasts.deleteFailed(authErrorMessage(error)));
    } finally {
      setDeleting(false);
      setOpen(false);
    }
  }

  return { open, setOpen, deleting, openDelete, confirmDelete };
}
