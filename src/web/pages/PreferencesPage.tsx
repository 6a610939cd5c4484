import { useEffect, useId, useRef, useState } from 'react';
import { siteContent } from '../../shared/site/content.js';
import { PREFERENCES_ACTION_FIELD, type PreferencesAction, type PreferencesView, type UnsubscribeOutcome } from '../../shared/waitlist/consent-contract.js';
import { ConfirmDialog } from '../ui/ConfirmDialog.js';
import { buttonColors, buttonSizes, SpinnerIcon } from '../ui/controls.js';
import { eraseLink, readPreferences, unsubscribeLink, type LinkAnswer } from '../waitlist/link-actions.js';
import { LinkPageView, StatusIcon, useLinkPage } from './link-page-parts.js';

const rowStyles = 'rounded-xl border border-white/10 bg-slate-950/40 p-4 text-left sm:p-5';
const rowLayout = 'flex flex-col gap-4 sm:flex-row sm:items-center sm:justify-between';
const busyButton = 'aria-disabled:cursor-wait aria-disabled:opacity-70';

/** The lead with the address in bold (`{email}` in the wording). */
function Lead({ email }: { email: string | null }) {
  const { lead, leadWithoutJs } = siteContent.preferencesPage;
  if (email === null) return <p className="mt-4 text-balance text-slate-200">{leadWithoutJs}</p>;
  const [before, after = ''] = lead.split('{email}');
  return (
    <p className="mt-4 text-balance text-slate-200">
      {before}
      <strong className="font-semibold break-words text-white">{email}</strong>
      {after}
    </p>
  );
}

/**
 * Every e-mail's "unsubscribe or erase" page (/unsubscribe?token=…), also the List-Unsubscribe URL.
 * Opening it changes nothing. Without JavaScript it is one form posting `action=unsubscribe` or
 * `action=erase` to this same address (erasure behind a disclosure that asks first); with it, the page
 * looks up the address the link is for, then unsubscribes or erases (after a confirm dialog) through
 * the JSON API and shows each outcome in place, focus on its heading.
 */
