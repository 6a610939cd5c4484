import { useEffect, useId, useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { PAGES } from '../../shared/site/pages.js';
import { authErrorMessage, getAuthClient } from '../session/auth-client.js';
import { siteContent } from '../site/content.js';
import { LogoMark } from '../site/Logo.js';
import { PageFrame } from '../site/PageFrame.js';
import { notifyError } from '../site/toast.js';
import { buttonColors, buttonSizes, buttonStyles } from '../ui/controls.js';
import { cardStyles, inputStyles } from '../ui/styles.js';
import { useRefocusAfterBusy } from '../ui/useRefocusAfterBusy.js';

/** /auth: e-mail and password sign-in for admins. A session that already exists goes straight to /admin. */
export default function AuthPage() {
  const navigate = useNavigate();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const passwordRef = useRef<HTMLInputElement>(null);
  const requestRefocus = useRefocusAfterBusy(busy, passwordRef, 'select');
  const emailId = useId();
  const passwordId = useId();

  useEffect(() => {
    const auth = getAuthClient();
    let active = true;
    const toAdmin = () => {
      if (!active) return;
      active = false;
      void navigate(PAGES.admin.path, { replace: true });
    };
    // Also follows a sign-in made in another tab (auth-js relays it).
    const { data } = auth.onAuthStateChange((event, session) => {
      if (session && event !== 'SIGNED_OUT') toAdmin();
    });
    auth
      .getSession()
      .then(({ data: { session } }) => {
        if (session) toAdmin();
      })
      .catch(() => undefined);
    return () => {
      active = false;
      data.subscription.unsubscribe();
    };
  }, [navigate]);

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
      void navigate(PAGES.admin.path, { replace: true });
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
            <form className="mt-6 space-y-5" onSubmit={(event) => void handleSubmit(event)} aria-busy={busy}>
              <div>
                <label htmlFor={emailId} className="mb-2 block text-sm font-medium text-slate-200">
                  Email
                </label>
                <input
                  id={emailId}
                  name="email"
                  type="email"
                  required
                  autoComplete="username"
                  inputMode="email"
                  spellCheck={false}
                  value={email}
                  onChange={(event) => setEmail(event.target.value)}
                  disabled={busy}
                  className={inputStyles}
                />
              </div>
              <div>
                <label htmlFor={passwordId} className="mb-2 block text-sm font-medium text-slate-200">
                  Password
                </label>
                <input
                  ref={passwordRef}
                  id={passwordId}
                  name="password"
                  type="password"
                  required
                  autoComplete="current-password"
                  value={password}
                  onChange={(event) => setPassword(event.target.value)}
                  disabled={busy}
                  className={inputStyles}
                />
              </div>
              <button type="submit" disabled={busy} className={`${buttonColors.primary} ${buttonSizes.lg} w-full`}>
                {busy ? 'Loading...' : 'Sign In'}
              </button>
            </form>
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
