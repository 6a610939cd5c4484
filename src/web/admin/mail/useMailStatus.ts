import { useCallback, useEffect, useEffectEvent, useState } from 'react';
import type { MailStatus } from '../../../shared/admin/mail-api.js';
import { isAbort } from '../common/admin-api.js';
import { fetchMailStatus } from './mail-api.js';

export type MailStatusState = { status: 'loading' } | { status: 'failed' } | { status: 'ready'; mail: MailStatus };

export interface UseMailStatus {
  state: MailStatusState;
  /** Shows the spinner and loads again (after a failure). */
  reload: () => void;
  /** Loads again in the background, keeping what is shown (after an invite or a retry changed the counts). */
  refresh: () => void;
  /** Bumped by every refresh, so the outbox list reloads with the counts. */
  version: number;
}

/** GET /api/admin/mail: whether e-mail is on (Invite Selected depends on it) and the outbox's counts. */
export function useMailStatus(onError: (error: unknown) => void): UseMailStatus {
  const [state, setState] = useState<MailStatusState>({ status: 'loading' });
  const [version, setVersion] = useState(0);
  const reportError = useEffectEvent(onError);

  useEffect(() => {
    const controller = new AbortController();
    fetchMailStatus(controller.signal)
      .then((mail) => setState({ status: 'ready', mail }))
      .catch((error: unknown) => {
        if (isAbort(error)) return;
        // A background refresh that fails keeps the counts shown; only a first load shows the failure.
        setState((previous) => (previous.status === 'ready' ? previous : { status: 'failed' }));
        reportError(error);
      });
    return () => controller.abort();
  }, [version]);

  const reload = useCallback(() => {
    setState({ status: 'loading' });
    setVersion((n) => n + 1);
  }, []);
  const refresh = useCallback(() => setVersion((n) => n + 1), []);

  return { state, reload, refresh, version };
}
