import { useCallback, useEffect, useRef, useState } from 'react';
import { entryMatchesFilter, type WaitlistFilter } from '../../../shared/admin/waitlist-filter.js';
import type { WaitlistPage } from '../../../shared/admin/waitlist-api.js';
import type { WaitlistEntry } from '../../../shared/waitlist/entry.js';
import { isAbort } from '../common/admin-api.js';
import { FIRST_PAGE_SIZE, takePrefetchedFirstPage } from './first-page-prefetch.js';
import { filterKey } from './useFilterParams.js';
import { fetchWaitlistPage } from './waitlist-api.js';

/** The pages after the first (FIRST_PAGE_SIZE) load as the admin scrolls towards the end of the loaded rows. */
export const NEXT_PAGE_SIZE = 500;
/** A quiet recount (after a change elsewhere, or a reconnect) also brings up to this many rows that were missed. */
const CATCH_UP_SIZE = 50;

export type WaitlistPhase =
  /** The first page of the view is on its way (`entries` may still hold the previous view's rows). */
  | 'loading'
  /** The rows are shown; more can be loaded when `hasMore`. */
  | 'ready'
  /** A further page is on its way. */
  | 'loading-more'
  /** A request failed; `entries` holds what arrived before it (maybe nothing). */
  | 'failed';

export interface WaitlistState {
  /** Newest first, as the API returns them, plus the live signups on top. */
  entries: WaitlistEntry[];
  /** How many entries the waitlist holds (the server's count, kept up to date by live signups and local deletes). */
  total: number;
  /** How many of them match the filter (= total without a filter). */
  matching: number;
  /**
   * The latest instant `matching` covers (the count's `asOf`, or the newest live signup counted
   * since): a select-all of this view sends it as the filter's `until`.
   */
  until: string;
  phase: WaitlistPhase;
  /** More pages after the loaded rows. */
  hasMore: boolean;
  /** False until the first page of the page's first view has arrived (or failed). */
  loaded: boolean;
  /**
   * The rows are an earlier view's (another filter's), shown dimmed while the current filter's
   * first page is on its way. `phase` is then 'loading'.
   */
  stale: boolean;
}

export interface UseWaitlist extends WaitlistState {
  /** Loads the next page, unless one is on its way or there is none. */
  loadMore: () => void;
  /** Resumes after a failure: the first page again, or the next one from where loading stopped. */
  retry: () => void;
  /** Drops rows the server has deleted (they were in the view: both counts go down). */
  removeEntries: (ids: readonly string[]) => void;
  /** Shows these rows as invited at `invitedAt` (the server has just invited them). */
  markInvited: (ids: Iterable<string>, invitedAt: string) => void;
  /** When the page saw the row invited, or undefined: overrides the loaded row's status. */
  invitedAt: (id: string) => string | undefined;
  /** Changes with every markInvited, so memoised views re-render. */
  invitedVersion: number;
  /** Loads the view again from its first page (after a delete of a select-all, say). */
  reload: () => void;
  /** New signups (live): those matching the filter go on top; the counts go up. */
  addLive: (entries: readonly WaitlistEntry[]) => void;
  /** Recounts quietly (no spinner), and shows signups that were missed meanwhile. */
  refreshCounts: () => void;
}

/** One view (a filter's rows): what its requests write to, dropped when the filter changes or the view reloads. */
interface View {
  filter: WaitlistFilter;
  controller: AbortController;
  /** Where the next page starts; null: no more. */
  cursor: string | null;
  loadingMore: boolean;
  /** A further page failed: no more tries until `retry`. */
  stalled: boolean;
  /** When the first page was read: a live signup after it is not in the loaded rows. Null until it arrives. */
  rowsAsOfMs: number | null;
  /** When the counts were taken: a live signup after it is not in them. */
  countAsOfMs: number;
  /** Signups that arrived live (or by catch-up), shown or counted once only. */
  liveIds: Set<string>;
  /** The live signups since the counts were taken: a recount taken before some of them adds those back. */
  recent: Array<{ at: number; matches: boolean; createdAt: string }>;
  /** Live signups that arrived before the first page did: applied once it is here. */
  buffered: WaitlistEntry[];
  /** Deleted here while a page was on its way: kept out of it. */
  deleted: Set<string>;
}

const newestFirst = (a: WaitlistEntry, b: WaitlistEntry) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0);

function laterOf(a: string, b: string): string {
  return Date.parse(b) > Date.parse(a) ? b : a;
}

/**
 * The waitlist rows of one filter, page by page (keyset pagination): the first page, then the next
 * ones on demand (`loadMore`, called by the table when the admin nears the end of the loaded rows).
 * A new filter starts a new view; the previous view's rows stay on screen until its first page is in.
 */
