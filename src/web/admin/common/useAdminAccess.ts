import { useCallback, useRef, useState } from 'react';
import { PAGES } from '../../../shared/site/pages.js';
import { authErrorMessage, getAuthClient } from '../../session/auth-client.js';
import { checkAssurance } from '../../session/mfa.js';
import { useNavigate } from '../../site/router.js';
import { notifyError, notifySuccess } from '../../site/toast.js';
import { isInsufficientAal, isInsufficientRole, isUnauthorized } from './admin-api.js';
import { sessionToasts } from './copy.js';

export interface AdminAccess {
  /** Handles the admin API's refusals of the session itself; false for any other error. */
  onAccessError: (error: unknown) => boolean;
  /** ADMIN_MFA=required and no factor yet, so the admin API refuses the waitlist until one is set up. */
  enrolmentRequired: boolean;
  /** The required factor is set up: the panel shows again. */
  onEnrolled: () => void;
  /** Signs out every session of this admin and goes to /auth. */
  signOut: () => Promise<void>;
  signingOut: boolean;
}

/** What /admin does when the admin API refuses the session, and the admin's own sign-out. */
export function useAdminAccess(): AdminAccess {
  const navigate = useNavigate();
  const [signingOut, setSigningOut] = useState(false);
  const [enrolmentRequired, setEnrolmentRequired] = useState(false);
  const endingSession = useRef(false);
  const signingOutRef = useRef(false);
  const checkingAal = useRef(false);
  const refreshingRole = useRef(false);

  /** The admin API no longer accepts the session (401): sign out locally (scope 'local') and go to /auth. */
  const endExpiredSession = useCallback(async () => {
    // A sign-out in progress revokes the token first: requests still in flight then get a 401 too.
    if (endingSession.current || signingOutRef.current) return;
    endingSession.current = true;
    const auth = getAuthClient();
    // Signed out in another tab meanwhile: nothing to announce, the SIGNED_OUT event moves us on.
    const { data } = await auth.getSession().catch(() => ({ data: { session: null } }));
    if (data.session) notifyError(sessionToasts.sessionExpired);
    await auth.signOut({ scope: 'local' }).catch(() => undefined);
    void navigate(PAGES.auth.path, { replace: true });
  }, [navigate]);

  /**
   * The admin API answered `insufficient_aal`: either a code is due (a factor added since this page
   * checked, say), which /auth asks for, or the server requires a factor this admin does not have yet.
   */
  const requireSecondFactor = useCallback(async () => {
    if (checkingAal.current || endingSession.current || signingOutRef.current) return;
    checkingAal.current = true;
    const assurance = await checkAssurance().catch(() => ({ kind: 'signed-out' }) as const);
    checkingAal.current = false;
    if (assurance.kind === 'signed-in') setEnrolmentRequired(true);
    else void navigate(PAGES.auth.path, { replace: true });
  }, [navigate]);

  const onAccessError = useCallback(
    (error: unknown): boolean => {
      if (isUnauthorized(error)) void endExpiredSession();
      else if (isInsufficientAal(error)) void requireSecondFactor();
      else if (isInsufficientRole(error)) {
        // The role changed since this page's token was issued: say so, and refresh the token, whose
        // user brings the role as it is now (useAdminSession hears TOKEN_REFRESHED and the page
        // hides what the role cannot do). Several refusals at once make one toast and one refresh.
        if (!refreshingRole.current) {
          refreshingRole.current = true;
          notifyError(sessionToasts.notAllowed(error instanceof Error ? error.message : ''));
          void getAuthClient()
            .refreshSession()
            .catch(() => undefined)
            .finally(() => {
              refreshingRole.current = false;
            });
        }
      } else return false;
      return true;
    },
    [endExpiredSession, requireSecondFactor],
  );

  const onEnrolled = useCallback(() => setEnrolmentRequired(false), []);

  async function signOut() {
    setSigningOut(true);
    signingOutRef.current = true;
    // Default scope ('global'): ends every session of this admin, as the spec's POST /logout?scope=global.
    const { error } = await getAuthClient()
      .signOut()
      .catch((thrown: unknown) => ({ error: thrown }));
    if (error) {
      signingOutRef.current = false;
      setSigningOut(false);
      notifyError(sessionToasts.signOutFailed(authErrorMessage(error)));
      return;
    }
    notifySuccess(sessionToasts.signedOut);
    void navigate(PAGES.auth.path, { replace: true });
  }

  return { onAccessError, enrolmentRequired, onEnrolled, signOut, signingOut };
}
