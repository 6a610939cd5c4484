import { useCallback, useRef } from 'react';
import type { RefObject } from 'react';
import { buttonStyles, SpinnerIcon } from '../../ui/controls.js';
import { mailOffText } from '../common/copy.js';
import { exportTexts, inviteTexts } from './copy.js';
import { DeleteDialog } from './DeleteDialog.js';
import { InviteDialog } from './InviteDialog.js';
import type { DeleteSelected } from './useDeleteSelected.js';
import type { WaitlistExport } from './useExport.js';
import type { InviteSelected } from './useInviteSelected.js';
import type { RoleRights } from '../../../shared/admin/roles.js';

export interface WaitlistActionsProps {
  /** Which of the actions the admin's role may use; the others are not shown. */
  rights: Pick<RoleRights, 'deleteEntries' | 'exportEntries' | 'invite'>;
  selectedCount: number;
  deletion: DeleteSelected;
  invite: InviteSelected;
  exports: WaitlistExport;
  /** E-mail is off: Invite Selected says why instead of opening its dialog. */
  mailOff: boolean;
  /** The ids of the hidden e-mail-off text and of the attribution checkbox (made by the panel, which is always there). */
  mailOffId: string;
  attributionId: string;
  /** Where focus goes when a dialog closes and its trigger is disabled by then. */
  headingRef: RefObject<HTMLHeadingElement | null>;
}

/** Delete Selected, Export Selected, Export All and Invite Selected, with the export's attribution option. */
export function WaitlistActions({ rights, selectedCount, deletion, invite, exports, mailOff, mailOffId, attributionId, headingRef }: WaitlistActionsProps) {
  const deleteButtonRef = useRef<HTMLButtonElement>(null);
  const inviteButtonRef = useRef<HTMLButtonElement>(null);
  /** Radix would refocus the trigger, which is disabled once the deleted rows' selection is cleared. */
  const onDeleteCloseAutoFocus = useCallback((event: Event) => refocus(event, deleteButtonRef, headingRef), [headingRef]);
  const onInviteCloseAutoFocus = useCallback((event: Event) => refocus(event, inviteButtonRef, headingRef), [headingRef]);
  const { exporting, runExport } = exports;

  return (
    <div className="flex flex-col gap-2 lg:items-end">
      <div className="flex flex-wrap gap-2">
        {rights.deleteEntries && (
          <DeleteDialog
            open={deletion.open}
            onOpenChange={deletion.setOpen}
            count={selectedCount}
            deleting={deletion.deleting}
            onConfirm={() => void deletion.confirmDelete()}
            onCloseAutoFocus={onDeleteCloseAutoFocus}
            trigger={
              <button
                ref={deleteButtonRef}
                type="button"
                className={buttonStyles.danger}
                disabled={selectedCount === 0 || deletion.deleting}
                onClick={deletion.openDelete}
              >
                Delete Selected
              </button>
            }
          />
        )}
        {rights.exportEntries && (
          <>
            <button
              type="button"
              className={buttonStyles.secondary}
              disabled={selectedCount === 0 || exporting !== null}
              onClick={() => void runExport('selected')}
            >
              {exporting === 'selected' && <SpinnerIcon />}
              Export Selected
            </button>
            <button type="button" className={buttonStyles.primary} disabled={exporting !== null} onClick={() => void runExport('all')}>
              {exporting === 'all' && <SpinnerIcon />}
              Export All
            </button>
          </>
        )}
        {rights.invite && (
          <InviteDialog
            open={invite.open}
            onOpenChange={invite.setOpen}
            invitable={invite.counts.invitable}
            selected={invite.counts.selected}
            inviting={invite.inviting}
            onConfirm={() => void invite.confirmInvite()}
            onCloseAutoFocus={onInviteCloseAutoFocus}
            trigger={
              // E-mail off: aria-disabled, not disabled, so the button stays focusable and its reason is read.
              <button
                ref={inviteButtonRef}
                type="button"
                className={`${buttonStyles.secondary} aria-disabled:cursor-not-allowed aria-disabled:opacity-50 aria-disabled:hover:border-white/15 aria-disabled:hover:bg-white/5`}
                disabled={!mailOff && (selectedCount === 0 || invite.inviting || invite.preparing)}
                aria-disabled={mailOff || undefined}
                aria-describedby={mailOff ? mailOffId : undefined}
                title={mailOff ? mailOffText : undefined}
                onClick={(event) => void invite.openInvite(event)}
              >
                {(invite.inviting || invite.preparing) && <SpinnerIcon />}
                {inviteTexts.button}
              </button>
            }
          />
        )}
        {rights.invite && mailOff && (
          <span id={mailOffId} hidden>
            {mailOffText}
          </span>
        )}
      </div>
      {rights.exportEntries && (
        <div className="flex items-center gap-2 text-sm text-slate-300">
          <input
            id={attributionId}
            type="checkbox"
            className="size-4 accent-emerald-400"
            checked={exports.withAttribution}
            onChange={(event) => exports.setWithAttribution(event.target.checked)}
          />
          <label htmlFor={attributionId}>{exportTexts.attribution}</label>
        </div>
      )}
    </div>
  );
}

/** A dialog closed: focus goes back to its trigger, or to the heading when the trigger is disabled. */
function refocus(event: Event, trigger: RefObject<HTMLButtonElement | null>, heading: RefObject<HTMLHeadingElement | null>) {
  event.preventDefault();
  const button = trigger.current;
  if (button && !button.disabled) button.focus();
  else heading.current?.focus();
}
