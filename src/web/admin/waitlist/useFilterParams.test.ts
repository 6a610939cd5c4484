import { describe, expect, it } from 'vitest';
import { filterFromSearchParams, type WaitlistFilter } from '../../../shared/admin/waitlist-filter.js';
import { filterKey, searchWithFilter } from './useFilterParams.js';

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
});
