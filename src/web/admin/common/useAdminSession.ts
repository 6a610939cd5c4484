import { useEffect, useRef, useState } from 'react';
import { useNavigate } from '../../site/router.js';
import { PAGES } from '../../../shared/site/pages.js';
import { getAuthClient } from '../../session/auth-client.js';
import { checkAssurance, storedSignIn } from '../../session/mfa.js';
import { roleOfUser, type AdminRole } from '../../../shared/admin/roles.js';

/** `role` is what the session's user object says (app_metadata.role), for showing and hiding; the server checks its own. */
export type AdminSession = { status: 'checking' } | { status: 'signed-in'; email: string; role: AdminRole };

/**
 * Guards /admin: no session on load, a SIGNED_OUT event or a session that disappears (auth-js also
 * relays sign-outs from other tabs) sends the user to /auth. So does a password-only (aal1) session of
 * an admin with a verified TOTP factor: /auth then asks for the code.
 *
 * A stored session that does not already say a code is due shows the panel at once (storedSignIn),
 * so its requests start without waiting for the server's check (a GET /user): the admin API
 * authorizes each request itself, and answers a missing code with 403 insufficient_aal, which the
 * panel handles. The check still runs and leads to /auth when it finds the session gone or a code due.
 */
export function useAdminSession(
  /** Called once the stored session shows the page may open, before it renders: requests can start (the first one given is used). */
  onStoredSignIn?: () => void,
): AdminSession {
  const navigate = useNavigate();
  const [session, setSession] = useState<{ status: 'checking' } | { status: 'signed-in'; email: string }>({ status: 'checking' });
  // From the stored session at once (INITIAL_SESSION), then from every refresh or sign-in.
  const [role, setRole] = useState<AdminRole>('viewer');
  const onStoredSignInRef = useRef(onStoredSignIn);

  useEffect(() => {
    const auth = getAuthClient();
    let active = true;
    /** The assurance check has passed, or the stored session was shown: until then, events must not show the panel. */
    let checked = false;
    const signedIn = (email: string) =>
      setSession((previous) => (previous.status === 'signed-in' && previous.email === email ? previous : { status: 'signed-in', email }));
    const toLogin = () => {
      if (!active) return;
      active = false;
      void navigate(PAGES.auth.path, { replace: true });
    };

    // Handlers must not call auth-js back synchronously (its docs warn of deadlocks); navigation is fine.
    const { data } = auth.onAuthStateChange((event, current) => {
      if (current) setRole(roleOfUser(current.user));
      if (event === 'SIGNED_OUT' || !current) toLogin();
      else if (active && checked) signedIn(current.user.email ?? '');
    });

    storedSignIn()
      .then((email) => {
        if (email !== null && active && !checked) {
          checked = true;
          try {
            onStoredSignInRef.current?.();
          } catch {
            // Only a head start for the page's requests.
          }
          signedIn(email);
        }
      })
      .catch(() => undefined);
    checkAssurance()
      .then((assurance) => {
        if (assurance.kind === 'signed-in') {
          checked = true;
          if (active) signedIn(assurance.email);
        } else toLogin();
      })
      .catch(toLogin);

    return () => {
      active = false;
      data.subscription.unsubscribe();
    };
  }, [navigate]);

  return session.status === 'signed-in' ? { ...session, role } : session;
}
