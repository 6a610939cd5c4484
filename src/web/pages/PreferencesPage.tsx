import { useEffect, useId, useRef, useState, type RefObject } from 'react';
import { siteContent } from '../../shared/site/content.js';
import {
  PREFERENCES_ACTION_FIELD,
  type EraseLinkSent,
  type PreferencesAction,
  type UnsubscribeOutcome,
} from '../../shared/waitlist/consent-contract.js';
import { buttonColors, buttonSizes, SpinnerIcon } from '../ui/controls.js';
import { requestEraseLink, unsubscribeAllLink, unsubscribeLink, type LinkAnswer } from '../waitlist/link-actions.js';
import { LEAVE_ALL_WORDS } from '../../shared/lists/contract.js';
import { AddressLead, LinkPageView, rowLayout, rowStyles, StatusIcon, useLinkPage, useLinkView } from './link-page-parts.js';

const busyButton = 'aria-disabled:cursor-wait aria-disabled:opacity-70';

/** An action's outcome in place of its row, its heading focused (it replaces the button that had focus). */
function DoneRow({ headingRef, title, message }: { headingRef: RefObject<HTMLHeadingElement | null>; title: string; message: string }) {
  return (
    <div className="flex items-start gap-4 rounded-xl border border-emerald-300/20 bg-emerald-400/10 p-4 text-left sm:p-5">
      <StatusIcon tone="success" small />
      <div>
        <h2 ref={headingRef} tabIndex={-1} className="font-semibold text-white outline-none">
          {title}
        </h2>
        <p className="mt-1 text-sm text-slate-200">{message}</p>
      </div>
    </div>
  );
}

/** A row: what the action does, and its button (a form submit until hydrated: the no-JavaScript path). */
function ActionRow(props: {
  action: PreferencesAction;
  words: { explanation: string; button: string; busy: string };
  hydrated: boolean;
  /** The action running, if any: this row's button shows it is busy, every row's is disabled. */
  busy: PreferencesAction | null;
  onClick: () => void;
}) {
  const { action, words, busy } = props;
  const hintId = useId();
  const className = `${buttonColors.secondary} ${buttonSizes.md} shrink-0`;
  return (
    <div className={`${rowStyles} ${rowLayout}`}>
      <p id={hintId} className="text-sm text-slate-300">
        {words.explanation}
      </p>
      {props.hydrated ? (
        <button type="button" onClick={props.onClick} aria-disabled={busy !== null} aria-describedby={hintId} className={`${className} ${busyButton}`}>
          {busy === action && <SpinnerIcon />}
          {busy === action ? words.busy : words.button}
        </button>
      ) : (
        <button type="submit" name={PREFERENCES_ACTION_FIELD} value={action} aria-describedby={hintId} className={className}>
          {words.button}
        </button>
      )}
    </div>
  );
}

/**
 * Every e-mail's "unsubscribe or erase" page (/unsubscribe?token=…), also the List-Unsubscribe URL,
 * which mail providers, forwarders and archives see: so it only unsubscribes, shows the address
 * masked, and for an erasure e-mails a fresh link (valid an hour, once) to the address; that link's
 * page erases (ErasePage). Opening it changes nothing. Without JavaScript it is one form posting
 * `action=unsubscribe`, `action=unsubscribe_all` (offered to everyone there: the page cannot tell
 * who is on several lists) or `action=erase` (e-mail me the link) to this same address; with it,
 * the page looks up whom the link is for, then acts through the JSON API and shows each outcome in place,
 * focus on its heading. An expired link says so (LINK_ERRORS.manage_link_expired).
 */
export function PreferencesPage() {
  const { preferencesPage: text } = siteContent;
  const page = useLinkPage<never>();
  const { hydrated, token, showFailure } = page;
  const view = useLinkView(page, 'manage');
  const [busy, setBusy] = useState<PreferencesAction | null>(null);
  const [unsubscribed, setUnsubscribed] = useState<UnsubscribeOutcome | null>(null);
  const [eraseLinkSent, setEraseLinkSent] = useState<EraseLinkSent | null>(null);
  const [leftAll, setLeftAll] = useState(false);
  const unsubscribedHeadingRef = useRef<HTMLHeadingElement>(null);
  const sentHeadingRef = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    if (unsubscribed) unsubscribedHeadingRef.current?.focus();
  }, [unsubscribed]);
  useEffect(() => {
    if (eraseLinkSent) sentHeadingRef.current?.focus();
  }, [eraseLinkSent]);

  async function run<T>(action: PreferencesAction, call: (token: string) => Promise<LinkAnswer<T>>, done: (value: T) => void) {
    if (busy || !token) return;
    setBusy(action);
    page.clearNotice();
    const answer = await call(token);
    setBusy(null);
    if (answer.ok) done(answer.value);
    else showFailure(answer.error);
  }

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
      lead={<AddressLead text={text.lead} withoutAddress={text.leadWithoutJs} email={view?.email ?? null} />}
    >
      {/* No action: the form posts to this very address, token included (the no-JavaScript path). */}
      <form method="post" onSubmit={(event) => event.preventDefault()} className="mt-8 space-y-3">
        {view?.lists ? (
          <section aria-labelledby="preferences-lists" className={`${rowStyles} text-left`}>
            <h2 id="preferences-lists" className="font-semibold text-white">
              {LEAVE_ALL_WORDS.heading}
            </h2>
            <ul className="mt-2 list-disc space-y-1 pl-5 text-sm text-slate-200">
              {view.lists.map((list) => (
                <li key={list.name}>
                  {list.name} ({leftAll ? 'unsubscribed' : list.status})
                </li>
              ))}
            </ul>
          </section>
        ) : null}
        {view?.lists ? (
          leftAll ? (
            <DoneRow headingRef={unsubscribedHeadingRef} title={LEAVE_ALL_WORDS.done.title} message={LEAVE_ALL_WORDS.done.message} />
          ) : (
            <ActionRow action="unsubscribe_all" words={LEAVE_ALL_WORDS} hydrated={hydrated} busy={busy} onClick={() => void run('unsubscribe_all', unsubscribeAllLink, () => setLeftAll(true))} />
          )
        ) : null}
        {/* Without JavaScript the page cannot know whose link it is, so "leave every list" is always
            offered there (it leaves the one list of someone on one); with it, only to someone on several. */}
        {hydrated ? null : (
          <noscript className="block">
            <ActionRow action="unsubscribe_all" words={LEAVE_ALL_WORDS} hydrated={false} busy={null} onClick={() => undefined} />
          </noscript>
        )}
        {unsubscribeResult ? (
          <DoneRow headingRef={unsubscribedHeadingRef} title={unsubscribeDone.title} message={unsubscribeDone.message} />
        ) : (
          <ActionRow action="unsubscribe" words={text.unsubscribe} hydrated={hydrated} busy={busy} onClick={() => void run('unsubscribe', unsubscribeLink, setUnsubscribed)} />
        )}
        {eraseLinkSent ? (
          <DoneRow headingRef={sentHeadingRef} title={text.eraseLink.sent.title} message={text.eraseLink.sent.message.replace('{email}', eraseLinkSent.email)} />
        ) : (
          <ActionRow action="erase" words={text.eraseLink} hydrated={hydrated} busy={busy} onClick={() => void run('erase', requestEraseLink, setEraseLinkSent)} />
        )}
      </form>
    </LinkPageView>
  );
}

export default PreferencesPage;
