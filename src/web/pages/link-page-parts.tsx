import type { ReactNode, Ref } from 'react';
import { PAGES } from '../../shared/site/pages.js';
import { Link } from '../site/router.js';
import { cardStyles, primaryLinkStyles } from '../ui/styles.js';

/** The parts the e-mail link pages (/confirm, /unsubscribe) and their no-JavaScript answers share. */

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
