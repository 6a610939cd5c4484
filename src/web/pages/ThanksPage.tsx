import { useEffect, useRef } from 'react';
import { useLocation, useNavigate } from '../site/router.js';
import { PAGES } from '../../shared/site/pages.js';
import { siteContent } from '../../shared/site/content.js';
import { Spinner } from '../ui/Spinner.js';
import { cardStyles } from '../ui/styles.js';
import { awaitsConfirmation } from '../waitlist/signup-status.js';

export function ThanksPage() {
  const { thanks, thanksSpinnerLabel } = siteContent;
  const navigate = useNavigate();
  // Double opt-in: one more line, below the spec's texts, asks the visitor to confirm by e-mail.
  const checkInbox = awaitsConfirmation(useLocation().state);
  const headingRef = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    // Arriving here from the form, focus was on a control that no longer exists.
    headingRef.current?.focus();
    const timer = window.setTimeout(() => navigate(PAGES.home.path, { replace: true }), thanks.redirectAfterMs);
    return () => window.clearTimeout(timer);
  }, [navigate, thanks.redirectAfterMs]);

  return (
    <section className="mx-auto flex w-full max-w-xl flex-1 flex-col items-center justify-center px-5 py-16 text-center sm:px-8">
      <div className={`w-full ${cardStyles} px-6 py-10 sm:px-10`}>
        <div className="mx-auto mb-6 flex size-14 items-center justify-center rounded-full bg-emerald-400/15 text-emerald-300">
          <svg viewBox="0 0 24 24" className="size-7" aria-hidden="true" focusable="false">
            <path d="m5 12.5 4.5 4.5L19 7.5" fill="none" stroke="currentColor" strokeWidth="2.5" strokeLinecap="round" strokeLinejoin="round" />
          </svg>
        </div>
        <h1 ref={headingRef} tabIndex={-1} className="text-3xl font-bold tracking-tight text-white outline-none sm:text-4xl">
          {thanks.title}
        </h1>
        <p className="mt-4 text-lg text-slate-200">{thanks.lead}</p>
        <p className="mt-2 text-slate-300">
          {thanks.notified} <span role="img" aria-label={thanks.rocketLabel}>
            {thanks.rocketEmoji}
          </span>
        </p>
        {checkInbox && (
          <p className="mt-6 flex items-start gap-3 rounded-xl border border-emerald-300/20 bg-emerald-400/10 px-4 py-3 text-left text-sm text-emerald-50">
            <svg viewBox="0 0 24 24" className="mt-px size-5 shrink-0 text-emerald-300" aria-hidden="true" focusable="false">
              <rect x="3.5" y="5.5" width="17" height="13" rx="2" fill="none" stroke="currentColor" strokeWidth="2" />
              <path d="m4.5 7.5 7.5 5.5 7.5-5.5" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round" />
            </svg>
            <span>{thanks.checkInbox}</span>
          </p>
        )}
        <div className="mt-8 flex flex-col items-center gap-3">
          <Spinner label={thanksSpinnerLabel} className="size-7" />
          <p className="text-sm text-slate-400">{thanks.redirecting}</p>
        </div>
      </div>
    </section>
  );
}
