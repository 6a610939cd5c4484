import type { WaitlistInsights } from '../../shared/admin/waitlist-api.js';
import { filterToSearchParams, type WaitlistFilter } from '../../shared/admin/waitlist-filter.js';
import { fetchWaitlistInsights } from './admin-api.js';

/** The insight panel's request key for a filter: its canonical query (equal filters, equal keys). */
export function insightsKey(filter: WaitlistFilter): string {
  return filterToSearchParams(filter).toString();
}

/** The filter a key stands for. */
export function insightsView(key: string): WaitlistFilter {
  return Object.fromEntries(new URLSearchParams(key)) as WaitlistFilter;
}

/** A prefetch older than this is not taken up: the panel asks again. */
const PREFETCH_MAX_AGE_MS = 5000;

let prefetched: { key: string; answer: Promise<WaitlistInsights>; controller: AbortController; at: number } | null = null;

/**
 * Starts the insight panel's first request the moment the table's first page has arrived, instead
 * of once the table has rendered and the panel mounted (~0.1 s later on a busy machine; the panel
 * waits for the first page so as not to hold it back). The panel takes the answer up with
 * `takePrefetchedInsights`; a newer prefetch replaces one never taken.
 */
export function prefetchInsights(filter: WaitlistFilter, fetchInsights: typeof fetchWaitlistInsights = fetchWaitlistInsights): void {
  prefetched?.controller.abort();
  const key = insightsKey(filter);
  const controller = new AbortController();
  const answer = fetchInsights(insightsView(key), controller.signal);
  // Whoever takes it up sees a failure; until then it is not an unhandled one.
  answer.catch(() => undefined);
  prefetched = { key, answer, controller, at: Date.now() };
}

/** Drops a prefetch never taken up (the page is left), aborting its request. */
export function dropPrefetchedInsights(): void {
  prefetched?.controller.abort();
  prefetched = null;
}

/**
 * The prefetched answer for `key`, once (aborted with `signal`), or null: none was started for it,
 * and one started for another key, or too long ago, is dropped.
 */
export function takePrefetchedInsights(key: string, signal: AbortSignal): Promise<WaitlistInsights> | null {
  const taken = prefetched;
  prefetched = null;
  if (taken === null) return null;
  if (taken.key !== key || Date.now() - taken.at > PREFETCH_MAX_AGE_MS) {
    taken.controller.abort();
    return null;
  }
  if (signal.aborted) taken.controller.abort();
  else signal.addEventListener('abort', () => taken.controller.abort(), { once: true });
  return taken.answer;
}
