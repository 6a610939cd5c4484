import { useCallback, useEffect, useEffectEvent, useRef, useState } from 'react';
import type { WaitlistInsights } from '../../../shared/admin/waitlist-api.js';
import type { WaitlistFilter } from '../../../shared/admin/waitlist-filter.js';
import { fetchWaitlistInsights, isAbort } from '../common/admin-api.js';
import { InsightRefresh } from './insight-refresh.js';
import { insightsKey, insightsView, takePrefetchedInsights } from './insights-prefetch.js';

export interface InsightsState {
  /** The last numbers loaded (kept while newer ones load, and after a refresh fails). */
  data: WaitlistInsights | null;
  /** The view (filter key) `data` is for. */
  dataKey: string | null;
  /** A request is running. */
  loading: boolean;
  /** The last request failed. */
  failed: boolean;
}

export interface UseInsights extends InsightsState {
  /** `data` is for another filter than the one shown (a new one is on its way). */
  stale: boolean;
  retry: () => void;
}

/**
 * GET the insight panel's numbers for `filter`: at once on opening, after a short quiet on filter
 * changes, and at most every few seconds while live updates bump `liveVersion` (insight-refresh.ts).
 * `onError` gets every failure but aborts.
 */
export function useInsights(filter: WaitlistFilter, liveVersion: number, onError: (error: unknown) => void): UseInsights {
  // The canonical query (FILTER_KEYS only, fixed order): equal filters give equal keys, and the
  // key alone is enough to make the request again.
  const key = insightsKey(filter);
  const [state, setState] = useState<InsightsState>({ data: null, dataKey: null, loading: true, failed: false });
  const reportError = useEffectEvent(onError);
  const refresh = useRef<InsightRefresh | null>(null);
  /** Only the panel's first load may use the request started as the table's first page arrived. */
  const firstLoad = useRef(true);

  const load = useEffectEvent(async (viewKey: string, signal: AbortSignal) => {
    setState((previous) => (previous.loading && !previous.failed ? previous : { ...previous, loading: true, failed: false }));
    try {
      // The first load may have been started already, as the table's first page arrived.
      const prefetched = firstLoad.current ? takePrefetchedInsights(viewKey, signal) : null;
      firstLoad.current = false;
      const data = await (prefetched ?? fetchWaitlistInsights(insightsView(viewKey), signal));
      if (signal.aborted) return;
      setState({ data, dataKey: viewKey, loading: false, failed: false });
    } catch (error) {
      if (isAbort(error) || signal.aborted) return;
      setState((previous) => ({ ...previous, loading: false, failed: true }));
      reportError(error);
    }
  });

  useEffect(() => {
    const scheduler = new InsightRefresh((viewKey, signal) => load(viewKey, signal));
    refresh.current = scheduler;
    return () => {
      scheduler.dispose();
      refresh.current = null;
    };
  }, []);

  useEffect(() => {
    refresh.current?.setKey(key);
  }, [key]);

  const seenLiveVersion = useRef(liveVersion);
  useEffect(() => {
    if (seenLiveVersion.current === liveVersion) return;
    seenLiveVersion.current = liveVersion;
    refresh.current?.live();
  }, [liveVersion]);

  const retry = useCallback(() => refresh.current?.retry(), []);

  return { ...state, stale: state.dataKey !== null && state.dataKey !== key, retry };
}
