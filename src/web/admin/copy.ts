/** Every text of the admin panel that the specification fixes, plus the few it leaves to us. */
import type { ToastText } from '../site/toast.js';
import type { EntryStatus, WaitlistEntry } from '../../shared/waitlist/entry.js';
import { formatSource } from '../../shared/waitlist/attribution.js';

/** 'N person signed up' / 'N people signed up', plus ' (N selected)' while rows are ticked. */
export function countLine(total: number, selected: number): string {
  const people = `${total} ${total === 1 ? 'person' : 'people'} signed up`;
  return selected > 0 ? `${people} (${selected} selected)` : people;
}

/** The second count line while a filter is active: how many entries the filters match. */
export function matchLine(matching: number): string {
  return `${matching} ${matching === 1 ? 'entry matches' : 'entries match'} the filters`;
}

export function deleteConfirmText(count: number): string {
  return `This will permanently delete ${count} selected waitlist ${count === 1 ? 'entry' : 'entries'}. This action cannot be undone.`;
}

export const adminToasts = {
  noSelectionExport: { title: 'No entries selected', description: 'Please select entries to export' },
  noSelectionDelete: { title: 'No entries selected', description: 'Please select entries to delete' },
  loadFailed: { title: 'Error', description: 'Failed to load waitlist entries' },
  deleted: (count: number): ToastText => ({ title: 'Delete successful', description: `Deleted ${count} entries` }),
  deleteFailed: (message: string): ToastText => ({ title: 'Error', description: `Failed to delete entries: ${message}` }),
  exported: (count: number, scope: 'all' | 'selected'): ToastText => ({
    title: 'Export successful',
    description: scope === 'all' ? `Exported ${count} entries` : `Exported ${count} selected entries`,
  }),
  exportFailed: (message: string): ToastText => ({ title: 'Error', description: message }),
  exportTooMany: (max: number): ToastText => ({
    title: 'Error',
    description: `At most ${max} selected entries can be exported at once. Use Export All to export every entry.`,
  }),
  /** The specification gives this toast a title only. */
  signedOut: { title: 'Signed out successfully' },
  signOutFailed: (message: string): ToastText => ({ title: 'Error signing out', description: message }),
  /** Not in the specification: the admin API refused the session (401). */
  sessionExpired: { title: 'Session expired', description: 'Please sign in again.' },
  // Not in the specification: launch invites (issue 9).
  noSelectionInvite: { title: 'No entries selected', description: 'Please select entries to invite' },
  mailOff: (reason: string): ToastText => ({ title: 'Cannot send invites', description: reason }),
  invited: (result: InviteCounts): ToastText => ({ title: 'Invites queued', description: inviteResultText(result) }),
  inviteFailed: (message: string): ToastText => ({ title: 'Error', description: `Failed to invite: ${message}` }),
} as const;

// ---------------------------------------------------------------------------------------------
// Beside the specification (issue 9): the Status column, Invite Selected and the e-mail area.

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The Status column's header and its badge per status. */
export const statusTexts = {
  column: 'Status',
  labels: {
    pending: 'Pending',
    joined: 'Joined',
    confirmed: 'Confirmed',
    invited: 'Invited',
    unsubscribed: 'Unsubscribed',
  } satisfies Record<EntryStatus, string>,
  /** The badge's tooltip: what the status means, and when it was reached (null: not recorded). */
  hints: {
    pending: (at: string | null) => (at ? `Confirmation e-mail sent ${at}; link not used yet` : 'Confirmation link not used yet'),
    joined: () => 'Joined without a confirmation step',
    confirmed: (at: string | null) => (at ? `Confirmed the address on ${at}` : 'Confirmed the address'),
    invited: (at: string | null) => (at ? `Launch invite queued on ${at}` : 'Launch invite queued'),
    unsubscribed: (at: string | null) => (at ? `Unsubscribed on ${at}; never e-mailed again` : 'Unsubscribed; never e-mailed again'),
  } satisfies Record<EntryStatus, (at: string | null) => string>,
};

export interface InviteCounts {
  invited: number;
  skipped: { pending: number; unsubscribed: number; alreadyInvited: number };
}

/** 'Invited N. Skipped: P pending, U unsubscribed, I already invited.' */
export function inviteResultText({ invited, skipped }: InviteCounts): string {
  return `Invited ${invited}. Skipped: ${skipped.pending} pending, ${skipped.unsubscribed} unsubscribed, ${skipped.alreadyInvited} already invited.`;
}

export const inviteTexts = {
  button: 'Invite Selected',
  confirm: 'Send invites',
  title: (invitable: number) => `Invite ${plural(invitable, 'person', 'people')}?`,
  /** The dialog's text: how many get the invite, and how many of the selection are left out. */
  text: (invitable: number, selected: number) => {
    if (invitable === 0) {
      return selected === 1
        ? 'The selected person cannot be invited: pending, unsubscribed or already invited.'
        : `None of the ${selected} selected people can be invited: they are pending, unsubscribed or already invited.`;
    }
    const who =
      invitable === selected
        ? `The launch invite e-mail will be queued for ${invitable === 1 ? 'the selected person' : `all ${selected} selected people`}`
        : `The launch invite e-mail will be queued for ${invitable} of the ${plural(selected, 'selected person', 'selected people')}`;
    const skipped = selected - invitable;
    const rest = skipped > 0 ? ` ${plural(skipped, 'person is', 'people are')} skipped: pending, unsubscribed or already invited.` : '';
    return `${who}, who will be marked invited.${rest}`;
  },
};

