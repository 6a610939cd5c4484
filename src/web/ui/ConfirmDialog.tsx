import type { ReactNode } from 'react';
import { AlertDialog } from 'radix-ui';
import { buttonStyles, SpinnerIcon } from './controls.js';

export interface ConfirmDialogProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  description: ReactNode;
  /** The confirming (destructive) button's text; the other one is 'Cancel'. */
  confirmLabel: string;
  /** The confirming button's colour: 'danger' (default) for destructive actions, 'primary' otherwise. */
  confirmTone?: 'danger' | 'primary';
  /** The action runs: the dialog cannot be dismissed and the button shows a spinner. */
  busy: boolean;
  onConfirm: () => void;
  /** Where focus goes when the dialog closes (the trigger may be disabled by then); Radix's default otherwise. */
  onCloseAutoFocus?: (event: Event) => void;
  /** The button that opens the dialog. */
  trigger: ReactNode;
}

/**
 * A confirm step for a destructive action: an alert dialog that traps focus, starts on Cancel and
 * closes on Esc. It stays open while the action runs, so it cannot be dismissed halfway.
 */
export function ConfirmDialog({
  open,
  onOpenChange,
  title,
  description,
  confirmLabel,
  confirmTone = 'danger',
  busy,
  onConfirm,
  onCloseAutoFocus,
  trigger,
}: ConfirmDialogProps) {
  return (
    <AlertDialog.Root open={open} onOpenChange={(next) => (busy ? undefined : onOpenChange(next))}>
      <AlertDialog.Trigger asChild>{trigger}</AlertDialog.Trigger>
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="fixed inset-0 z-40 bg-black/70 backdrop-blur-sm" />
        <AlertDialog.Content
          onCloseAutoFocus={onCloseAutoFocus}
          onEscapeKeyDown={(event) => {
            if (busy) event.preventDefault();
          }}
          className="fixed top-1/2 left-1/2 z-50 w-[calc(100%-2.5rem)] max-w-md -translate-x-1/2 -translate-y-1/2 rounded-2xl border border-white/10 bg-slate-900 p-6 text-slate-100 shadow-2xl shadow-black/60"
        >
          <AlertDialog.Title className="text-lg font-semibold text-white">{title}</AlertDialog.Title>
          <AlertDialog.Description className="mt-2 text-sm leading-relaxed text-slate-300">{description}</AlertDialog.Description>
          <div className="mt-6 flex flex-col-reverse gap-3 sm:flex-row sm:justify-end">
            <AlertDialog.Cancel className={buttonStyles.secondary} disabled={busy}>
              Cancel
            </AlertDialog.Cancel>
            {/* aria-disabled, not disabled: the button keeps focus while the action runs. */}
            <button
              type="button"
              className={`${buttonStyles[confirmTone]} aria-disabled:cursor-wait aria-disabled:opacity-70`}
              onClick={() => {
                if (!busy) onConfirm();
              }}
              aria-disabled={busy}
            >
              {busy && <SpinnerIcon />}
              {confirmLabel}
            </button>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
