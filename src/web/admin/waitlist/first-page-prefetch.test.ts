import { afterEach, describe, expect, it } from 'vitest';
import type { WaitlistPage } from '../../../shared/admin/waitlist-api.js';
import type { WaitlistFilter } from '../../../shared/admin/waitlist-filter.js';
import { filterKey } from './useFilterParams.js';
import { dropPrefetchedFirstPage, FIRST_PAGE_SIZE, prefetchFirstPage, takePrefetchedFirstPage } from './first-page-prefetch.js';

/** A stand-in for the page request: records what was asked and answers when told. */
function requests() {
  const asked: Array<{ limit: number; filter: WaitlistFilter | undefined; signal: AbortSignal; answer: (page: WaitlistPage) => void }> = [];
  const fetcher = ({ limit, filter }: { limit: number; filter?: WaitlistFilter }, signal?: AbortSignal) =>
    new Promise<WaitlistPage>((resolve, reject) => {
      asked.push({ limit, filter, signal: signal!, answer: resolve });
      signal!.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
    });
  return { asked, fetcher };
}
const page = { entries: [], total: 1 } as unknown as WaitlistPage;

describe('the table’s first page, asked for before the table renders', () => {
  afterEach(() => dropPrefetchedFirstPage());

  it('is the first page of the filter, taken up once for the same filter', async () => {
    const { asked, fetcher } = requests();
    prefetchFirstPage({ country: 'Canada', q: '@example.org' }, fetcher);
    expect(asked.map(({ limit, filter }) => ({ limit, filter }))).toEqual([{ limit: FIRST_PAGE_SIZE, filter: { country: 'Canada', q: '@example.org' } }]);
    const taken = takePrefetchedFirstPage(filterKey({ q: '@example.org', country: 'Canada' }), new AbortController().signal);
    expect(taken).not.toBeNull();
    asked[0]!.answer(page);
    await expect(taken).resolves.toBe(page);
    expect(takePrefetchedFirstPage(filterKey({ country: 'Canada', q: '@example.org' }), new AbortController().signal)).toBeNull();
  });

  it('is dropped, its request aborted, for another filter, when the table is aborted, and when the page is left', () => {
    const { asked, fetcher } = requests();
    prefetchFirstPage({ country: 'Canada' }, fetcher);
    expect(takePrefetchedFirstPage(filterKey({ country: 'Mexico' }), new AbortController().signal)).toBeNull();
    expect(asked[0]!.signal.aborted).toBe(true);

    prefetchFirstPage({}, fetcher);
    const table = new AbortController();
    expect(takePrefetchedFirstPage(filterKey({}), table.signal)).not.toBeNull();
    table.abort();
    expect(asked[1]!.signal.aborted).toBe(true);

    prefetchFirstPage({}, fetcher);
    dropPrefetchedFirstPage();
    expect(asked[2]!.signal.aborted).toBe(true);
    expect(takePrefetchedFirstPage(filterKey({}), new AbortController().signal)).toBeNull();
  });
});
