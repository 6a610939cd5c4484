import { useCallback, useEffect, useRef, useState, type ReactNode, type Ref, type RefObject } from 'react';
import { PAGES } from '../../shared/site/pages.js';
import { LINK_ERRORS, type LinkErrorCode } from '../../shared/waitlist/consent-contract.js';
import { SIGNUP_TOASTS } from '../../shared/waitlist/signup-contract.js';
import { Link, useLocation } from '../site/router.js';
import { notifyError } from '../site/toast.js';
import { cardStyles, primaryLinkStyles } from '../ui/styles.js';
import type { PreferencesView } from '../../shared/waitlist/consent-contract.js';
import { linkTokenOf, readPreferences } from '../waitlist/link-actions.js';
import { useHydrated } from '../waitlist/useHydrated.js';

/** The parts the e-mail link pages (/confirm, /unsubscribe, /erase) and their no-JavaScript answers share. */

export type IconTone = 'mail' | 'success' | 'warning';

const ICON_COLOURS: Record<IconTone, string> = {
  mail: 'bg-emerald-400/15 text-emerald-300',
  success: 'bg-emerald-400/15 text-emerald-300',
  warning: 'bg-amber-400/15 text-amber-300',
};

function IconPath({ tone }: { tone: IconTone }) {
  switch (tone) {
    case 'mail':
      return (
        <>
          <rect x="3.5" y="5.5" width="17" height="13" rx="2" fill="none" stroke="currentColor" strokeWidth="2" />
          <path d="m4.5 7.5 7.5 5.5 7.5-5.5" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round" />
        </>
      );
    case 'success':
      return <path d="m5 12.5 4.5 4.5L19 7.5" fill="none" stroke="currentColor" strokeWidth="2.5" strokeLinecap="round" strokeLinejoin="round" />;
    case 'warning':
      return (
        <>
          <path d="M12 8v5m0 3.5v.5" fill="none" stroke="currentColor" strokeWidth="2.5" strokeLinecap="round" />
          <circle cx="12" cy="12" r="9.5" fill="none" stroke="currentColor" strokeWidth="2" />
        </>
      );
  }
}

/** The round icon above a card's heading, as on the thanks and error pages (decorative). */
export function StatusIcon({ tone, small = false }: { tone: IconTone; small?: boolean }) {
  const size = small ? 'size-9' : 'mx-auto mb-6 size-14';
  return (
    <div className={`flex shrink-0 items-center justify-center rounded-full ${size} ${ICON_COLOURS[tone]}`}>
      <svg viewBox="0 0 24 24" className={small ? 'size-5' : 'size-7'} aria-hidden="true" focusable="false">
        <IconPath tone={tone} />
      </svg>
    </div>
  );
}

/**
 * A link page's lead naming the address its link is for (`{email}` in `text`, masked by the server,
 * in bold); `withoutAddress` until it is known (prerendered, or without JavaScript).
 */
export function AddressLead({ text, withoutAddress, email }: { text: string; withoutAddress: string; email: string | null }) {
  if (email === null) return <p className="mt-4 text-balance text-slate-200">{withoutAddress}</p>;
  const [before, after = ''] = text.split('{email}');
  return (
    <p className="mt-4 text-balance text-slate-200">
      {before}
      <strong className="font-semibold break-words text-white">{email}</strong>
      {after}
    </p>
  );
}

/** A link page's rows (what an action does, and its button). */
export const rowStyles = 'rounded-xl border border-white/10 bg-slate-950/40 p-4 text-left sm:p-5';
export const rowLayout = 'flex flex-col gap-4 sm:flex-row sm:items-center sm:justify-between';

/**
 * Whom the page's link is for (the address masked), looked up once hydrated; null until then. A
 * link of the other kind (`link`: the preferences page takes a manage link, the erasure page an
 * erasure link) is refused like a token for another purpose.
 */
export function useLinkView(state: Pick<LinkPageState<unknown>, 'token' | 'showFailure'>, link: PreferencesView['link']): PreferencesView | null {
  const { token, showFailure } = state;
  const [view, setView] = useState<PreferencesView | null>(null);
  useEffect(() => {
    if (!token) return;
    let active = true;
    void readPreferences(token).then((answer) => {
      if (!active) return;
      if (answer.ok && answer.value.link !== link) showFailure('link_invalid');
      else if (answer.ok) setView(answer.value);
      else showFailure(answer.error);
    });
    return () => {
      active = false;
    };
  }, [token, showFailure, link]);
  return view;
}

/** The centred card every link page is drawn in. */
export function LinkPageCard({ children, busy }: { children: ReactNode; busy?: boolean }) {
  return (
    <section className="mx-auto flex w-full max-w-xl flex-1 flex-col items-center justify-center px-5 py-16 text-center sm:px-8">
      <div aria-busy={busy} className={`w-full ${cardStyles} px-6 py-10 sm:px-10`}>
        {children}
      </div>
    </section>
  );
}

