import { useId, useState } from 'react';
import { siteContent } from '../../shared/site/content.js';
import { PREFERENCES_ACTION_FIELD, type PreferencesAction } from '../../shared/waitlist/consent-contract.js';
import { ConfirmDialog } from '../ui/ConfirmDialog.js';
import { buttonColors, buttonSizes } from '../ui/controls.js';
import { eraseLink } from '../waitlist/link-actions.js';
import { AddressLead, LinkPageView, rowLayout, rowStyles, useLinkPage, useLinkView } from './link-page-parts.js';

/**
 * The erasure link's page (/erase?token=…), e-mailed when the preferences page asks for it: it works
 * for an hour, once. Opening it changes nothing (mail scanners open links too). Without JavaScript it
 * is a form posting to this same address, its button behind a disclosure that asks first; with it,
 * the page shows whom the link is for (masked), and erases through the JSON API after a confirm
 * dialog. An expired link says so (LINK_ERRORS.erase_link_expired) as soon as the page opens.
 */
export function ErasePage() {
  const { erasePage, preferencesPage } = siteContent;
  const text = preferencesPage.erase;
  const page = useLinkPage<'erased'>();
  const { hydrated, token, showFailure } = page;
  const view = useLinkView(page, 'erase');
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const hintId = useId();

  async function erase() {
    if (busy || !token) return;
    setBusy(true);
    page.clearNotice();
    const answer = await eraseLink(token);
    setBusy(false);
    setConfirming(false);
    if (answer.ok) page.finish(answer.value);
    else showFailure(answer.error);
  }

  return (
    <LinkPageView
      state={page}
      title={erasePage.title}
      missingToken={erasePage.missingToken}
      homeLink={preferencesPage.homeLink}
      done={() => text.done}
      busy={busy || (token !== undefined && view === null)}
      lead={<AddressLead text={erasePage.lead} withoutAddress={erasePage.leadWithoutJs} email={view?.email ?? null} />}
    >
      {/* No action: the form posts to this very address, token included (the no-JavaScript path). */}
      <form method="post" onSubmit={(event) => event.preventDefault()} className="mt-8 space-y-3">
        {hydrated ? (
          <div className={`${rowStyles} ${rowLayout}`}>
            <p id={hintId} className="text-sm text-slate-300">
              {text.explanation}
            </p>
            <ConfirmDialog
              open={confirming}
              onOpenChange={setConfirming}
              title={text.confirmTitle}
              description={text.confirmDescription}
              confirmLabel={busy ? text.busy : text.confirmButton}
              busy={busy}
              onConfirm={() => void erase()}
              onCloseAutoFocus={(event) => {
                // Erased (or refused for good): the trigger is gone, the outcome's heading takes focus.
                const heading = page.headingRef.current;
                if (!heading) return;
                event.preventDefault();
                heading.focus();
              }}
              trigger={
                <button
                  type="button"
                  aria-disabled={busy}
                  aria-describedby={hintId}
                  onClick={(event) => {
                    if (busy) event.preventDefault();
                  }}
                  className={`${buttonColors.danger} ${buttonSizes.md} shrink-0 aria-disabled:cursor-wait aria-disabled:opacity-70`}
                >
                  {text.button}
                </button>
              }
            />
          </div>
        ) : (
          // Without JavaScript there is no dialog: the disclosure asks first, its button erases.
          <details className={rowStyles}>
            <summary className={`${rowLayout} cursor-pointer list-none [&::-webkit-details-marker]:hidden`}>
              <span className="text-sm text-slate-300">{text.explanation}</span>
              <span className={`${buttonColors.danger} ${buttonSizes.md} shrink-0`}>{text.button}</span>
            </summary>
            <div className="mt-4 border-t border-white/10 pt-4">
              <p className="font-semibold text-white">{text.confirmTitle}</p>
              <p className="mt-1 text-sm text-slate-300">{text.confirmDescription}</p>
              <button
                type="submit"
                name={PREFERENCES_ACTION_FIELD}
                value={'erase' satisfies PreferencesAction}
                className={`${buttonColors.danger} ${buttonSizes.md} mt-4`}
              >
                {text.confirmButton}
              </button>
            </div>
          </details>
        )}
      </form>
    </LinkPageView>
  );
}

export default ErasePage;
