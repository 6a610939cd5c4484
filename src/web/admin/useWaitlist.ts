import { useCallback, useEffect, useEffectEvent, useRef, useState } from 'react';
import { ADMIN_PAGE_MAX } from '../../shared/admin/waitlist-api.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';
import { fetchWaitlistPage, isAbort } from './admin-api.js';

/** The first page is small so the table shows quickly; the rest stream in with the largest page the API allows. */
export const FIRST_PAGE_SIZE = 1000;
export const NEXT_PAGE_SIZE = ADMIN_PAGE_MAX;

export type WaitlistPhase =
  /** Nothing shown yet: the first page is on its way. */
  | 'loading'
  /** Some rows are shown; more pages are being fetched in the background. */
  | 'loading-more'
  /** Every entry is loaded. */
  | 'done'
  /** A request failed; `entries` holds what arrived before it (maybe nothing). */
  | 'failed';

export interface WaitlistState {
  /** Newest first, as the API returns them. */
  entries: WaitlistEntry[];
  /** How many entries the waitlist holds (the server's count, adjusted for local deletes). */
  total: number;
  phase: WaitlistPhase;
}

export interface UseWaitlist extends WaitlistState {
  /** Resumes loading after a failure, from where it stopped. */
  retry: () => void;
  /** Drops rows the server has deleted. */
  removeEntries: (ids: readonly string[]) => void;
  /** Shows these rows as invited at `invitedAt` (the server has just invited them). */
  markInvited: (ids: Iterable<string>, invitedAt: string) => void;
  /** When the page saw the row invited, or undefined: overrides the loaded row's status. */
  invitedAt: (id: string) => string | undefined;
  /** Changes with every markInvited, so memoised views re-render. */
  invitedVersion: number;
  /** Loads everything again from the first page (when the page's view may be out of date). */
  reload: () => void;
}

/**
 * Loads the whole waitlist page by page (keyset pagination): the first page is shown at once and
 * the following pages are appended in the background until the last one, so nothing is cut off.
 */
export function useWaitlist(onError: (error: unknown) => void): UseWaitlist {
  const [state, setState] = useState<WaitlistState>({ entries: [], total: 0, phase: 'loading' });
  const [attempt, setAttempt] = useState(0);
  /**
   * Rows invited since they were loaded: id → invited_at, changed in place and read through a
   * version number, as the Selection is. Marking 100,000 rows then costs one Map entry each,
   * where copying them into a new entries array blocked the page for most of a second.
   */
  const invitedRef = useRef(new Map<string, string>());
  const [invitedVersion, setInvitedVersion] = useState(0);
  /** Where the next page starts; undefined until the first page has arrived. */
  const cursorRef = useRef<string | null | undefined>(undefined);
  const deletedRef = useRef(new Set<string>());
  /** Bumped by every delete, so a page requested before it cannot restore the old total. */
  const deleteEpochRef = useRef(0);
  const reportError = useEffectEvent(onError);
  /** The running load's, so a reload stops it before resetting what it writes to. */
  const controllerRef = useRef<AbortController | null>(null);

  useEffect(() => {
    const controller = new AbortController();
    controllerRef.current = controller;
    const { signal } = controller;

    async function load(): Promise<void> {
      for (;;) {
        const first = cursorRef.current === undefined;
        const epoch = deleteEpochRef.current;
        const page = await fetchWaitlistPage(first ? FIRST_PAGE_SIZE : NEXT_PAGE_SIZE, cursorRef.current ?? null, signal);
        if (signal.aborted) return;
        cursorRef.current = page.nextCursor;
        const deleted = deletedRef.current;
        const fresh = deleted.size === 0 ? page.entries : page.entries.filter((entry) => !deleted.has(entry.id));
        const more = page.nextCursor !== null && page.entries.length > 0;
        setState((previous) => {
          const entries = fresh.length === 0 ? previous.entries : previous.entries.concat(fresh);
          // Once everything is here the table itself is the count (sign-ups made meanwhile are not in it).
          if (!more) return { entries, total: entries.length, phase: 'done' };
          return { entries, total: epoch === deleteEpochRef.current ? page.total : previous.total, phase: 'loading-more' };
        });
        if (!more) return;
      }
    }

    load().catch((error: unknown) => {
      if (signal.aborted || isAbort(error)) return;
      setState((previous) => ({ ...previous, phase: 'failed' }));
      reportError(error);
    });
    return () => controller.abort();
  }, [attempt]);

  const retry = useCallback(() => {
    setState((previous) => ({ ...previous, phase: previous.entries.length === 0 ? 'loading' : 'loading-more' }));
    setAttempt((n) => n + 1);
  }, []);

  const removeEntries = useCallback((ids: readonly string[]) => {
    if (ids.length === 0) return;
    const gone = new Set(ids);
    for (const id of ids) deletedRef.current.add(id);
    deleteEpochRef.current += 1;
    setState((previous) => {
      const entries = previous.entries.filter((entry) => !gone.has(entry.id));
      return { ...previous, entries, total: Math.max(entries.length, previous.total - gone.size) };
    });
  }, []);

  const markInvited = useCallback((ids: Iterable<string>, invitedAt: string) => {
    const invited = invitedRef.current;
    const before = invited.size;
    for (const id of ids) invited.set(id, invitedAt);
    if (invited.size !== before) setInvitedVersion((n) => n + 1);
  }, []);

  const invitedAt = useCallback((id: string) => invitedRef.current.get(id), []);

  const reload = useCallback(() => {
    controllerRef.current?.abort();
    cursorRef.current = undefined;
    deletedRef.current = new Set();
    invitedRef.current = new Map();
    setInvitedVersion((n) => n + 1);
    setState({ entries: [], total: 0, phase: 'loading' });
    setAttempt((n) => n + 1);
  }, []);

  return { ...state, retry, removeEntries, markInvited, invitedAt, invitedVersion, reload };
}
