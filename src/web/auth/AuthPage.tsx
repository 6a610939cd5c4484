import { useCallback, useEffect, useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { Link, useNavigate } from '../site/router.js';
import { PAGES } from '../../shared/site/pages.js';
import { authErrorMessage, getAuthClient } from '../session/auth-client.js';
import { checkAssurance, type Assurance } from '../session/mfa.js';
import { siteContent } from '../../shared/site/content.js';
import { LogoMark } from '../site/Logo.js';
import { PageFrame } from '../site/PageFrame.js';
import { notifyError } from '../site/toast.js';
import { buttonColors, buttonSizes, buttonStyles } from '../ui/controls.js';
import { LabelledInput } from '../ui/LabelledInput.js';
import { cardStyles } from '../ui/styles.js';
import { useRefocusAfterBusy } from '../ui/useRefocusAfterBusy.js';
import { CodeStep } from './CodeStep.js';

type Step = { kind: 'password' } | { kind: 'code'; factorId: string };

/**
 * /auth: e-mail and password sign-in for admins. A session that already exists goes straight to
 * /admin, unless the admin has a verified TOTP factor and the session is still aal1: then (right
 * after the password, or on load with such a session) the page asks for the authenticator code.
 */
export default function AuthPage() {
  const navigate = useNavigate();
  const [step, setStep] = useState<Step>({ kind: 'password' });
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const passwordRef = useRef<HTMLInputElement>(null);
  const requestRefocus = useRefocusAfterBusy(busy, passwordRef, 'select');
  /** Set once the page is leaving for /admin (or unmounted): nothing else may navigate or set state. */
  const leftRef = useRef(false);

  const toAdmin = useCallback(() => {
    if (leftRef.current) return;
    leftRef.current = true;
    void navigate(PAGES.admin.path, { replace: true });
  }, [navigate]);

  /** With a session: /admin, or the code step when the admin's factor still has to be verified. */
  const applyAssurance = useCallback(
    (assurance: Assurance): 'admin' | 'code' | 'none' => {
      if (leftRef.current) return 'none';
      if (assurance.kind === 'needs-code') {
        const { factorId } = assurance;
        setPassword('');
        setStep((current) => (current.kind === 'code' && current.factorId === factorId ? current : { kind: 'code', factorId }));
        return 'code';
      }
      if (assurance.kind === 'signed-in') {
        toAdmin();
        return 'admin';
      }
      return 'none';
    },
    [toAdmin],
  );

  const routeSession = useCallback(
    () => checkAssurance().catch((): Assurance => ({ kind: 'signed-out' })).then(applyAssurance),
    [applyAssurance],
  );

  useEffect(() => {
    leftRef.current = false;
    const auth = getAuthClient();
    // Also follows a sign-in (or a code verified) in another tab: auth-js relays it. auth-js must not be
    // called back from inside its callback, hence the timeout. The session found on load is checked below.
    const { data } = auth.onAuthStateChange((event, session) => {
      if (event === 'INITIAL_SESSION') return;
      if (session && event !== 'SIGNED_OUT') setTimeout(() => void routeSession(), 0);
      else if (event === 'SIGNED_OUT') setStep({ kind: 'password' });
    });
    void routeSession();
    return () => {
      leftRef.current = true;
      data.subscription.unsubscribe();
    };
  }, [routeSession]);

  async function handleSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    let message: string | null = null;
    try {
      const { error } = await getAuthClient().signInWithPassword({ email, password });
      if (error) message = authErrorMessage(error);
    } catch (error) {
      message = authErrorMessage(error);
    }
    if (message === null) {
      // The form stays busy until it is known whether a code is due.
      if ((await routeSession()) !== 'admin') setBusy(false);
      return;
    }
    notifyError({ title: 'Error', description: message });
    // The fields were disabled, so focus is gone: after a failed attempt it goes back to the password.
    requestRefocus();
    setBusy(false);
  }

  return (
    <PageFrame>
      <main className="flex flex-1 items-center justify-center px-5 py-12 sm:px-8">
        <div className="w-full max-w-sm">
          <div className="mb-8 flex flex-col items-center gap-3 text-center">
            <LogoMark className="size-10" />
            <p className="text-sm font-medium text-slate-300">{siteContent.productName}</p>
          </div>
          <div className={`${cardStyles} p-6 sm:p-8`}>
            <h1 className="text-2xl font-bold tracking-tight text-white">Admin Login</h1>
            {step.kind === 'password' ? (
              <form className="mt-6 space-y-5" onSubmit={(event) => void handleSubmit(event)} aria-busy={busy}>
                <LabelledInput
                  label="Email"
                  name="email"
                  type="email"
                  required
                  autoComplete="username"
                  inputMode="email"
                  spellCheck={false}
                  value={email}
                  onChange={(event) => setEmail(event.target.value)}
                  disabled={busy}
                />
                <LabelledInput
                  label="Password"
                  inputRef={passwordRef}
                  name="password"
                  type="password"
                  required
                  autoComplete="current-password"
                  value={password}
                  onChange={(event) => setPassword(event.target.value)}
                  disabled={busy}
                />
                <button type="submit" disabled={busy} className={`${buttonColors.primary} ${buttonSizes.lg} w-full`}>
                  {busy ? 'Loading...' : 'Sign In'}
                </button>
              </form>
            ) : (
              <CodeStep key={step.factorId} factorId={step.factorId} onVerified={toAdmin} onCancelled={() => setStep({ kind: 'password' })} />
            )}
          </div>
          <p className="mt-6 text-center">
            <Link to={PAGES.home.path} className={buttonStyles.link}>
              Back to home
            </Link>
          </p>
        </div>
      </main>
    </PageFrame>
  );
}
