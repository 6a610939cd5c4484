import { describe, expect, it } from 'vitest';
import { NO_ATTRIBUTION } from '../../../shared/waitlist/attribution.js';
import { ENTRY_STATUSES, NO_CONSENT_RECORD, type WaitlistEntry } from '../../../shared/waitlist/entry.js';
import { waitlistEntry } from '../../../../tests/support/entries.js';
import { statusTexts } from '../common/copy.js';
import { expectInvite, isInvitable, shownStatus } from './entry-status.js';
import { Selection } from './selection.js';

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