export function PreferencesPage() {
  const { preferencesPage: text } = siteContent;
  const page = useLinkPage<'erased'>();
  const { hydrated, token, showFailure } = page;
  const [view, setView] = useState<PreferencesView | null>(null);
  const [busy, setBusy] = useState<PreferencesAction | null>(null);
  const [unsubscribed, setUnsubscribed] = useState<UnsubscribeOutcome | null>(null);
  const [confirmingErase, setConfirmingErase] = useState(false);
  const unsubscribedHeadingRef = useRef<HTMLHeadingElement>(null);
  const unsubscribeHintId = useId();
  const eraseHintId = useId();

  useEffect(() => {
    if (!token) return;
    let active = true;
    void readPreferences(token).then((answer) => {
      if (!active) return;
      if (answer.ok) setView(answer.value);
      else showFailure(answer.error);
    });
    return () => {
      active = false;
    };
  }, [token, showFailure]);

  useEffect(() => {
    if (unsubscribed) unsubscribedHeadingRef.current?.focus();
  }, [unsubscribed]);

  async function run<T>(action: PreferencesAction, call: (token: string) => Promise<LinkAnswer<T>>, done: (value: T) => void) {
    if (busy || !token) return;
    setBusy(action);
    page.clearNotice();
    const answer = await call(token);
    setBusy(null);
    setConfirmingErase(false);
    if (answer.ok) done(answer.value);
    else showFailure(answer.error);
  }

  const unsubscribe = () => void run('unsubscribe', unsubscribeLink, setUnsubscribed);
  const erase = () => void run('erase', eraseLink, () => page.finish('erased'));

  const unsubscribeResult = unsubscribed ?? (view?.status === 'unsubscribed' ? 'already_unsubscribed' : null);
  const unsubscribeDone = unsubscribeResult === 'unsubscribed' ? text.unsubscribe.done : text.unsubscribe.already;

  return (
    <LinkPageView
      state={page}
      title={text.title}
      missingToken={text.missingToken}
      homeLink={text.homeLink}
      done={() => text.erase.done}
      busy={busy !== null || (token !== undefined && view === null)}
      lead={<Lead email={view?.email ?? null} />}
    >
      {/* No action: the form posts to this very address, token included (the no-JavaScript path). */}
      <form method="post" onSubmit={(event) => event.preventDefault()} className="mt-8 space-y-3">
        {unsubscribeResult ? (
          <div className="flex items-start gap-4 rounded-xl border border-emerald-300/20 bg-emerald-400/10 p-4 text-left sm:p-5">
            <StatusIcon tone="success" small />
            <div>
              <h2 ref={unsubscribedHeadingRef} tabIndex={-1} className="font-semibold text-white outline-none">
                {unsubscribeDone.title}
              </h2>
              <p className="mt-1 text-sm text-slate-200">{unsubscribeDone.message}</p>
            </div>
          </div>
        ) : (
          <div className={`${rowStyles} ${rowLayout}`}>
            <p id={unsubscribeHintId} className="text-sm text-slate-300">
              {text.unsubscribe.explanation}
            </p>
            {hydrated ? (
              <button
                type="button"
                onClick={unsubscribe}
                aria-disabled={busy !== null}
                aria-describedby={unsubscribeHintId}
                className={`${buttonColors.secondary} ${buttonSizes.md} shrink-0 ${busyButton}`}
              >
                {busy === 'unsubscribe' && <SpinnerIcon />}
                {busy === 'unsubscribe' ? text.unsubscribe.busy : text.unsubscribe.button}
              </button>
            ) : (
              <button
                type="submit"
                name={PREFERENCES_ACTION_FIELD}
                value={'unsubscribe' satisfies PreferencesAction}
                aria-describedby={unsubscribeHintId}
                className={`${buttonColors.secondary} ${buttonSizes.md} shrink-0`}
              >
                {text.unsubscribe.button}
              </button>
            )}
          </div>
        )}

        {hydrated ? (
          <div className={`${rowStyles} ${rowLayout}`}>
            <p id={eraseHintId} className="text-sm text-slate-300">
              {text.erase.explanation}
            </p>
            <ConfirmDialog
              open={confirmingErase}
              onOpenChange={setConfirmingErase}
              title={text.erase.confirmTitle}
              description={text.erase.confirmDescription}
              confirmLabel={busy === 'erase' ? text.erase.busy : text.erase.confirmButton}
              busy={busy === 'erase'}
              onConfirm={erase}
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
                  aria-disabled={busy !== null}
                  aria-describedby={eraseHintId}
                  onClick={(event) => {
                    if (busy) event.preventDefault();
                  }}
                  className={`${buttonColors.danger} ${buttonSizes.md} shrink-0 ${busyButton}`}
                >
                  {text.erase.button}
                </button>
              }
            />
          </div>
        ) : (
          // Without JavaScript there is no dialog: the disclosure asks first, its button erases.
          <details className={rowStyles}>
            <summary className={`${rowLayout} cursor-pointer list-none [&::-webkit-details-marker]:hidden`}>
              <span className="text-sm text-slate-300">{text.erase.explanation}</span>
              <span className={`${buttonColors.danger} ${buttonSizes.md} shrink-0`}>{text.erase.button}</span>
            </summary>
            <div className="mt-4 border-t border-white/10 pt-4">
              <p className="font-semibold text-white">{text.erase.confirmTitle}</p>
              <p className="mt-1 text-sm text-slate-300">{text.erase.confirmDescription}</p>
              <button
                type="submit"
                name={PREFERENCES_ACTION_FIELD}
                value={'erase' satisfies PreferencesAction}
                className={`${buttonColors.danger} ${buttonSizes.md} mt-4`}
              >
                {text.erase.confirmButton}
              </button>
            </div>
          </details>
        )}
      </form>
    </LinkPageView>
  );
}

export default PreferencesPage;
