import { describe, expect, it } from 'vitest';
import { fileNameFromDisposition } from './admin-api.js';
import { adminToasts, countLine, deleteConfirmText, inviteResultText, inviteTexts, statusTexts } from './copy.js';
import { isInvitable, shownStatus } from './entry-status.js';
import { ENTRY_STATUSES, NO_CONSENT_RECORD, type WaitlistEntry } from '../../shared/waitlist/entry.js';
import { countCsvRows } from '../../shared/csv.js';
import { Selection } from './selection.js';

describe('admin copy', () => {
  it('counts people, singular only for one, with the selection in brackets', () => {
    expect(countLine(0, 0)).toBe('0 people signed up');
    expect(countLine(1, 0)).toBe('1 person signed up');
    expect(countLine(2, 0)).toBe('2 people signed up');
    expect(countLine(100000, 1)).toBe('100000 people signed up (1 selected)');
    expect(countLine(1, 1)).toBe('1 person signed up (1 selected)');
  });

  it('words the delete confirmation for one and for many', () => {
    expect(deleteConfirmText(1)).toBe('This will permanently delete 1 selected waitlist entry. This action cannot be undone.');
    expect(deleteConfirmText(3)).toBe('This will permanently delete 3 selected waitlist entries. This action cannot be undone.');
  });

  it('has the spec toasts', () => {
    expect(adminToasts.deleted(2)).toEqual({ title: 'Delete successful', description: 'Deleted 2 entries' });
    expect(adminToasts.exported(5, 'all')).toEqual({ title: 'Export successful', description: 'Exported 5 entries' });
    expect(adminToasts.exported(2, 'selected')).toEqual({ title: 'Export successful', description: 'Exported 2 selected entries' });
    expect(adminToasts.deleteFailed('boom')).toEqual({ title: 'Error', description: 'Failed to delete entries: boom' });
    expect(adminToasts.loadFailed).toEqual({ title: 'Error', description: 'Failed to load waitlist entries' });
    expect(adminToasts.noSelectionExport.description).toBe('Please select entries to export');
    expect(adminToasts.noSelectionDelete.description).toBe('Please select entries to delete');
    expect(adminToasts.noSelectionExport.title).toBe('No entries selected');
    expect(adminToasts.signedOut).toEqual({ title: 'Signed out successfully' });
    expect(adminToasts.signOutFailed('boom')).toEqual({ title: 'Error signing out', description: 'boom' });
  });
});

describe('fileNameFromDisposition', () => {
  it('reads quoted, bare and RFC 5987 names', () => {
    expect(fileNameFromDisposition('attachment; filename="waitlist_all.csv"')).toBe('waitlist_all.csv');
    expect(fileNameFromDisposition('attachment; filename=waitlist_selected.csv')).toBe('waitlist_selected.csv');
    expect(fileNameFromDisposition(`attachment; filename="x.csv"; filename*=UTF-8''liste%20%C3%A4.csv`)).toBe('liste ä.csv');
    expect(fileNameFromDisposition('attachment; filename="a \\"b\\".csv"')).toBe('a "b".csv');
  });

  it('gives null when there is no usable name, and never a path', () => {
    expect(fileNameFromDisposition(null)).toBeNull();
    expect(fileNameFromDisposition('attachment')).toBeNull();
    expect(fileNameFromDisposition('attachment; filename=".."')).toBeNull();
    expect(fileNameFromDisposition('attachment; filename="../../etc/x.csv"')).toBe('x.csv');
  });
});

describe('countCsvRows', () => {
  it('counts data rows, not the header, the BOM or a final line break', () => {
    expect(countCsvRows('\uFEFFEmail,Date Joined,IP Address,Location\r\n')).toBe(0);
    expect(countCsvRows('\uFEFFEmail,Date Joined\r\na@x.com,"Nov 22, 2026, 06:04 AM"\r\nb@x.com,x\r\n')).toBe(2);
    expect(countCsvRows('h\na\nb')).toBe(2);
  });

  it('ignores line breaks inside quoted cells', () => {
    expect(countCsvRows('h1,h2\r\n"multi\r\nline",x\r\n"say ""hi""",y\r\n')).toBe(2);
  });
});

