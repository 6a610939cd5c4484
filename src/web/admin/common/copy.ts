/** The admin panel's texts that more than one of its areas shows; each area has its own copy.ts for the rest. */
import type { ToastText } from '../../site/toast.js';
import type { EntryStatus, HeldReason } from '../../../shared/waitlist/entry.js';

export const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The page's own toasts: signing out, and a session the admin API no longer accepts. */
export const sessionToasts = {
  /** The specification gives this toast a title only. */
  signedOut: { title: 'Signed out successfully' },
  signOutFailed: (message: string): ToastText => ({ title: 'Error signing out', description: message }),
  /** Not in the specification: the admin API refused the session (401). */
  sessionExpired: { title: 'Session expired', description: 'Please sign in again.' },
  /** Not in the specification: the admin's role does not allow the action (403 insufficient_role), with the server's words. */
  notAllowed: (message: string): ToastText => ({ title: 'Not allowed', description: message }),
} as const;

/**
 * E-mail is off (the server has no SMTP_URL): said in the e-mail area, and given as Invite Selected's
 * description (issue 9).
 */
export const mailOffText = 'E-mail is off: set SMTP_URL, MAIL_FROM and PUBLIC_URL to send confirmations and invites.';

/**
 * The Status column's header and its badge per status (beside the specification, issue 9); the
 * filter bar and the insight panel name the statuses the same way.
 */
export const statusTexts = {
  column: 'Status',
  labels: {
    pending: 'Pending',
    joined: 'Joined',
    confirmed: 'Confirmed',
    invited: 'Invited',
    unsubscribed: 'Unsubscribed',
    held: 'Held',
  } satisfies Record<EntryStatus, string>,
  /** The badge's tooltip: what the status means, and when it was reached (null: not recorded). */
  hints: {
    pending: (at: string | null) => (at ? `Confirmation e-mail sent ${at}; link not used yet` : 'Confirmation link not used yet'),
    joined: () => 'Joined without a confirmation step',
    confirmed: (at: string | null) => (at ? `Confirmed the address on ${at}` : 'Confirmed the address'),
    invited: (at: string | null) => (at ? `Launch invite queued on ${at}` : 'Launch invite queued'),
    unsubscribed: (at: string | null) => (at ? `Unsubscribed on ${at}; never e-mailed again` : 'Unsubscribed; never e-mailed again'),
    held: () => 'Held for review: not e-mailed until approved',
  } satisfies Record<EntryStatus, (at: string | null) => string>,
  /** Why a held entry was held (HELD_REASONS; an unknown reason, from a later version, is shown as it is). */
  heldReasons: {
    challenge_missing: 'no proof-of-work solution was sent (a script, or the form without JavaScript)',
    challenge_invalid: 'the proof-of-work solution did not verify',
    challenge_expired: 'the proof-of-work challenge had expired',
    challenge_replayed: 'the proof-of-work solution had already been used',
  } satisfies Record<HeldReason, string> as Record<string, string>,
};

/** A held entry's reason as the Status column says it. */
export function heldReasonText(reason: string): string {
  return statusTexts.heldReasons[reason] ?? reason;
}
