import type { EntryStatus } from './entry.js';

/**
 * The wire contract of the links in e-mails (double opt-in, unsubscribe, erasure), shared by the
 * public pages (with and without JavaScript) and the server. No schema library here: the public
 * pages load this file; the request/response schemas are in src/server/consent/schema.ts.
 *
 * Links. Every e-mail link carries one signed token (`?token=`, LINK_TOKEN_PARAM): which entry,
 * what for (`confirm` or `manage`), until when, under an HMAC whose key never leaves the server.
 *
 * Pages (GET never changes anything: mail scanners prefetch links):
 * - GET  /confirm?token=T       the Confirm page (a button).
 * - POST /confirm?token=T       the same page's form without JavaScript: confirms, answers an HTML page.
 * - GET  /unsubscribe?token=T   the e-mail preferences page (Unsubscribe, Erase my data).
 * - POST /unsubscribe?token=T   RFC 8058 one-click (body `List-Unsubscribe=One-Click`: unsubscribes,
 *                               answers 200), or the page's form without JavaScript (body
 *                               `action=unsubscribe|erase`: answers an HTML page).
 *
 * JSON API (the pages with JavaScript), each `POST {token}`:
 * - /api/waitlist/confirm      -> 200 {outcome: 'confirmed' | 'already_confirmed'}
 * - /api/waitlist/preferences  -> 200 {email, status}   (who the link is for; changes nothing)
 * - /api/waitlist/unsubscribe  -> 200 {outcome: 'unsubscribed' | 'already_unsubscribed'}
 * - /api/waitlist/erase        -> 200 {outcome: 'erased'}
 * Errors: `{error: {code, message}}` with a LINK_ERRORS code; nothing is changed.
 */
export const CONFIRM_PAGE_PATH = '/confirm';
export const PREFERENCES_PAGE_PATH = '/unsubscribe';
export const CONFIRM_API_PATH = '/api/waitlist/confirm';
export const PREFERENCES_API_PATH = '/api/waitlist/preferences';
export const UNSUBSCRIBE_API_PATH = '/api/waitlist/unsubscribe';
export const ERASE_API_PATH = '/api/waitlist/erase';

/** The query parameter (and JSON field) that carries a link's token. */
export const LINK_TOKEN_PARAM = 'token';
/** What a token is for: `confirm` (double opt-in) or `manage` (unsubscribe and erasure). */
export const LINK_PURPOSES = ['confirm', 'manage'] as const;
export type LinkPurpose = (typeof LINK_PURPOSES)[number];
/** Longest token accepted; real ones are far shorter. */
export const LINK_TOKEN_MAX_LENGTH = 512;

/** RFC 8058: the body a mail provider posts to the List-Unsubscribe URL. */
export const ONE_CLICK_FIELD = 'List-Unsubscribe';
export const ONE_CLICK_VALUE = 'One-Click';
/** The no-JavaScript preferences form's field and its values. */
export const PREFERENCES_ACTION_FIELD = 'action';
export const PREFERENCES_ACTIONS = ['unsubscribe', 'erase'] as const;
export type PreferencesAction = (typeof PREFERENCES_ACTIONS)[number];

export type ConfirmOutcome = 'confirmed' | 'already_confirmed';
export type UnsubscribeOutcome = 'unsubscribed' | 'already_unsubscribed';
export interface PreferencesView {
  email: string;
  status: EntryStatus;
}

/**
 * Every way a link can fail, with the HTTP status, the page heading and the message (the pages
 * show `title` and `message`; the JSON API answers `code` and `message`).
 */
export const LINK_ERRORS = {
  link_invalid: {
    status: 400,
    title: 'This link does not work',
    message: 'The link is incomplete or was changed. Open it again from the e-mail, or copy the whole address into your browser.',
  },
  link_expired: {
    status: 410,
    title: 'This link has expired',
    message: 'Confirmation links work for a limited time. Join the waitlist again with the same address to get a new one.',
  },
  entry_gone: {
    status: 404,
    title: 'Nothing to change',
    message: 'This address is no longer on the waitlist.',
  },
  unsubscribed: {
    status: 409,
    title: 'This address has unsubscribed',
    message: 'You asked not to receive e-mail from us, so this address cannot be confirmed. Join the waitlist again to sign back up.',
  },
  rate_limited: {
    status: 429,
    title: 'Too many attempts',
    message: 'Too many requests from your network. Please wait a minute and try again.',
  },
} as const;
export type LinkErrorCode = keyof typeof LINK_ERRORS;

export function isLinkErrorCode(code: string): code is LinkErrorCode {
  return Object.hasOwn(LINK_ERRORS, code);
}
