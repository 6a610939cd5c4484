import { describe, expect, it } from 'vitest';
import { adminToasts, countLine, deleteConfirmText, inviteResultText, inviteTexts, matchLine, sourceTexts, statusTexts } from './copy.js';
import { expectInvite, isInvitable, shownStatus } from './entry-status.js';
import { draftToFilter } from './FilterBar.js';
import { filterKey, searchWithFilter } from './useFilterParams.js';
import { parseWaitlistEvent, retryDelay } from './useLiveWaitlist.js';
import { filterFromSearchParams, type WaitlistFilter } from '../../shared/admin/waitlist-filter.js';
import { ENTRY_STATUSES, NO_CONSENT_RECORD, type WaitlistEntry } from '../../shared/waitlist/entry.js';
import { NO_ATTRIBUTION } from '../../shared/waitlist/attribution.js';
import { Selection } from './selection.js';
import { waitlistEntry } from '../../../tests/support/entries.js';

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
    ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION,
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

describe('the filter in the page address', () => {
  const full: WaitlistFilter = { q: '@example.com', from: '2026-01-01', to: '2026-01-31', country: 'Germany', source: '(none)', campaign: 'launch', status: 'confirmed' };

  it('round-trips every filter through the address, in a fixed order', () => {
    const search = searchWithFilter('', full);
    expect(search).toBe('?q=%40example.com&from=2026-01-01&to=2026-01-31&country=Germany&source=%28none%29&campaign=launch&status=confirmed');
    expect(filterFromSearchParams(new URLSearchParams(search))).toEqual(full);
    expect(filterKey(filterFromSearchParams(new URLSearchParams(search)))).toBe(filterKey(full));
  });

  it('keeps other parameters, drops emptied filters, and writes no "?" for no filter', () => {
    expect(searchWithFilter('?q=old&tab=mail', { q: 'new' })).toBe('?tab=mail&q=new');
    expect(searchWithFilter('?q=old&status=joined', {})).toBe('');
    expect(searchWithFilter('', { q: '', country: '' })).toBe('');
  });

  it('gives equal keys to equal filters, whatever the empty fields', () => {
    expect(filterKey({ q: 'a', country: '' })).toBe(filterKey({ q: 'a' }));
    expect(filterKey({ q: 'a' })).not.toBe(filterKey({ q: 'b' }));
  });

  it('turns the fields as typed into a filter: trimmed, whole valid days only, an impossible range cut', () => {
    const draft = { q: '  ann ', from: '2026-02-01', to: '2026-01-01', country: ' ', source: 'newsletter', campaign: '', status: '' as const };
    expect(draftToFilter(draft)).toEqual({ q: 'ann', from: '2026-02-01', source: 'newsletter' });
    expect(draftToFilter({ ...draft, from: '0002-02-01', to: '2026-02-31' })).toEqual({ q: 'ann', source: 'newsletter' });
    expect(draftToFilter({ ...draft, from: '', to: '2026-03-01', status: 'pending' })).toEqual({ q: 'ann', to: '2026-03-01', source: 'newsletter', status: 'pending' });
  });
});