export function useWaitlist(
  filter: WaitlistFilter,
  onError: (error: unknown, quiet: boolean) => void,
  /** A view's first page has arrived, before it is rendered. */
  onFirstPage?: (filter: WaitlistFilter) => void,
): UseWaitlist {
  const [state, setState] = useState<Omit<WaitlistState, 'loaded' | 'stale'> & { viewId: string }>({
    entries: [],
    total: 0,
    matching: 0,
    until: '',
    phase: 'loading',
    hasMore: false,
    viewId: '',
  });
  /**
   * Rows invited since they were loaded: id → invited_at, changed in place and read through a
   * version number, as the Selection is. Marking 100,000 rows then costs one Map entry each.
   */
  const invitedRef = useRef(new Map<string, string>());
  const [invitedVersion, setInvitedVersion] = useState(0);
  const viewRef = useRef<View | null>(null);
  // Called from request callbacks, not only effects: a ref to the latest handler.
  const onErrorRef = useRef(onError);
  useEffect(() => {
    onErrorRef.current = onError;
  });
  const reportError = useCallback((error: unknown, quiet: boolean) => onErrorRef.current(error, quiet), []);
  const onFirstPageRef = useRef(onFirstPage);
  useEffect(() => {
    onFirstPageRef.current = onFirstPage;
  });
  const [reloads, setReloads] = useState(0);
  /** Only the first view may take up a prefetched first page; a retry or another filter asks anew. */
  const firstView = useRef(true);
  const key = filterKey(filter);
  /** The view the page wants: its filter, and how many times it was reloaded. */
  const viewId = `${reloads}:${key}`;

  /** Applies live signups to the current view (see addLive). */
  const applyLive = useCallback((view: View, batch: readonly WaitlistEntry[]) => {
    const rowsAsOf = view.rowsAsOfMs;
    if (rowsAsOf === null) {
      view.buffered.push(...batch);
      return;
    }
    let counted = 0;
    let matched = 0;
    let newest = '';
    const shown: WaitlistEntry[] = [];
    for (const entry of batch) {
      if (view.liveIds.has(entry.id)) continue;
      const at = Date.parse(entry.created_at);
      // Older than the loaded rows: it is among them (or deleted since), nothing to add.
      if (!(at > rowsAsOf)) continue;
      view.liveIds.add(entry.id);
      const matches = entryMatchesFilter(entry, view.filter);
      if (matches) shown.push(entry);
      // Counted only when it joined after the counts were taken (a recount may already hold it).
      if (at > view.countAsOfMs) {
        counted += 1;
        view.recent.push({ at, matches, createdAt: entry.created_at });
        if (matches) {
          matched += 1;
          newest = newest === '' ? entry.created_at : laterOf(newest, entry.created_at);
        }
      }
    }
    if (shown.length === 0 && counted === 0) return;
    shown.sort(newestFirst);
    setState((previous) => ({
      ...previous,
      entries: shown.length === 0 ? previous.entries : shown.concat(previous.entries),
      total: previous.total + counted,
      matching: previous.matching + matched,
      until: newest === '' ? previous.until : laterOf(previous.until, newest),
    }));
  }, []);

  useEffect(() => {
    const controller = new AbortController();
    const view: View = {
      filter,
      controller,
      cursor: null,
      loadingMore: false,
      stalled: false,
      rowsAsOfMs: null,
      countAsOfMs: Number.POSITIVE_INFINITY,
      liveIds: new Set(),
      recent: [],
      buffered: [],
      deleted: new Set(),
    };
    // Signups that arrived while the previous view's first page was on its way concern this one too.
    const previous = viewRef.current;
    if (previous && previous.rowsAsOfMs === null) view.buffered.push(...previous.buffered);
    viewRef.current = view;

    const early = firstView.current ? takePrefetchedFirstPage(key, controller.signal) : null;
    firstView.current = false;
    (early ?? fetchWaitlistPage({ limit: FIRST_PAGE_SIZE, filter }, controller.signal))
      .then((page) => {
        if (controller.signal.aborted) return;
        try {
          onFirstPageRef.current?.(filter);
        } catch {
          // Only a head start for other requests: the page is in all the same.
        }
        const asOf = Date.parse(page.asOf);
        view.cursor = page.nextCursor;
        view.rowsAsOfMs = asOf;
        view.countAsOfMs = asOf;
        invitedRef.current = new Map();
        setInvitedVersion((n) => n + 1);
        setState({
          entries: page.entries,
          total: page.total ?? 0,
          matching: page.matching ?? page.total ?? 0,
          until: page.asOf,
          phase: 'ready',
          hasMore: page.nextCursor !== null && page.entries.length > 0,
          viewId,
        });
        const buffered = view.buffered;
        view.buffered = [];
        if (buffered.length > 0) applyLive(view, buffered);
      })
      .catch((error: unknown) => {
        if (controller.signal.aborted || isAbort(error)) return;
        setState((previous) => ({ ...previous, entries: [], phase: 'failed', hasMore: false, viewId }));
        reportError(error, false);
      });
    return () => controller.abort();
    // `viewId` stands for `filter` (the same filter as a new object must not reload).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [viewId, applyLive, reportError]);

  const loadMore = useCallback(() => {
    const view = viewRef.current;
    if (!view || view.loadingMore || view.stalled || view.rowsAsOfMs === null || view.cursor === null) return;
    view.loadingMore = true;
    const { signal } = view.controller;
    setState((previous) => ({ ...previous, phase: 'loading-more' }));
    fetchWaitlistPage({ limit: NEXT_PAGE_SIZE, cursor: view.cursor, filter: view.filter }, signal)
      .then((page: WaitlistPage) => {
        if (signal.aborted || viewRef.current !== view) return;
        view.cursor = page.nextCursor;
        const fresh = view.deleted.size === 0 ? page.entries : page.entries.filter((entry) => !view.deleted.has(entry.id));
        setState((previous) => ({
          ...previous,
          entries: fresh.length === 0 ? previous.entries : previous.entries.concat(fresh),
          phase: 'ready',
          hasMore: page.nextCursor !== null && page.entries.length > 0,
        }));
      })
      .catch((error: unknown) => {
        if (signal.aborted || isAbort(error) || viewRef.current !== view) return;
        view.stalled = true;
        setState((previous) => ({ ...previous, phase: 'failed' }));
        reportError(error, false);
      })
      .finally(() => {
        view.loadingMore = false;
      });
  }, [reportError]);

  const reload = useCallback(() => {
    setState((previous) => ({ ...previous, entries: [], hasMore: false }));
    setReloads((n) => n + 1);
  }, []);

  const retry = useCallback(() => {
    const view = viewRef.current;
    if (!view || view.rowsAsOfMs === null || state.entries.length === 0) {
      reload();
      return;
    }
    // The rows so far stay; loading goes on from where it stopped.
    view.stalled = false;
    setState((previous) => ({ ...previous, phase: 'ready', hasMore: view.cursor !== null }));
    loadMore();
  }, [loadMore, reload, state.entries.length]);

  const removeEntries = useCallback((ids: readonly string[]) => {
    if (ids.length === 0) return;
    const gone = new Set(ids);
    const view = viewRef.current;
    if (view) for (const id of ids) view.deleted.add(id);
    setState((previous) => {
      const entries = previous.entries.filter((entry) => !gone.has(entry.id));
      const removed = previous.entries.length - entries.length;
      const count = Math.max(removed, gone.size);
      return {
        ...previous,
        entries,
        total: Math.max(0, previous.total - count),
        matching: Math.max(entries.length, previous.matching - count),
      };
    });
  }, []);

  const markInvited = useCallback((ids: Iterable<string>, invitedAt: string) => {
    const invited = invitedRef.current;
    const before = invited.size;
    for (const id of ids) invited.set(id, invitedAt);
    if (invited.size !== before) setInvitedVersion((n) => n + 1);
  }, []);

  const invitedAt = useCallback((id: string) => invitedRef.current.get(id), []);

  const addLive = useCallback(
    (batch: readonly WaitlistEntry[]) => {
      const view = viewRef.current;
      if (view && batch.length > 0) applyLive(view, batch);
    },
    [applyLive],
  );

  const refreshCounts = useCallback(() => {
    const view = viewRef.current;
    if (!view || view.rowsAsOfMs === null) return;
    const { signal } = view.controller;
    fetchWaitlistPage({ limit: CATCH_UP_SIZE, filter: view.filter }, signal)
      .then((page) => {
        if (signal.aborted || viewRef.current !== view || page.total === null) return;
        const total = page.total;
        const matching = page.matching ?? total;
        // The page's rows newer than the loaded ones that never came live (a dropped stream).
        const rowsAsOf = view.rowsAsOfMs ?? Number.POSITIVE_INFINITY;
        const missed = page.entries.filter((entry) => !view.liveIds.has(entry.id) && Date.parse(entry.created_at) > rowsAsOf);
        for (const entry of missed) view.liveIds.add(entry.id);
        const asOf = Date.parse(page.asOf);
        view.countAsOfMs = asOf;
        // Live signups that joined after this count was taken (and arrived before its answer) are not in it.
        view.recent = view.recent.filter((signup) => signup.at > asOf);
        let until = page.asOf;
        for (const signup of view.recent) if (signup.matches) until = laterOf(until, signup.createdAt);
        setState((previous) => ({
          ...previous,
          entries: missed.length === 0 ? previous.entries : missed.concat(previous.entries),
          total: total + view.recent.length,
          matching: matching + view.recent.filter((signup) => signup.matches).length,
          until,
        }));
      })
      .catch((error: unknown) => {
        // Quiet: only a refused session is worth saying (the page signs out).
        if (signal.aborted || isAbort(error)) return;
        reportError(error, true);
      });
  }, [reportError]);

  const current = state.viewId === viewId;
  const { viewId: _shown, ...shown } = state;
  return {
    ...shown,
    phase: current ? state.phase : 'loading',
    loaded: state.viewId !== '',
    stale: !current && state.entries.length > 0,
    loadMore, retry, removeEntries, markInvited, invitedAt, invitedVersion,
    reload,
    addLive,
    refreshCounts,
  };
}
