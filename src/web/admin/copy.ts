/** Every text of the admin panel that the specification fixes, plus the few it leaves to us. */
import type { ToastText } from '../site/toast.js';

/** 'N person signed up' / 'N people signed up', plus ' (N selected)' while rows are ticked. */
export function countLine(total: number, selected: number): string {
  const people = `${total} ${total === 1 ? 'person' : 'people'} signed up`;
  return selected > 0 ? `${people} (${selected} selected)` : people;
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
} as const;
