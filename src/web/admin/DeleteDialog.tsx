import type { ReactNode } from 'react';
import { AlertDialog } from 'radix-ui';
import { buttonStyles, SpinnerIcon } from '../ui/controls.js';
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

/**
 * The confirm step of Delete Selected: an alert dialog that traps focus, starts on Cancel and closes
 * on Esc. It stays open while the delete runs, so it cannot be dismissed halfway.
 */
export function DeleteDialog({ open, onOpenChange, count, deleting, onConfirm, onCloseAutoFocus, trigger }: DeleteDialogProps) {
  return (
    <AlertDialog.Root open={open} onOpenChange={(next) => (deleting ? undefined : onOpenChange(next))}>
      <AlertDialog.Trigger asChild>{trigger}</AlertDialog.Trigger>
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="fixed inset-0 z-40 bg-black/70 backdrop-blur-sm" />
        <AlertDialog.Content
          onCloseAutoFocus={onCloseAutoFocus}
          onEscapeKeyDown={(event) => {
            if (deleting) event.preventDefault();
          }}
          className="fixed top-1/2 left-1/2 z-50 w-[calc(100%-2.5rem)] max-w-md -translate-x-1/2 -translate-y-1/2 rounded-2xl border border-white/10 bg-slate-900 p-6 text-slate-100 shadow-2xl shadow-black/60"
        >
          <AlertDialog.Title className="text-lg font-semibold text-white">Are you sure?</AlertDialog.Title>
          <AlertDialog.Description className="mt-2 text-sm leading-relaxed text-slate-300">
            {deleteConfirmText(count)}
          </AlertDialog.Description>
          <div className="mt-6 flex flex-col-reverse gap-3 sm:flex-row sm:justify-end">
            <AlertDialog.Cancel className={buttonStyles.secondary} disabled={deleting}>
              Cancel
            </AlertDialog.Cancel>
            {/* aria-disabled, not disabled: the button keeps focus while the delete runs. */}
            <button
              type="button"
              className={`${buttonStyles.danger} aria-disabled:cursor-wait aria-disabled:opacity-70`}
              onClick={() => {
                if (!deleting) onConfirm();
              }}
              aria-disabled={deleting}
            >
              {deleting && <SpinnerIcon />}
              Delete
            </button>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
