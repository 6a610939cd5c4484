import { useEffect, useState } from 'react';
import { useNavigate } from 'react-router';
import { PAGES } from '../../shared/site/pages.js';
import { getAuthClient } from '../session/auth-client.js';

export type AdminSession = { status: 'checking' } | { status: 'signed-in'; email: string };

/**
 * Guards /admin: no session on load, a SIGNED_OUT event or a session that disappears (auth-js also
 * relays sign-outs from other tabs) sends the user to /auth.
 */
export function useAdminSession(): AdminSession {
  const navigate = useNavigate();
  const [session, setSession] = useState<AdminSession>({ status: 'checking' });

  useEffect(() => {
    const auth = getAuthClient();
    let active = true;
    const signedIn = (email: string) =>
      setSession((previous) => (previous.status === 'signed-in' && previous.email === email ? previous : { status: 'signed-in', email }));
    const toLogin = () => {
      if (!active) return;
      active = false;
      void navigate(PAGES.auth.path, { replace: true });
    };

    // Handlers must not call auth-js back synchronously (its docs warn of deadlocks); navigation is fine.
    const { data } = auth.onAuthStateChange((event, current) => {
      if (event === 'SIGNED_OUT' || !current) toLogin();
      else if (active) signedIn(current.user.email ?? '');
    });

    auth
      .getSession()
      .then(({ data: { session: current } }) => {
        if (!current) toLogin();
        else if (active) signedIn(current.user.email ?? '');
      })
      .catch(toLogin);

    return () => {
      active = false;
      data.subscription.unsubscribe();
    };
  }, [navigate]);

  return session;
}
