import { useState } from 'react';
import { ADMIN_HELD_APPROVE_PATH, ADMIN_HELD_REJECT_PATH } from '../../../shared/admin/held-api.js';
import { authErrorMessage } from '../../session/auth-client.js';
import { notifyError, notifySuccess } from '../../site/toast.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { buttonStyles, SpinnerIcon } from '../../ui/controls.js';
import { heldTexts } from './copy.js';
import { actOnHeld } from './held-api.js';
import type { Selection } from './selection.js';

export interface HeldActionsProps {
  selection: Selection;
  /** The view reloads after an action (the rows changed status or went). */
  reload: () => void;
  onAccessError: (error: unknown) => boolean;
}

/**
 * Approve Selected and Reject Selected, shown while the view is filtered to Status = Held (issue 28
 * point 4): approving lets the held signups join as their signup would have (with the confirmation
 * e-mail when double opt-in is on); rejecting deletes them, after a confirm step.
 */
export function HeldActions({ selection, reload, onAccessError }: HeldActionsProps) {
  const [busy, setBusy] = useState<'approve' | 'reject' | null>(null);
  const [confirming, setConfirming] = useState(false);
  const count = selection.size;

  async function act(action: 'approve' | 'reject') {
    if (selection.size === 0) {
      notifyError(heldTexts.noSelection);
      return;
    }
    setBusy(action);
    try {
      const done = await actOnHeld(action === 'approve' ? ADMIN_HELD_APPROVE_PATH : ADMIN_HELD_REJECT_PATH, selection.toRequest());
      selection.clear();
      notifySuccess(action === 'approve' ? heldTexts.approved(done) : heldTexts.rejected(done));
      reload();
    } catch (error) {
      if (!onAccessError(error)) notifyError(heldTexts.failed(authErrorMessage(error)));
    } finally {
      setBusy(null);
      setConfirming(false);
    }
  }

  return (
    <div role="group" aria-label={heldTexts.group} className="flex flex-wrap gap-2">
      <button type="button" className={buttonStyles.primary} disabled={count === 0 || busy !== null} onClick={() => void act('approve')}>
        {busy === 'approve' && <SpinnerIcon />}
        {heldTexts.approve}
      </button>
      <ConfirmDialog
        open={confirming}
        onOpenChange={setConfirming}
        title={heldTexts.rejectTitle}
        description={heldTexts.rejectText(count)}
        confirmLabel={heldTexts.rejectConfirm}
        busy={busy === 'reject'}
        onConfirm={() => void act('reject')}
        trigger={
          <button type="button" className={buttonStyles.danger} disabled={count === 0 || busy !== null}>
            {heldTexts.reject}
          </button>
        }
      />
    </div>
  );
}
