import { useEffect, useEffectEvent, useState } from 'react';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ADMIN_EVENTS_HEARTBEAT_MS, ADMIN_EVENTS_PATH, waitlistEventSchemas, type WaitlistEvent } from '../../../shared/admin/waitlist-api.js';
import type { WaitlistEntry } from '../../../shared/waitlist/entry.js';
import { isAbort, isInsufficientAal, isUnauthorized, request, sleep } from '../common/admin-api.js';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting';

type ChangeReason = Extract<WaitlistEvent, { type: 'change' }>['data']['reason'];

export interface LiveHandlers {
  /** New entries, newest first. */
  onSignup: (entries: WaitlistEntry[], list?: string | undefined) => void;
  /** Entries changed elsewhere: counts and panels are stale. */
  onChange: (reason: ChangeReason) => void;
  /** The stream is open again after a drop: events may have been missed meanwhile. */
  onReconnected: () => void;
  /** The admin API refused the session (the page's own handling); true when it was that. */
  onAccessError: (error: unknown) => boolean;
}

/** No byte for this long (the server writes a comment every heartbeat): the connection is dead even if no error says so. */
const SILENCE_MS = ADMIN_EVENTS_HEARTBEAT_MS * 2 + 5_000;
const FIRST_RETRY_MS = 1_000;
/** A connection open this long counts as good: its end is not a failure. */
const STABLE_MS = 10_000;
const MAX_RETRY_MS = 30_000;

/** The delay before attempt `n` (0-based) after a failure: exponential, capped, with jitter so many pages do not come back at once. */
export function retryDelay(n: number, random: number = Math.random()): number {
  const base = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** n);
  return Math.round(base / 2 + (base / 2) * random);
}

/** One parsed event, checked against the contract; null for a type or payload this page does not know. */
export function parseWaitlistEvent(message: EventSourceMessage): WaitlistEvent | null {
  const type = message.event;
  if (type !== 'ready' && type !== 'signup' && type !== 'change') return null;
  let json: unknown;
  try {
    json = JSON.parse(message.data);
  } catch {
    return null;
  }
  const result = waitlistEventSchemas[type].safeParse(json);
  return result.success ? ({ type, data: result.data } as WaitlistEvent) : null;
}

/**
 * Live updates of the waitlist (server-sent events). EventSource cannot send the Authorization
 * header, so the stream is a fetch whose body is parsed as it arrives. The connection comes back
 * after a drop, or when the server ends the stream (its access token expired: each attempt takes a
 * fresh one from the auth client), with growing pauses while it keeps failing. A refused session
 * goes to the page's own handling (sign-out, second factor) and ends the updates.
 */
export function useLiveWaitlist(handlers: LiveHandlers): LiveStatus {
  const [status, setStatus] = useState<LiveStatus>('connecting');
  const onSignup = useEffectEvent(handlers.onSignup);
  const onChange = useEffectEvent(handlers.onChange);
  const onReconnected = useEffectEvent(handlers.onReconnected);
  const onAccessError = useEffectEvent(handlers.onAccessError);

  useEffect(() => {
    const stop = new AbortController();
    /** Attempts in a row that failed or did not stay open long. */
    let failures = 0;
    let opened = false;
    /** When the current connection said `ready` (0: it has not). */
    let liveSince = 0;

    /** One connection, until it ends: 'ended' (the server closed it, or silence), 'failed', or 'refused' (stop). */
    async function connect(): Promise<'ended' | 'failed' | 'refused'> {
      const attempt = new AbortController();
      const abortAttempt = () => attempt.abort();
      stop.signal.addEventListener('abort', abortAttempt, { once: true });
      let silence: ReturnType<typeof setTimeout> | undefined;
      const heard = () => {
        clearTimeout(silence);
        silence = setTimeout(abortAttempt, SILENCE_MS);
      };
      try {
        const response = await request(ADMIN_EVENTS_PATH, { signal: attempt.signal, headers: { Accept: 'text/event-stream' }, cache: 'no-store' });
        if (!response.body) return 'failed';
        heard();
        const parser = createParser({
          onComment: heard,
          onEvent(message) {
            const event = parseWaitlistEvent(message);
            if (!event) return;
            if (event.type === 'ready') {
              liveSince = Date.now();
              setStatus('live');
              if (opened) onReconnected();
              opened = true;
            } else if (event.type === 'signup') onSignup(event.data.entries, event.data.list);
            else onChange(event.data.reason);
          },
        });
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return 'ended';
            heard();
            parser.feed(value);
          }
        } finally {
          reader.releaseLock();
        }
      } catch (error) {
        if (stop.signal.aborted) return 'refused';
        // Silence: the attempt was aborted here, so come back at once as after an end.
        if (attempt.signal.aborted && isAbort(error)) return 'ended';
        if ((isUnauthorized(error) || isInsufficientAal(error)) && onAccessError(error)) return 'refused';
        return 'failed';
      } finally {
        clearTimeout(silence);
        stop.signal.removeEventListener('abort', abortAttempt);
        attempt.abort();
      }
    }

    void (async () => {
      while (!stop.signal.aborted) {
        liveSince = 0;
        const outcome = await connect();
        if (outcome === 'refused' || stop.signal.aborted) return;
        setStatus('reconnecting');
        // A stream that stayed open a while and ended (its token expired, a server restarted) comes
        // back at once; failures, and streams that keep ending early, back off.
        if (outcome === 'ended' && liveSince !== 0 && Date.now() - liveSince >= STABLE_MS) failures = 0;
        const pause = failures === 0 ? retryDelay(0) / 2 : retryDelay(failures);
        failures += 1;
        await sleep(pause, stop.signal);
      }
    })();
    return () => stop.abort();
  }, []);

  return status;
}
