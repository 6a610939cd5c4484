/** The e-mail area's texts (beside the specification, issue 9). */
import type { ToastText } from '../../site/toast.js';
import { mailOffText, plural } from '../common/copy.js';

export const mailTexts = {
  heading: 'E-mail',
  /** A viewer's e-mail area: the outbox's rows carry addresses (issue 32 point 4). */
  outboxForAdmins: 'The outbox (who was sent what) is shown to admins and owners.',
  /** Shown, and given as Invite Selected's description, when the server has no SMTP_URL. */
  off: mailOffText,
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
