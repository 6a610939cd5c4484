import type { ReactNode } from 'react';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { inviteTexts } from './copy.js';

export interface InviteDialogProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  /** How many of the selected entries the table shows as joined or confirmed. */
  invitable: number;
  selected: number;
  inviting: boolean;
  onConfirm: () => void;
  onCloseAutoFocus: (event: Event) => void;
  /** The Invite Selected button, rendered as the dialog's trigger. */
  trigger: ReactNode;
}

/** The confirm step of Invite Selected: how many get the launch invite, how many are skipped. */
export function InviteDialog({ open, onOpenChange, invitable, selected, inviting, onConfirm, onCloseAutoFocus, trigger }: InviteDialogProps) {
  return (
    <ConfirmDialog
      open={open}
      onOpenChange={onOpenChange}
      title={inviteTexts.title(invitable)}
      description={inviteTexts.text(invitable, selected)}
      confirmLabel={inviteTexts.confirm}
      confirmTone="primary"
      busy={inviting}
      onConfirm={onConfirm}
      onCloseAutoFocus={onCloseAutoFocus}
      trigger={trigger}
    />
  );
}
