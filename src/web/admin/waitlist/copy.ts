/** The waitlist panel's texts: those the specification fixes, plus the few it leaves to us. */
import type { ToastText } from '../../site/toast.js';
import type { WaitlistEntry } from '../../../shared/waitlist/entry.js';
import { formatSource } from '../../../shared/waitlist/attribution.js';
import { plural } from '../common/copy.js';

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

export const waitlistToasts = {
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
  // Not in the specification: launch invites (issue 9).
  noSelectionInvite: { title: 'No entries selected', description: 'Please select entries to invite' },
  mailOff: (reason: string): ToastText => ({ title: 'Cannot send invites', description: reason }),
  invited: (result: InviteCounts): ToastText => ({ title: 'Invites queued', description: inviteResultText(result) }),
  inviteFailed: (message: string): ToastText => ({ title: 'Error', description: `Failed to invite: ${message}` }),
} as const;

// ---------------------------------------------------------------------------------------------
// Beside the specification (issue 9): Invite Selected.

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

// ---------------------------------------------------------------------------------------------
// Beside the specification (issue 28): held signups, approved or rejected.

export const heldTexts = {
  group: 'Held signups',
  approve: 'Approve Selected',
  reject: 'Reject Selected',
  rejectTitle: 'Reject the held signups?',
  rejectText: (count: number) =>
    `This will permanently delete ${plural(count, 'selected held signup', 'selected held signups')}. They get no e-mail. This action cannot be undone.`,
  rejectConfirm: 'Reject',
  noSelection: { title: 'No entries selected', description: 'Please select held signups to approve or reject' },
  approved: (count: number): ToastText => ({ title: 'Approved', description: `${plural(count, 'held signup', 'held signups')} joined the waitlist` }),
  rejected: (count: number): ToastText => ({ title: 'Rejected', description: `Deleted ${plural(count, 'held signup', 'held signups')}` }),
  failed: (message: string): ToastText => ({ title: 'Error', description: message }),
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
