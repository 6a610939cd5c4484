import type { EntryStatus } from './entry.js';

/**
 * The wire contract of the links in e-mails (double opt-in, unsubscribe, erasure), shared by the
 * public pages (with and without JavaScript) and the server. No schema library here: the public
 * pages load this file; the request/response schemas are in src/server/consent/schema.ts.
 *
 * Links. Every e-mail link carries one signed token (`?token=`, LINK_TOKEN_PARAM): which entry,
 * what for (`confirm`, `manage` or `erase`), until when, under an HMAC whose key never leaves the
 * server. The `manage` link (every e-mail's footer, and the List-Unsubscribe URL that mail providers,
 * forwarders and archives see) only unsubscribes and shows the address masked (`a•••@example.com`);
 * it works MANAGE_LINK_TTL_DAYS. Erasure takes an `erase` link, e-mailed to the address when the
 * preferences page asks for it: it works ERASE_LINK_TTL_MINUTES, and once (the entry is gone after).
 *
 * Pages (GET never changes anything: mail scanners prefetch links):
 * - GET  /confirm?token=T       the Confirm page (a button).
 * - POST /confirm?token=T       the same page's form without JavaScript: confirms, answers an HTML page.
 * - GET  /unsubscribe?token=T   the e-mail preferences page (Unsubscribe; e-mail me a link to erase my data).
 * - POST /unsubscribe?token=T   RFC 8058 one-click (body `List-Unsubscribe=One-Click`: unsubscribes,
 *                               answers 200), or the page's form without JavaScript (body
 *                               `action=unsubscribe`, or `action=erase`: e-mails an erasure link;
 *                               answers an HTML page).
 * - GET  /erase?token=E         the erasure page (Erase my data, after asking).
 * - POST /erase?token=E         the same page's form without JavaScript: erases, answers an HTML page.
 *
 * JSON API (the pages with JavaScript), each `POST {token}`:
 * - /api/waitlist/confirm      -> 200 {outcome: 'confirmed' | 'already_confirmed'}
 * - /api/waitlist/preferences  -> 200 {email, status, link}   (a manage or erase token; the address masked; changes nothing)
 * - /api/waitlist/unsubscribe  -> 200 {outcome: 'unsubscribed' | 'already_unsubscribed'}
 * - /api/waitlist/erase-link   -> 200 {outcome: 'sent', email}   (a manage token: e-mails an erase link)
 * - /api/waitlist/erase        -> 200 {outcome: 'erased'}   (an erase token)
 * Errors: `{error: {code, message}}` with a LINK_ERRORS code; nothing is changed.
 */
export const CONFIRM_PAGE_PATH = '/confirm';
export const PREFERENCES_PAGE_PATH = '/unsubscribe';
export const CONFIRM_API_PATH = '/api/waitlist/confirm';
export const PREFERENCES_API_PATH = '/api/waitlist/preferences';
export const UNSUBSCRIBE_API_PATH = '/api/waitlist/unsubscribe';
export const ERASE_API_PATH = '/api/waitlist/erase';
/** The erasure link's page (src/shared/site/pages.ts `erase`). */
export const ERASE_PAGE_PATH = '/erase';
export const ERASE_LINK_API_PATH = '/api/waitlist/erase-link';
/**
 * How long a manage link works after its e-mail was sent: longer than the 30 days CAN-SPAM asks an
 * unsubscribe to keep working and than the time between the waitlist's few e-mails, short enough
 * that an old e-mail in an archive or a forward stops speaking for the address.
 */
export const MANAGE_LINK_TTL_DAYS = 90;
/** How long an erasure link works after its e-mail was sent. */
export const ERASE_LINK_TTL_MINUTES = 60;

/** The query parameter (and JSON field) that carries a link's token. */
export const LINK_TOKEN_PARAM = 'token';
/**
 * What a token is for: `confirm` (double opt-in), `manage` (the preferences page: unsubscribe, ask
 * for an erasure link) or `erase` (the erasure link). A token's purpose is its index here: append only.
 */
export const LINK_PURPOSES = ['confirm', 'manage', 'erase'] as const;
export type LinkPurpose = (typeof LINK_PURPOSES)[number];
/** Longest token accepted; real ones are far shorter. */
export const LINK_TOKEN_MAX_LENGTH = 512;

/** RFC 8058: the body a mail provider posts to the List-Unsubscribe URL. */
export const ONE_CLICK_FIELD = 'List-Unsubscribe';
export const ONE_CLICK_VALUE = 'One-Click';
/** The no-JavaScript preferences form's field and its values (`erase`: e-mail me a link to erase my data). */
export const PREFERENCES_ACTION_FIELD = 'action';
export const PREFERENCES_ACTIONS = ['unsubscribe', 'erase', 'unsubscribe_all'] as const;
/** Leave every list the address is on (issue 31): the JSON API's path of `action=unsubscribe_all`. */
export const UNSUBSCRIBE_ALL_API_PATH = '/api/waitlist/unsubscribe-all';
export type PreferencesAction = (typeof PREFERENCES_ACTIONS)[number];

export type ConfirmOutcome = 'confirmed' | 'already_confirmed';
export type UnsubscribeOutcome = 'unsubscribed' | 'already_unsubscribed';
export interface PreferencesView {
  /** The address masked: its first character, then `•••`, then the domain (`a•••@example.com`). */
  email: string;
  status: EntryStatus;
  /** Which link it is: the preferences page takes a manage link, the erasure page an erasure link. */
  link: 'manage' | 'erase';
  /**
   * Every list the address is on, with its status there (issue 31), when one of them is an offering
   * list; absent for an address on the portal's waitlist alone (its page is as it always was).
   */
  lists?: Array<{ name: string; status: EntryStatus }>;
}
/** An erasure link was e-mailed to `email` (masked). */
export interface EraseLinkSent {
  outcome: 'sent';
  email: string;
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
  manage_link_expired: {
    status: 410,
    title: 'This link has expired',
    message: `Links to manage your e-mail work for ${MANAGE_LINK_TTL_DAYS} days. Use the link in a more recent e-mail from us, or write to us to unsubscribe or erase your data.`,
  },
  erase_link_expired: {
    status: 410,
    title: 'This link has expired',
    message: 'Links to erase your data work for an hour, once. Ask for a new one on the e-mail preferences page: open the link at the bottom of one of our e-mails.',
  },
  mail_unavailable: {
    status: 503,
    title: 'We cannot send e-mail right now',
    message: 'The link to erase your data could not be sent. Please try again later.',
  },
} as const;
export type LinkErrorCode = keyof typeof LINK_ERRORS;

export function isLinkErrorCode(code: string): code is LinkErrorCode {
  return Object.hasOwn(LINK_ERRORS, code);
}
