import { useEffect, useRef } from 'react';
import { useLiveWaitlist, type LiveStatus } from './useLiveWaitlist.js';
import type { UseWaitlist } from './useWaitlist.js';

/** Recounts after changes elsewhere wait this long, so a burst of them costs one request. */
const RECOUNT_DELAY_MS = 1000;

/**
 * Live updates applied to the table: new signups on top, counts kept current; `onLiveUpdate` is
 * told of each (the insight panel refreshes).
 */
export function useLiveRows(
  waitlist: Pick<UseWaitlist, 'addLive' | 'refreshCounts'>,
  onLiveUpdate: () => void,
  onAccessError: (error: unknown) => boolean,
  /** The list shown (issue 31): another list's signups are not this view's. */
  list?: string | undefined,
): LiveStatus {
  const recountTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(recountTimer.current), []);
  return useLiveWaitlist({
    onSignup: (signups, signupList) => {
      if ((signupList ?? undefined) !== (list ?? undefined)) return;
      waitlist.addLive(signups);
      onLiveUpdate();
    },
    onChange: () => {
      if (recountTimer.current === undefined) {
        recountTimer.current = setTimeout(() => {
          recountTimer.current = undefined;
          waitlist.refreshCounts();
        }, RECOUNT_DELAY_MS);
      }
      onLiveUpdate();
    },
    onReconnected: () => {
      waitlist.refreshCounts();
      onLiveUpdate();
    },
    onAccessError,
  });
}
