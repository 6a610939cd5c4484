import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { AdminSession } from '../../../shared/admin/sessions-api.js';
import { notifyError, notifySuccess } from '../../site/toast.js';
import { buttonStyles, SpinnerIcon } from '../../ui/controls.js';
import { cardStyles } from '../../ui/styles.js';
import { accountTexts, accountToasts } from './copy.js';
import { CardLoadFailed, CardLoading } from '../common/CardStatus.js';
import { isAbort } from '../common/admin-api.js';
import { fetchAdminSessions, revokeAdminSessions } from './sessions-api.js';
import { deviceName } from './user-agent.js';

const texts = accountTexts.sessions;

type SessionsState = { status: 'loading' } | { status: 'failed' } | { status: 'ready'; sessions: AdminSession[] };

const when = (iso: string) =>
  new Date(iso).toLocaleString('en-US', { month: 'short', day: 'numeric', year: 'numeric', hour: 'numeric', minute: '2-digit' });

/**
 * The admin's own sessions (ASVS 3.3.4), from the admin API: device, IP, sign-in and last use, and
 * a Sign out button for every session but this one. Ending this session is the header's Sign Out.
 */
export function SessionsCard({ headingClassName, onAccessError }: { headingClassName: string; onAccessError: (error: unknown) => boolean }) {
  const [state, setState] = useState<SessionsState>({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);
  /** The session being signed out, or 'others'. */
  const [busy, setBusy] = useState<string | null>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const headingId = useId();

  useEffect(() => {
    const controller = new AbortController();
    fetchAdminSessions(controller.signal)
      // This device first, then the others, newest sign-in first.
      .then((sessions) => setState({ status: 'ready', sessions: [...sessions].sort((a, b) => Number(b.current) - Number(a.current)) }))
      .catch((error: unknown) => {
        if (isAbort(error)) return;
        setState({ status: 'failed' });
        if (!onAccessError(error)) notifyError(accountToasts.error(error instanceof Error ? error.message : texts.loadFailed));
      });
    return () => controller.abort();
  }, [attempt, onAccessError]);

  const reload = useCallback(() => {
    setState({ status: 'loading' });
    setAttempt((n) => n + 1);
  }, []);

  async function signOut(which: string) {
    if (busy) return;
    setBusy(which);
    try {
      const revoked = await revokeAdminSessions(which === 'others' ? { others: true } : { ids: [which] });
      notifySuccess(accountToasts.sessionsRevoked(revoked));
      setState((previous) =>
        previous.status === 'ready'
          ? { status: 'ready', sessions: previous.sessions.filter((s) => s.current || (which !== 'others' && s.id !== which)) }
          : previous,
      );
      // The button that was pressed is gone: focus goes to the card's heading.
      headingRef.current?.focus();
    } catch (error) {
      if (!onAccessError(error)) notifyError(accountToasts.error(error instanceof Error ? error.message : texts.loadFailed));
    } finally {
      setBusy(null);
    }
  }

  const others = state.status === 'ready' ? state.sessions.filter((s) => !s.current).length : 0;

  return (
    <section aria-labelledby={headingId} aria-busy={state.status === 'loading' || busy !== null} className={`${cardStyles} p-5 sm:p-6 lg:col-span-2`}>
      <div className="flex flex-wrap items-center justify-between gap-3">
        <h3 id={headingId} ref={headingRef} tabIndex={-1} className={headingClassName}>
          {texts.heading}
        </h3>
        {others > 0 && (
          <button type="button" className={buttonStyles.secondary} disabled={busy !== null} onClick={() => void signOut('others')}>
            {busy === 'others' && <SpinnerIcon />}
            {busy === 'others' ? texts.signingOut : texts.signOutOthers}
          </button>
        )}
      </div>
      <p className="mt-2 text-sm text-slate-300">{texts.intro}</p>
      <div className="mt-4">
        {state.status === 'loading' && <CardLoading label={texts.loading} />}
        {state.status === 'failed' && <CardLoadFailed text={texts.loadFailed} retryLabel={texts.retry} onRetry={reload} />}
        {state.status === 'ready' && (
          <>
            <ul className="divide-y divide-white/10 rounded-xl border border-white/10" aria-label={texts.heading}>
              {state.sessions.map((session) => {
                const device = deviceName(session.user_agent);
                return (
                  <li key={session.id} className="flex flex-col gap-3 p-4 sm:flex-row sm:items-center sm:justify-between">
                    <div className="min-w-0">
                      <p className="flex flex-wrap items-center gap-2 font-medium text-white">
                        <span className="break-words" title={session.user_agent ?? undefined}>
                          {device}
                        </span>
                        {session.current && (
                          <span className="rounded-full bg-emerald-400/15 px-2 py-0.5 text-xs font-semibold text-emerald-300">{texts.thisDevice}</span>
                        )}
                      </p>
                      <dl className="mt-1 grid grid-cols-[auto_1fr] gap-x-3 gap-y-0.5 text-sm text-slate-300 sm:flex sm:flex-wrap sm:gap-x-4">
                        <div className="contents sm:flex sm:gap-1">
                          <dt className="text-slate-400">{texts.ip}</dt>
                          <dd className="break-all">{session.ip_address ?? texts.unknownIp}</dd>
                        </div>
                        <div className="contents sm:flex sm:gap-1">
                          <dt className="text-slate-400">{texts.signedIn}</dt>
                          <dd>{when(session.created_at)}</dd>
                        </div>
                        <div className="contents sm:flex sm:gap-1">
                          <dt className="text-slate-400">{texts.lastActive}</dt>
                          <dd>{when(session.last_active_at)}</dd>
                        </div>
                      </dl>
                    </div>
                    {!session.current && (
                      <button
                        type="button"
                        className={`${buttonStyles.secondary} shrink-0 self-start sm:self-center`}
                        aria-label={texts.signOutLabel(device, when(session.created_at))}
                        disabled={busy !== null}
                        onClick={() => void signOut(session.id)}
                      >
                        {busy === session.id && <SpinnerIcon />}
                        {texts.signOut}
                      </button>
                    )}
                  </li>
                );
              })}
            </ul>
            {others === 0 && <p className="mt-3 text-sm text-slate-400">{texts.onlyThis}</p>}
          </>
        )}
      </div>
    </section>
  );
}
