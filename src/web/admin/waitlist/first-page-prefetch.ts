import type { WaitlistPage } from '../../../shared/admin/waitlist-api.js';
import type { WaitlistFilter } from '../../../shared/admin/waitlist-filter.js';
import { EarlyRequest } from '../common/early-request.js';
import { filterKey } from './useFilterParams.js';
import { fetchWaitlistPage } from './waitlist-api.js';

/** The first page is small, so the first rows show at once however long the waitlist is. */
export const FIRST_PAGE_SIZE = 150;

const earlyFirstPage = new EarlyRequest<WaitlistPage>();

/**
 * Starts the first page's request for `filter` as soon as the page knows it is signed in (from the
 * stored session), before the table has rendered: the first view of useWaitlist takes it up when its
 * filter is the same (within 5 s), instead of asking once mounted.
 */
export function prefetchFirstPage(filter: WaitlistFilter, fetchPage: typeof fetchWaitlistPage = fetchWaitlistPage): void {
  earlyFirstPage.start(filterKey(filter), (signal) => fetchPage({ limit: FIRST_PAGE_SIZE, filter }, signal));
}

/** Drops a first page never taken up (the page is left), aborting its request. */
export function dropPrefetchedFirstPage(): void {
  earlyFirstPage.drop();
}

/** The prefetched first page for the filter with `key`, once, or null (see EarlyRequest.take). */
export function takePrefetchedFirstPage(key: string, signal: AbortSignal): Promise<WaitlistPage> | null {
  return earlyFirstPage.take(key, signal);
}
