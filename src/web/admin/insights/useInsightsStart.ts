import { useCallback, useEffect, useRef, useState } from 'react';
import type { WaitlistFilter } from '../../../shared/admin/waitlist-filter.js';
import { dropPrefetchedInsights, prefetchInsights } from './insights-prefetch.js';

export interface InsightsStart {
  /** The panel is shown: the table's first page is in (or failed). */
  tableStarted: boolean;
  /** Bumped by every live signup or change, so the panel refreshes. */
  liveVersion: number;
  /** A live signup or change arrived. */
  onLiveUpdate: () => void;
  /** The table's first page has loaded or failed (idempotent: called again on later phase changes). */
  onFirstPageSettled: () => void;
  /** A view's first page has arrived, before it is rendered. */
  onFirstPage: (filter: WaitlistFilter) => void;
}

/**
 * When the insight panel starts, and what makes it refresh. Statically imported by the page (unlike
 * the panel, its own chunk), so its first request goes out as the table's first page arrives.
 */
export function useInsightsStart(): InsightsStart {
  const [liveVersion, setLiveVersion] = useState(0);
  const onLiveUpdate = useCallback(() => setLiveVersion((n) => n + 1), []);
  /**
   * The insight panel's queries start once the table's first page is in: on SQLite (one connection)
   * and on a busy PostgreSQL they would otherwise hold the first rows back by their own time.
   */
  const [tableStarted, setTableStarted] = useState(false);
  /**
   * The panel's first request goes out as the first page arrives, not once the table has rendered.
   * Once the panel is shown (the first page in, or failed) it makes its own requests.
   */
  const panelRequested = useRef(false);
  const onFirstPageSettled = useCallback(() => {
    panelRequested.current = true;
    setTableStarted(true);
  }, []);
  const onFirstPage = useCallback((first: WaitlistFilter) => {
    if (panelRequested.current) return;
    panelRequested.current = true;
    prefetchInsights(first);
  }, []);
  useEffect(() => dropPrefetchedInsights, []);

  return { tableStarted, liveVersion, onLiveUpdate, onFirstPageSettled, onFirstPage };
}
