import type { ReactNode } from 'react';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { deleteConfirmText } from './copy.js';

export interface DeleteDialogProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  /** How many entries the delete would remove. */
  count: number;
  deleting: boolean;
  onConfirm: () => void;
  /** Where focus goes when the dialog closes (the trigger may be disabled by then). */
  onCloseAutoFocus: (event: Event) => void;
  /** The Delete Selected button, rendered as the dialog's trigger. */
  trigger: ReactNode;
}

/** The confirm step of Delete Selected, with the specification's texts ('Are you sure?', Cancel, Delete). */
export function DeleteDialog({ open, onOpenChange, count, deleting, onConfirm, onCloseAutoFocus, trigger }: DeleteDialogProps) {
  return (
    <ConfirmDialog
      open={open}
      onOpenChange={onOpenChange}
      title="Are you sure?"
      description={deleteConfirmText(count)}
      confirmLabel="Delete"
      busy={deleting}
      onConfirm={onConfirm}
      onCloseAutoFocus={onCloseAutoFocus}
      trigger={trigger}
    />
  );
}