describe('Selection: select-all of every match', () => {
  const at = (minute: number) => new Date(Date.UTC(2026, 10, 25, 10, minute)).toISOString();
  const row = (id: string, minute: number) => ({ id, created_at: at(minute) });

  it('selects a million matches at once, counts the unticked out, and names itself as filter + except', () => {
    const selection = new Selection();
    selection.selectMatching({ q: '@example.com', country: '' }, at(30), 1_000_000);
    expect(selection.mode).toBe('matching');
    expect(selection.size).toBe(1_000_000);
    expect(selection.isSelected(row('a', 10))).toBe(true);
    selection.toggle('a');
    selection.toggle('b', false);
    expect(selection.size).toBe(999_998);
    expect(selection.isSelected(row('a', 10))).toBe(false);
    expect(selection.toRequest()).toEqual({ filter: { q: '@example.com', until: at(30) }, except: ['a', 'b'] });
    selection.toggle('a', true);
    expect(selection.size).toBe(999_999);
    expect(selection.toArray()).toEqual([]);
  });

  it('does not cover rows that joined after its `until`, until one of them is ticked', () => {
    const selection = new Selection();
    selection.selectMatching({}, at(30), 10);
    const live = [row('n2', 32), row('n1', 31)];
    expect(selection.covers(live[0]!)).toBe(false);
    expect(selection.isSelected(live[0]!)).toBe(false);
    // Ticking the older live row moves `until` to it: that row is in, the newer one still out.
    selection.extendMatching(live[1]!.created_at, ['n1'], 'n1');
    expect(selection.size).toBe(11);
    expect(selection.isSelected(live[1]!)).toBe(true);
    expect(selection.isSelected(live[0]!)).toBe(false);
    // Ticking the newest covers it too (the rows not yet covered are passed); n1, unticked meanwhile, stays out.
    selection.toggle('n1', false);
    expect(selection.size).toBe(10);
    selection.extendMatching(live[0]!.created_at, ['n2'], 'n2');
    expect(selection.size).toBe(11);
    expect(selection.toRequest()).toEqual({ filter: { until: at(32) }, except: ['n1'] });
  });

  it('goes back to ticked ids on setAll and clears either mode', () => {
    const selection = new Selection();
    selection.selectMatching({}, at(0), 5);
    selection.setAll(['x']);
    expect(selection.mode).toBe('ids');
    expect(selection.toRequest()).toEqual({ ids: ['x'] });
    selection.selectMatching({}, at(0), 5);
    const before = selection.getVersion();
    selection.clear();
    expect(selection.size).toBe(0);
    expect(selection.mode).toBe('ids');
    expect(selection.getVersion()).toBe(before + 1);
  });
});

describe('invite expectations of a select-all', () => {
  const base = (id: string, status: WaitlistEntry['status'], minute: number): WaitlistEntry =>
    waitlistEntry({ id, email: `${id}@example.com`, created_at: new Date(Date.UTC(2026, 10, 25, 10, minute)).toISOString(), status });

  it('counts the loaded rows when they are all there, and the database counts less the unticked otherwise', () => {
    const rows = [base('a', 'joined', 3), base('b', 'pending', 2), base('c', 'confirmed', 1)];
    const selection = new Selection();
    selection.selectMatching({}, rows[0]!.created_at, 3);
    selection.toggle('c', false);
    const loaded = expectInvite(selection, rows, () => undefined, null);
    expect(loaded.counts).toEqual({ invited: 1, skipped: { pending: 1, unsubscribed: 0, alreadyInvited: 0 } });
    expect([...loaded.loadedInvitable]).toEqual(['a']);

    const statuses = [
      { status: 'joined' as const, count: 500 },
      { status: 'confirmed' as const, count: 100 },
      { status: 'pending' as const, count: 7 },
      { status: 'invited' as const, count: 3 },
    ];
    const counted = expectInvite(selection, rows, (id) => (id === 'a' ? '2026-11-25T11:00:00.000Z' : undefined), statuses);
    // c (confirmed) is unticked: one fewer invitable; a shows as invited already (the database knows).
    expect(counted.counts).toEqual({ invited: 599, skipped: { pending: 7, unsubscribed: 0, alreadyInvited: 3 } });
    expect([...counted.loadedInvitable]).toEqual([]);
  });
});

describe('live updates', () => {
  it('backs off exponentially with jitter, capped at 30 s', () => {
    expect(retryDelay(0, 0)).toBe(500);
    expect(retryDelay(0, 1)).toBe(1000);
    expect(retryDelay(3, 1)).toBe(8000);
    expect(retryDelay(20, 1)).toBe(30_000);
    expect(retryDelay(20, 0)).toBe(15_000);
  });

  it('reads the contract events and ignores anything else', () => {
    expect(parseWaitlistEvent({ event: 'ready', data: '{"asOf":"2026-11-25T10:00:00.000Z"}' })).toEqual({ type: 'ready', data: { asOf: '2026-11-25T10:00:00.000Z' } });
    expect(parseWaitlistEvent({ event: 'change', data: '{"reason":"deleted"}' })).toEqual({ type: 'change', data: { reason: 'deleted' } });
    expect(parseWaitlistEvent({ event: 'change', data: '{"reason":"exploded"}' })).toBeNull();
    expect(parseWaitlistEvent({ event: 'signup', data: 'not json' })).toBeNull();
    expect(parseWaitlistEvent({ event: 'other', data: '{}' })).toBeNull();
    expect(parseWaitlistEvent({ data: '{}' })).toBeNull();
  });
});