export const headingStyles = 'text-2xl font-bold tracking-tight text-balance text-white outline-none sm:text-3xl';

export interface ResultViewProps {
  tone: IconTone;
  title: string;
  message: string;
  homeLink: string;
  /** The heading, to move focus to it when the result replaces the control that had it. */
  headingRef?: Ref<HTMLHeadingElement>;
}

/** An outcome or an error in place of the page's controls: icon, heading, message, the way home. */
export function ResultView({ tone, title, message, homeLink, headingRef }: ResultViewProps) {
  return (
    <>
      <StatusIcon tone={tone} />
      <h1 ref={headingRef} tabIndex={-1} className={headingStyles}>
        {title}
      </h1>
      <p className="mt-4 text-pretty text-slate-200">{message}</p>
      <Link to={PAGES.home.path} className={`mt-8 ${primaryLinkStyles}`}>
        {homeLink}
      </Link>
    </>
  );
}

/** Where a link page's action ended: its own outcome (`value`), or a link error, shown in place of its controls. */
export type LinkOutcome<T> = { kind: 'done'; value: T } | { kind: 'error'; code: LinkErrorCode };

export interface LinkPageState<T> {
  /** False on the server and while hydrating. */
  hydrated: boolean;
  /** The link's token: undefined until hydrated (the page is prerendered without one), null when the address has none. */
  token: string | null | undefined;
  outcome: LinkOutcome<T> | null;
  /** Ends the page with its own outcome. */
  finish: (value: T) => void;
  /** A refusal worth retrying in a moment (rate limited): said above the page's buttons, which stay. */
  notice: LinkErrorCode | null;
  clearNotice: () => void;
  /** A refusal: a toast when it may just be the connection, a notice when it is worth a retry, else the page's outcome. */
  showFailure: (error: LinkErrorCode | 'failure') => void;
  /** The outcome's heading: it takes focus when the outcome replaces the control that had it. */
  headingRef: RefObject<HTMLHeadingElement | null>;
}

/** The state the e-mail link pages (/confirm, /unsubscribe) share: the token, the outcome and the notice. */
export function useLinkPage<T>(): LinkPageState<T> {
  const hydrated = useHydrated();
  const { search } = useLocation();
  const token = hydrated ? linkTokenOf(search) : undefined;
  const [outcome, setOutcome] = useState<LinkOutcome<T> | null>(null);
  const [notice, setNotice] = useState<LinkErrorCode | null>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    // The button that had focus is gone: take screen-reader users to the outcome.
    if (outcome) headingRef.current?.focus();
  }, [outcome]);

  const finish = useCallback((value: T) => setOutcome({ kind: 'done', value }), []);
  const clearNotice = useCallback(() => setNotice(null), []);
  const showFailure = useCallback((error: LinkErrorCode | 'failure') => {
    if (error === 'failure') notifyError(SIGNUP_TOASTS.failure);
    else if (error === 'rate_limited') setNotice(error);
    else setOutcome({ kind: 'error', code: error });
  }, []);

  return { hydrated, token, outcome, finish, notice, clearNotice, showFailure, headingRef };
}

export interface LinkPageViewProps<T> {
  state: LinkPageState<T>;
  /** The page's heading, also the missing-token answer's. */
  title: string;
  missingToken: string;
  homeLink: string;
  /** What the page's own outcome says. */
  done: (value: T) => { title: string; message: string };
  busy: boolean;
  /** The text under the heading. */
  lead: ReactNode;
  /** The page's form. */
  children: ReactNode;
}

/**
 * A link page in each of its states: the outcome (or link error) once there is one, the missing
 * token's answer, else its heading, lead, notice and form (also while loading, marked busy).
 */
export function LinkPageView<T>({ state, title, missingToken, homeLink, done, busy, lead, children }: LinkPageViewProps<T>) {
  const { outcome, token, notice, headingRef } = state;
  if (outcome) {
    const shown = outcome.kind === 'done' ? done(outcome.value) : LINK_ERRORS[outcome.code];
    return (
      <LinkPageCard>
        <ResultView tone={outcome.kind === 'done' ? 'success' : 'warning'} title={shown.title} message={shown.message} homeLink={homeLink} headingRef={headingRef} />
      </LinkPageCard>
    );
  }
  if (token === null) {
    return (
      <LinkPageCard>
        <ResultView tone="warning" title={title} message={missingToken} homeLink={homeLink} />
      </LinkPageCard>
    );
  }
  return (
    <LinkPageCard busy={busy}>
      <StatusIcon tone="mail" />
      <h1 className={headingStyles}>{title}</h1>
      {lead}
      {notice && (
        <div role="alert" className="mt-6 rounded-xl border border-amber-300/30 bg-amber-400/10 px-4 py-3 text-left text-sm text-amber-100">
          <p className="font-semibold">{LINK_ERRORS[notice].title}</p>
          <p className="mt-1">{LINK_ERRORS[notice].message}</p>
        </div>
      )}
      {children}
    </LinkPageCard>
  );
}
