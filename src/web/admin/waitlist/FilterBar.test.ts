import { describe, expect, it } from 'vitest';
import { draftToFilter } from './FilterBar.js';

describe('the filter in the page address', () => {
  it('turns the fields as typed into a filter: trimmed, whole valid days only, an impossible range cut', () => {
    const draft = { q: '  ann ', from: '2026-02-01', to: '2026-01-01', country: ' ', source: 'newsletter', campaign: '', status: '' as const };
    expect(draftToFilter(draft)).toEqual({ q: 'ann', from: '2026-02-01', source: 'newsletter' });
    expect(draftToFilter({ ...draft, from: '0002-02-01', to: '2026-02-31' })).toEqual({ q: 'ann', source: 'newsletter' });
    expect(draftToFilter({ ...draft, from: '', to: '2026-03-01', status: 'pending' })).toEqual({ q: 'ann', to: '2026-03-01', source: 'newsletter', status: 'pending' });
  });
});
