import { useEffect, useRef, useState, type FormEvent } from 'react';
import { siteContent } from '../../shared/site/content.js';
import { LINK_ERRORS, type ConfirmOutcome, type LinkErrorCode } from '../../shared/waitlist/consent-contract.js';
import { SIGNUP_TOASTS } from '../../shared/waitlist/signup-contract.js';
import { useLocation } from '../site/router.js';
import { notifyError } from '../site/toast.js';
import { buttonColors, buttonSizes, SpinnerIcon } from '../ui/controls.js';
import { confirmLink, linkTokenOf } from '../waitlist/link-actions.js';
import { useHydrated } from '../waitlist/useHydrated.js';
import { headingStyles, LinkPageCard, ResultView, StatusIcon } from './link-page-parts.js';

type Result = { kind: 'confirmed'; outcome: ConfirmOutcome } | { kind: 'error'; code: LinkErrorCode };

/**
 * The double opt-in link's page (/confirm?token=…). Opening it changes nothing (mail scanners open
 * links too): only the button confirms. Without JavaScript the button posts the form to this same
 * address and the server answers with a page; with it, the page posts the token to the JSON API and
 * shows the outcome here, focus on its heading. Prerendered without a token, so the token is read
 * only once hydrated.
 */
export function ConfirmPage() {
  const { confirmPage } = siteContent;
  const hydrated = useHydrated();
  const { search } = useLocation();
  const token = hydrated ? linkTokenOf(search) : undefined;
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<Result | null>(null);
  /** A refusal worth retrying in a moment (rate limited): said above the button, which stays. */
  const [notice, setNotice] = useState<LinkErrorCode | null>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    // The button that had focus is gone: take screen-reader users to the outcome.
    if (result) headingRef.current?.focus();
  }, [result]);

  async function handleSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy || !token) return;
    setBusy(true);
    setNotice(null);
    const answer = await confirmLink(token);
    setBusy(false);
    if (answer.ok) setResult({ kind: 'confirmed', outcome: answer.value });
    else if (answer.error === 'failure') notifyError(SIGNUP_TOASTS.failure);
    else if (answer.error === 'rate_limited') setNotice(answer.error);
    else setResult({ kind: 'error', code: answer.error });
  }

  if (result?.kind === 'confirmed') {
    const text = result.outcome === 'confirmed' ? confirmPage.confirmed : confirmPage.alreadyConfirmed;
    return (
      <LinkPageCard>
        <ResultView tone="success" title={text.title} message={text.message} homeLink={confirmPage.homeLink} headingRef={headingRef} />
      </LinkPageCard>
    );
  }
  if (result?.kind === 'error') {
    const error = LINK_ERRORS[result.code];
    return (
      <LinkPageCard>
        <ResultView tone="warning" title={error.title} message={error.message} homeLink={confirmPage.homeLink} headingRef={headingRef} />
      </LinkPageCard>
    );
  }
  if (token === null) {
    return (
      <LinkPageCard>
        <ResultView tone="warning" title={confirmPage.title} message={confirmPage.missingToken} homeLink={confirmPage.homeLink} />
      </LinkPageCard>
    );
  }

  return (
    <LinkPageCard busy={busy}>
      <StatusIcon tone="mail" />
      <h1 className={headingStyles}>{confirmPage.title}</h1>
      <p className="mt-4 text-balance text-slate-200">{confirmPage.lead}</p>
      {notice && (
        <div role="alert" className="mt-6 rounded-xl border border-amber-300/30 bg-amber-400/10 px-4 py-3 text-left text-sm text-amber-100">
          <p className="font-semibold">{LINK_ERRORS[notice].title}</p>
          <p className="mt-1">{LINK_ERRORS[notice].message}</p>
        </div>
      )}
      {/* No action: the form posts to this very address, token included (the no-JavaScript path). */}
      <form method="post" onSubmit={(event) => void handleSubmit(event)} className="mt-8">
        {/* aria-disabled, not disabled: the button keeps focus while the request runs. */}
        <button
          type="submit"
          aria-disabled={busy}
          className={`${buttonColors.primary} ${buttonSizes.lg} w-full aria-disabled:cursor-wait aria-disabled:opacity-70 sm:w-auto`}
        >
          {busy && <SpinnerIcon />}
          {busy ? confirmPage.busy : confirmPage.button}
        </button>
      </form>
    </LinkPageCard>
  );
}

export default ConfirmPage;
