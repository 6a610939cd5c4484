import { THANKS_CHECK_INBOX } from '../../shared/site/pages.js';

/** The location state the form passes to /thanks when the signup awaits its e-mail confirmation. */
export const PENDING_SIGNUP_STATE = { signup: 'pending' } as const;

/**
 * Whether the thanks page asks the visitor to confirm by e-mail: after the form's own signup, its
 * answer says so (the location state); on a page load (a form post without JavaScript, a reload), the
 * server sent the page's variant for double opt-in, marked in its head. Reading the mark, the browser
 * renders what the prerendered variant shows, so hydration matches.
 */
export function awaitsConfirmation(locationState: unknown): boolean {
  const state = typeof locationState === 'object' && locationState !== null ? (locationState as { signup?: unknown }) : {};
  if (state.signup === PENDING_SIGNUP_STATE.signup) return true;
  if (typeof document === 'undefined') return false;
  const { name, content } = THANKS_CHECK_INBOX.meta;
  return document.head.querySelector(`meta[name="${name}"][content="${content}"]`) !== null;
}
