import { describe, expect, it } from 'vitest';
import { sessionToasts } from '../common/copy.js';
import { countLine, deleteConfirmText, inviteResultText, inviteTexts, matchLine, sourceTexts, waitlistToasts } from './copy.js';

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
    expect(waitlistToasts.deleted(2)).toEqual({ title: 'Delete successful', description: 'Deleted 2 entries' });
    expect(waitlistToasts.exported(5, 'all')).toEqual({ title: 'Export successful', description: 'Exported 5 entries' });
    expect(waitlistToasts.exported(2, 'selected')).toEqual({ title: 'Export successful', description: 'Exported 2 selected entries' });
    expect(waitlistToasts.deleteFailed('boom')).toEqual({ title: 'Error', description: 'Failed to delete entries: boom' });
    expect(waitlistToasts.loadFailed).toEqual({ title: 'Error', description: 'Failed to load waitlist entries' });
    expect(waitlistToasts.noSelectionExport.description).toBe('Please select entries to export');
    expect(waitlistToasts.noSelectionDelete.description).toBe('Please select entries to delete');
    expect(waitlistToasts.noSelectionExport.title).toBe('No entries selected');
    expect(sessionToasts.signedOut).toEqual({ title: 'Signed out successfully' });
    expect(sessionToasts.signOutFailed('boom')).toEqual({ title: 'Error signing out', description: 'boom' });
  });
});

describe('invites and statuses', () => {
  it('words the invite result and the confirmation', () => {
    expect(inviteResultText({ invited: 95, skipped: { pending: 2, unsubscribed: 1, alreadyInvited: 4 } })).toBe(
      'Invited 95. Skipped: 2 pending, 1 unsubscribed, 4 already invited.',
    );
    expect(waitlistToasts.invited({ invited: 1, skipped: { pending: 0, unsubscribed: 0, alreadyInvited: 0 } })).toEqual({
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
});

describe('filters and the Source column', () => {
  it('words the second count line, singular only for one', () => {
    expect(matchLine(0)).toBe('0 entries match the filters');
    expect(matchLine(1)).toBe('1 entry matches the filters');
    expect(matchLine(1234)).toBe('1234 entries match the filters');
  });

  it("puts the whole attribution in the Source cell's tooltip", () => {
    const none = { source: null, utm_source: null, utm_medium: null, utm_campaign: null, utm_term: null, utm_content: null, referrer: null, landing_path: null };
    expect(sourceTexts.tooltip(none)).toBe('Source: Direct (no campaign or referrer recorded)');
    expect(
      sourceTexts.tooltip({ ...none, source: 'newsletter', utm_source: 'Newsletter', utm_campaign: 'launch', referrer: 'https://news.example', landing_path: '/' }),
    ).toBe('Source: newsletter\nutm_source: Newsletter\nutm_campaign: launch\nReferrer: https://news.example\nLanding page: /');
  });
});