export const mailTexts = {
  heading: 'E-mail',
  /** Shown, and given as Invite Selected's description, when the server has no SMTP_URL. */
  off: 'E-mail is off: set SMTP_URL, MAIL_FROM and PUBLIC_URL to send confirmations and invites.',
  loading: 'Loading e-mail status',
  loadFailed: 'The e-mail status could not be loaded.',
  tryAgain: 'Try again',
  sender: 'Sending as',
  confirmation: { label: 'Signup confirmation', required: 'required (double opt-in)', off: 'off' },
  counts: { queued: 'Queued', sending: 'Sending', sent: 'Sent', failed: 'Failed' },
  outbox: 'Outbox',
  outboxMessages: 'Outbox messages',
  filterLabel: 'Show messages',
  filters: { all: 'All', queued: 'Queued', sent: 'Sent', failed: 'Failed' },
  empty: {
    all: 'No e-mail has been queued yet.',
    queued: 'Nothing is waiting to be sent.',
    sent: 'No message has been sent yet.',
    failed: 'No message has failed.',
  },
  outboxLoading: 'Loading messages',
  outboxFailed: 'The messages could not be loaded.',
  columns: { to: 'Recipient', subject: 'Subject', status: 'Status', time: 'Time', reason: 'Last error' },
  kinds: { confirmation: 'Confirmation', invite: 'Invite', welcome: 'Welcome', test: 'Test' } as Record<string, string>,
  statuses: { queued: 'Queued', sending: 'Sending', sent: 'Sent', failed: 'Failed' },
  times: { queued: 'Queued', retry: 'Next try', sent: 'Sent' },
  tries: (n: number) => `${n} ${n === 1 ? 'try' : 'tries'}`,
  selectAll: 'Select all failed messages shown',
  selectRow: (to: string) => `Select the message to ${to}`,
  retry: 'Retry',
  retryLabel: (to: string) => `Retry the message to ${to}`,
  retrySelected: (n: number) => `Retry selected (${n})`,
  loadMore: 'Load more',
  showing: (shown: number) => `Showing ${plural(shown, 'message', 'messages')}, newest first.`,
  noReason: 'No reason recorded',
};

export const mailToasts = {
  retried: (n: number): ToastText => ({
    title: 'Queued again',
    description: n === 1 ? '1 message will be sent again shortly.' : `${n} messages will be sent again shortly.`,
  }),
  retryFailed: (message: string): ToastText => ({ title: 'Error', description: `Failed to retry: ${message}` }),
  loadFailed: (message: string): ToastText => ({ title: 'Error', description: `Failed to load e-mail: ${message}` }),
};

// ---------------------------------------------------------------------------------------------
// Beside the specification (issue 10): search and filters, the Source column, live updates.

export const filterTexts = {
  /** The filter bar's accessible name (a search landmark). */
  form: 'Filter the waitlist',
  search: 'Search',
  searchPlaceholder: 'E-mail or @domain',
  from: 'From',
  to: 'To',
  /** Said once under the date fields, which they describe. */
  utc: 'Dates are days in UTC.',
  country: 'Country',
  source: 'Source',
  campaign: 'Campaign',
  status: 'Status',
  anyValue: 'Any',
  anyStatus: 'Any status',
  /** What the `(none)` filter value means per field, offered among the suggestions. */
  none: { country: 'Unknown', source: 'Direct', campaign: 'No campaign' },
  clear: 'Clear filters',
  /** Phones only: shows or hides the filters besides the search. */
  more: 'More filters',
  fewer: 'Fewer filters',
  noMatch: 'No entries match the filters.',
};

/** The Source column: the entry's source, with its whole attribution in the cell's tooltip. */
export const sourceTexts = {
  column: 'Source',
  tooltip(entry: Pick<WaitlistEntry, 'source' | 'utm_source' | 'utm_medium' | 'utm_campaign' | 'utm_term' | 'utm_content' | 'referrer' | 'landing_path'>): string {
    const parts: Array<[string, string | null]> = [
      ['utm_source', entry.utm_source],
      ['utm_medium', entry.utm_medium],
      ['utm_campaign', entry.utm_campaign],
      ['utm_term', entry.utm_term],
      ['utm_content', entry.utm_content],
      ['Referrer', entry.referrer],
      ['Landing page', entry.landing_path],
    ];
    const known = parts.filter((part): part is [string, string] => part[1] !== null);
    const head = `Source: ${formatSource(entry.source)}`;
    return known.length === 0 ? `${head} (no campaign or referrer recorded)` : [head, ...known.map(([name, value]) => `${name}: ${value}`)].join('\n');
  },
};

export const exportTexts = {
  /** Adds the attribution columns after the specification's four. */
  attribution: 'Include attribution columns',
};

/** The live-updates indicator (status text, read politely by screen readers). */
export const liveTexts = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  /** The indicator's title, for sighted users who wonder what it is. */
  hint: 'New signups appear here without a reload.',
};

export const loadTexts = {
  more: (loaded: number, of: number) => `Loading more… ${loaded} of ${of} loaded`,
  stopped: (loaded: number, of: number) => `Showing ${loaded} of ${of} entries: loading stopped.`,
  tryAgain: 'Try again',
  failed: 'The waitlist could not be loaded.',
};
