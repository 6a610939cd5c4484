import { afterEach, describe, expect, it, vi } from 'vitest';
import type { WaitlistInsights } from '../../../shared/admin/waitlist-api.js';
import type { WaitlistFilter } from '../../../shared/admin/waitlist-filter.js';
import { dropPrefetchedInsights, insightsKey, prefetchInsights, takePrefetchedInsights } from './insights-prefetch.js';

/** A stand-in for the insights request: records what was asked and answers when told. */
function requests() {
  const asked: Array<{ filter: WaitlistFilter; signal: AbortSignal; answer: (value: WaitlistInsights) => void }> = [];
  const fetcher = (filter: WaitlistFilter, signal?: AbortSignal) =>
    new Promise<WaitlistInsights>((resolve, reject) => {
      asked.push({ filter, signal: signal!, answer: resolve });
      signal!.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
    });
  return { asked, fetcher };
}
const numbers = { total: 3 } as unknown as WaitlistInsights;

describe('the insight panel’s first request, started early', () => {
  afterEach(() => {
    dropPrefetchedInsights();
    vi.useRealTimers();
  });

  it('is taken up once by the panel for the same view', async () => {
    const { asked, fetcher } = requests();
    prefetchInsights({ campaign: 'spring', country: 'Canada' }, fetcher);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.filter).toEqual({ campaign: 'spring', country: 'Canada' });
    // The same view, its keys in another order: the same key.
    const taken = takePrefetchedInsights(insightsKey({ country: 'Canada', campaign: 'spring' }), new AbortController().signal);
    expect(taken).not.toBeNull();
    asked[0]!.answer(numbers);
    await expect(taken).resolves.toBe(numbers);
    expect(takePrefetchedInsights(insightsKey({ campaign: 'spring', country: 'Canada' }), new AbortController().signal)).toBeNull();
  });

  it('is dropped, and its request aborted, when the panel opens on another view', () => {
    const { asked, fetcher } = requests();
    prefetchInsights({ country: 'Canada' }, fetcher);
    expect(takePrefetchedInsights(insightsKey({ country: 'Mexico' }), new AbortController().signal)).toBeNull();
    expect(asked[0]!.signal.aborted).toBe(true);
    expect(takePrefetchedInsights(insightsKey({ country: 'Canada' }), new AbortController().signal)).toBeNull();
  });

  it('is aborted with the panel’s request, and replaced by a newer one', async () => {
    const { asked, fetcher } = requests();
    prefetchInsights({}, fetcher);
    const panel = new AbortController();
    const taken = takePrefetchedInsights(insightsKey({}), panel.signal)!;
    panel.abort();
    expect(asked[0]!.signal.aborted).toBe(true);
    await expect(taken).rejects.toThrow(/aborted/);
    prefetchInsights({ q: 'a' }, fetcher);
    prefetchInsights({ q: 'b' }, fetcher);
    expect(asked[1]!.signal.aborted).toBe(true);
    expect(asked[2]!.signal.aborted).toBe(false);
    expect(takePrefetchedInsights(insightsKey({ q: 'b' }), new AbortController().signal)).not.toBeNull();
  });

  it('is dropped when the page is left, or when the panel comes seconds later', () => {
    const { asked, fetcher } = requests();
    prefetchInsights({ country: 'Canada' }, fetcher);
    dropPrefetchedInsights();
    expect(asked[0]!.signal.aborted).toBe(true);
    expect(takePrefetchedInsights(insightsKey({ country: 'Canada' }), new AbortController().signal)).toBeNull();

    vi.useFakeTimers({ now: Date.parse('2026-11-28T10:00:00Z') });
    prefetchInsights({ country: 'Canada' }, fetcher);
    vi.setSystemTime(Date.parse('2026-11-28T10:00:06Z'));
    expect(takePrefetchedInsights(insightsKey({ country: 'Canada' }), new AbortController().signal)).toBeNull();
    expect(asked[1]!.signal.aborted).toBe(true);
  });
});