describe('Selection', () => {
  it('toggles in place and bumps its version only on real changes', () => {
    const selection = new Selection();
    let notified = 0;
    const unsubscribe = selection.subscribe(() => (notified += 1));
    selection.toggle('a');
    selection.toggle('b', true);
    selection.toggle('b', true);
    expect(selection.size).toBe(2);
    expect(selection.has('a')).toBe(true);
    selection.toggle('a');
    expect(selection.has('a')).toBe(false);
    expect(notified).toBe(3);
    expect(selection.getVersion()).toBe(3);
    unsubscribe();
    selection.toggle('c');
    expect(notified).toBe(3);
  });

  it('selects, toggles and clears 100,000 ids', () => {
    const ids = Array.from({ length: 100_000 }, (_, i) => `id-${i}`);
    const selection = new Selection();
    selection.setAll(ids);
    expect(selection.size).toBe(100_000);
    for (let i = 0; i < 1000; i += 1) selection.toggle(`id-${i}`);
    expect(selection.size).toBe(99_000);
    selection.clear();
    expect(selection.size).toBe(0);
  });

  it('forgets removed ids', () => {
    const selection = new Selection();
    selection.setAll(['a', 'b', 'c']);
    selection.remove(['a', 'x']);
    expect(selection.toArray().sort()).toEqual(['b', 'c']);
  });
});

describe('invites and statuses', () => {
  const entry = (over: Partial<WaitlistEntry>): WaitlistEntry => ({
    id: 'a',
    email: 'a@example.com',
    created_at: '2026-01-01T00:00:00.000Z',
    ip_address: null,
    country: null,
    city: null,
    region: null,
    ...NO_CONSENT_RECORD,
    ...over,
  });

  it('words the invite result and the confirmation', () => {
    expect(inviteResultText({ invited: 95, skipped: { pending: 2, unsubscribed: 1, alreadyInvited: 4 } })).toBe(
      'Invited 95. Skipped: 2 pending, 1 unsubscribed, 4 already invited.',
    );
    expect(adminToasts.invited({ invited: 1, skipped: { pending: 0, unsubscribed: 0, alreadyInvited: 0 } })).toEqual({
      title: 'Invites queued',
      description: 'Invited 1. Skipped: 0 pending, 0 unsubscribed, 0 already invited.',
    });
    expect(inviteTexts.title(1)).toBe('Invite 1 person?');
    expect(inviteTexts.title(3)).toBe('Invite 3 people?');
    expect(inviteTexts.text(1, 1)).toBe('The launch invite e-mail will be queued for the selected person, who will be marked invited.');
    expect(inviteTexts.text(3, 3)).toBe('The launch invite e-mail will be queued for all 3 selected people, who will be marked invited.');
    expect(inviteTexts.text(2, 3)).toBe(
      'The launch invite e-mail will be queued for 2 of the 3 selected people, who will be marked invited. 1 person is skipped: pending, unsubscribed or already invited.',
    );
    expect(inviteTexts.text(0, 1)).toBe('The selected person cannot be invited: pending, unsubscribed or already invited.');
    expect(inviteTexts.text(0, 4)).toBe('None of the 4 selected people can be invited: they are pending, unsubscribed or already invited.');
  });

  it('shows a row invited once the page invited it, else its own status and time', () => {
    expect(shownStatus(entry({ status: 'confirmed', confirmed_at: '2026-02-01T00:00:00.000Z' }), undefined)).toEqual({
      status: 'confirmed',
      since: '2026-02-01T00:00:00.000Z',
    });
    expect(shownStatus(entry({ status: 'joined' }), '2026-03-01T00:00:00.000Z')).toEqual({ status: 'invited', since: '2026-03-01T00:00:00.000Z' });
    expect(shownStatus(entry({ status: 'joined' }), undefined)).toEqual({ status: 'joined', since: null });
    expect(ENTRY_STATUSES.filter(isInvitable)).toEqual(['joined', 'confirmed']);
    for (const status of ENTRY_STATUSES) expect(statusTexts.labels[status]).toMatch(/^[A-Z]/);
  });
});
