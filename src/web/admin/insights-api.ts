import { ADMIN_INSIGHTS_PATH, waitlistInsightsSchema, type WaitlistInsights } from '../../shared/admin/waitlist-api.js';
import { filterToSearchParams, type WaitlistFilter } from '../../shared/admin/waitlist-filter.js';
import { readJson, request } from './admin-api.js';

/** GET the insight panel's numbers for the view's filter (the same query names as the page URL). */
export async function fetchWaitlistInsights(filter: WaitlistFilter, signal?: AbortSignal): Promise<WaitlistInsights> {
  const query = filterToSearchParams(filter).toString();
  const response = await request(query ? `${ADMIN_INSIGHTS_PATH}?${query}` : ADMIN_INSIGHTS_PATH, { signal });
  return readJson(response, waitlistInsightsSchema);
}
