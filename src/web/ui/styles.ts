/**
 * Class names shared by the public pages, the login and the admin panel, in the site's look (dark ink
 * background, emerald accent, translucent cards). Focus is drawn by the global :focus-visible outline.
 * The login and admin controls are in controls.tsx, so the landing page's code does not carry them.
 */

export const cardStyles = 'rounded-2xl border border-white/10 bg-white/[0.04] shadow-2xl shadow-black/40';

/** A single-line text field. */
export const inputStyles =
  'h-12 w-full rounded-xl border border-white/15 bg-slate-950/60 px-4 text-base text-white placeholder:text-slate-400 transition-colors hover:border-white/25 focus:border-emerald-300 disabled:cursor-not-allowed disabled:opacity-60';

/** A link that looks like a primary button: the public pages' way back home. */
export const primaryLinkStyles =
  'inline-flex h-11 items-center rounded-xl bg-emerald-400 px-5 font-semibold text-slate-950 transition-colors hover:bg-emerald-300';
