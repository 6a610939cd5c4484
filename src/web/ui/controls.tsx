/** Buttons and loading indicators of the login and admin pages, in the site's look (see styles.ts). */
import { Spinner } from './Spinner.js';

const buttonBase =
  'inline-flex items-center justify-center gap-2 rounded-xl font-semibold whitespace-nowrap transition-colors disabled:cursor-not-allowed disabled:opacity-50';

/** Colours only; combine with a size from `buttonSizes`. */
export const buttonColors = {
  primary: `${buttonBase} bg-emerald-400 text-slate-950 shadow-lg shadow-emerald-500/20 hover:bg-emerald-300 disabled:hover:bg-emerald-400`,
  secondary: `${buttonBase} border border-white/15 bg-white/5 text-slate-100 hover:border-white/25 hover:bg-white/10 disabled:hover:border-white/15 disabled:hover:bg-white/5`,
  danger: `${buttonBase} bg-red-600 text-white hover:bg-red-700 disabled:hover:bg-red-600`,
} as const;

export const buttonSizes = { md: 'h-10 px-4 text-sm', lg: 'h-12 px-6 text-base' } as const;

export const buttonStyles = {
  primary: `${buttonColors.primary} ${buttonSizes.md}`,
  secondary: `${buttonColors.secondary} ${buttonSizes.md}`,
  danger: `${buttonColors.danger} ${buttonSizes.md}`,
  link: 'rounded-sm text-sm font-medium text-emerald-300 underline-offset-4 hover:text-emerald-200 hover:underline',
} as const;

/** The spokes of SpinnerIcon, brightest last: turned a spoke at a time, the bright one leads. */
const SPOKES = Array.from({ length: 12 }, (_, i) => ({ angle: i * 30, opacity: Number((0.2 + (0.8 * i) / 11).toFixed(2)) }));

/**
 * A decorative activity indicator for inside a busy button (the button's text names the state):
 * twelve spokes turned a spoke at a time, twelve frames a second instead of a smooth ring's sixty.
 * A busy button can stay busy for seconds (an export of a million rows); where the browser draws
 * without a GPU (virtual desktops, headless Chromium) each frame costs CPU the export needs: the
 * smooth ring took ~0.28 s of the browser's CPU per export, this ~0.08 s. Still under
 * prefers-reduced-motion.
 */
export function SpinnerIcon({ className = 'size-4' }: { className?: string }) {
  return (
    <svg aria-hidden="true" viewBox="0 0 24 24" className={`${className} shrink-0 animate-spin-steps motion-reduce:animate-none`} fill="none" stroke="currentColor" strokeWidth="2.5" strokeLinecap="round">
      {SPOKES.map(({ angle, opacity }) => (
        <line key={angle} x1="12" y1="2.5" x2="12" y2="7" transform={`rotate(${angle} 12 12)`} opacity={opacity} />
      ))}
    </svg>
  );
}

/** A panel's loading indicator: role=status named 'Loading'. */
export function LoadingSpinner({ className = 'py-16' }: { className?: string }) {
  return (
    <div className={`flex items-center justify-center ${className}`}>
      <Spinner label="Loading" className="size-10" />
    </div>
  );
}
