import { useState, type FormEvent } from 'react';
import { siteContent } from '../../shared/site/content.js';
import type { ConfirmOutcome } from '../../shared/waitlist/consent-contract.js';
import { buttonColors, buttonSizes, SpinnerIcon } from '../ui/controls.js';
import { confirmLink } from '../waitlist/link-actions.js';
import { LinkPageView, useLinkPage } from './link-page-parts.js';

/**
 * The double opt-in link's page (/confirm?token=…). Opening it changes nothing (mail scanners open
 * links too): only the button confirms. Without JavaScript the button posts the form to this same
 * address and the server answers with a page; with it, the page posts the token to the JSON API and
 * shows the outcome here, focus on its heading. Prerendered without a token, so the token is read
 * only once hydrated.
 */
export function ConfirmPage() {
  const { confirmPage } = siteContent;
  const page = useLinkPage<ConfirmOutcome>();
  const { token } = page;
  const [busy, setBusy] = useState(false);

  async function handleSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy || !token) return;
    setBusy(true);
    page.clearNotice();
    const answer = await confirmLink(token);
    setBusy(false);
    if (answer.ok) page.finish(answer.value);
    else page.showFailure(answer.error);
  }

  return (
    <LinkPageView
      state={page}
      title={confirmPage.title}
      missingToken={confirmPage.missingToken}
      homeLink={confirmPage.homeLink}
      done={(outcome) => (outcome === 'confirmed' ? confirmPage.confirmed : confirmPage.alreadyConfirmed)}
      busy={busy}
      lead={<p className="mt-4 text-balance text-slate-200">{confirmPage.lead}</p>}
    >
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
    </LinkPageView>
  );
}

export default ConfirmPage;
