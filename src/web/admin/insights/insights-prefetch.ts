import type { WaitlistInsights } from '../../../shared/admin/waitlist-api.js';
import { filterToSearchParams, type WaitlistFilter } from '../../../shared/admin/waitlist-filter.js';
import { fetchWaitlistInsights } from '../common/admin-api.js';
import { EarlyRequest } from '../common/early-request.js';

/** The insight panel's request key for a filter: its canonical query (equal filters, equal keys). */
export function insightsKey(filter: WaitlistFilter): string {
  return filterToSearchParams(filter).toString();
}

/** The filter a key stands for. */
export function insightsView(key: string): WaitlistFilter {
  return Object.fromEntries(new URLSearchParams(key)) as WaitlistFilter;
}

const early = new EarlyRequest<WaitlistInsights>();

/**
 * Starts the insight panel's first request the moment the table's first page has arrived, instead
 * of once the table has rendered and the panel mounted (~0.1 s later on a busy machine; the panel
 * waits for the first page so as not to hold it back). The panel takes the answer up with
 * `takePrefetchedInsights`; a newer prefetch replaces one never taken.
 */
export function prefetchInsights(filter: WaitlistFilter, fetchInsights: typeof fetchWaitlistInsights = fetchWaitlistInsights): void {
  const key = insightsKey(filter);
  early.start(key, (signal) => fetchInsights(insightsView(key), signal));
}

/** Drops a prefetch never taken up (the page is left), aborting its request. */
export function dropPrefetchedInsights(): void {
  early.drop();
}

/**
 * The prefetched answer for `key`, once (aborted with `signal`), or null: none was started for it,
 * and one started for another key, or too long ago (5 s), is dropped.
 */
export function takePrefetchedInsights(key: string, signal: AbortSignal): Promise<WaitlistInsights> | null {
  return early.take(key, signal);
}
