import type { AttributionField } from './attribution.js';
import { MAX_EMAIL_LENGTH, type EmailProblem } from './email.js';
import type { CHALLENGE_FIELD } from './challenge-contract.js';

/**
 * The wire contract of `POST /api/waitlist` and every text a signup can answer with, shared by the
 * form (with and without JavaScript) and the server. The request and response schemas are in
 * src/server/signup/schema.ts (kept apart so the landing page never loads a schema library).
 *
 * Request: `email`, the honeypot, the consent box when shown, the proof-of-work solution
 * (challenge-contract.ts CHALLENGE_FIELD, SIGNUP_CHALLENGE=proof-of-work), and optionally where the signup came
 * from, flat (ATTRIBUTION_FIELDS of attribution.ts: `utm_source` … `utm_content`, `referrer`,
 * `landing_path`), cleaned on the server and dropped when invalid, never failing the signup. A form
 * post without them takes the UTM parameters and landing path from its same-origin Referer.
 *
 * JSON: 201 `{status:'joined'}` (`{status:'pending'}` when SIGNUP_CONFIRMATION=required) or 4xx
 * `{error:{code,message}}`; `consent_required` when the consent checkbox is on and was not ticked;
 * 422 `email_disposable` or `email_undeliverable` for an address the server's screening refuses
 * (a throwaway-mail domain, a domain that cannot receive mail), nothing stored or sent.
 * Form (urlencoded, no JavaScript): 303 to /thanks, or the signup error page with the same status.
 */
export const SIGNUP_PATH = '/api/waitlist';

/** Name of the hidden field that only bots fill in. */
export const HONEYPOT_FIELD = 'company_website';

/**
 * A signup is an address plus a few bounded attribution fields (our form sends at most ~4 KB: five
 * UTM values of 150 characters, an origin and a path); anything bigger is not a signup.
 */
export const SIGNUP_BODY_LIMIT = 8 * 1024;

/**
 * The body a client sends: the address, and any of the honeypot, the consent box and the attribution
 * fields. The server's schema (src/server/signup/schema.ts) reads exactly this shape; a type check
 * there keeps the two the same.
 */
export type SignupRequest = { email: string } & Partial<
  Record<AttributionField | typeof HONEYPOT_FIELD | typeof CONSENT_FIELD | typeof THANKS_URL_FIELD | typeof LIST_FIELD | typeof CHALLENGE_FIELD | 'intended_amount', unknown>
>;

/**
 * The form on another site (EMBED_ORIGINS): the page a plain form post from there ends on, when the
 * operator allows that exact URL (EMBED_THANKS_URLS); otherwise our /thanks.
 */
export const THANKS_URL_FIELD = 'thanks_url';

export interface ApiError {
  error: { code: string; message: string };
}

/** Toast texts from the specification (title + description), keyed by what went wrong. */
export const SIGNUP_TOASTS = {
  required: { title: 'Email required', description: 'Please enter your email address to join the waitlist.' },
  duplicate: { title: 'Already registered', description: 'This email is already on our waitlist.' },
  failure: { title: 'Something went wrong', description: 'Please try again later.' },
} as const;

/**
 * What each refused signup says: `title` heads the toast and the no-JavaScript error page,
 * `message` is the API text and the toast's description.
 */
export const SIGNUP_ERRORS = {
  email_required: { status: 400, title: SIGNUP_TOASTS.required.title, message: SIGNUP_TOASTS.required.description },
  email_invalid: { status: 400, title: 'Invalid email', message: 'Please enter a valid email address.' },
  email_too_long: { status: 400, title: 'Invalid email', message: `Email addresses can be at most ${MAX_EMAIL_LENGTH} characters long.` },
  already_registered: { status: 409, title: SIGNUP_TOASTS.duplicate.title, message: SIGNUP_TOASTS.duplicate.description },
  rate_limited: { status: 429, title: 'Too many attempts', message: 'Too many signup attempts. Please wait a minute and try again.' },
  consent_required: { status: 400, title: 'Consent required', message: 'Please tick the box to agree before joining the waitlist.' },
  unknown_list: { status: 400, title: 'Unknown list', message: 'This waitlist does not exist. Leave the list out to join the waitlist.' },
  /** An offering list that is closed (issue 31): it takes no more signups. */
  list_closed: { status: 409, title: 'List closed', message: 'This list is closed and takes no more indications of interest.' },
  /** An intended amount that is not one of the list's bands (issue 31). */
  amount_invalid: { status: 400, title: 'Invalid amount', message: 'Please choose one of the amounts offered, or none.' },
  /** The address is at a throwaway-mail domain (SIGNUP_BLOCK_DISPOSABLE, on by default). */
  email_disposable: { status: 422, title: 'Permanent email required', message: 'Please use a permanent email address.' },
  /** The domain's DNS says it cannot receive mail: it does not exist, or publishes a null MX (SIGNUP_CHECK_MX). */
  email_undeliverable: { status: 422, title: 'Email cannot be delivered', message: 'This email domain cannot receive email.' },
} as const;

/**
 * The list a signup joins (`list`, optional): absent or `portal` is the portal's waitlist; an open
 * offering list's slug joins that list (issue 31, src/shared/lists/contract.ts, with its optional
 * `intended_amount`); a draft or unknown one is 400 `unknown_list`, a closed one 409 `list_closed`.
 */
export const LIST_FIELD = 'list';
export const PORTAL_LIST = 'portal';

/** The consent checkbox's field name (the box is shown only when content.ts has a consent text). */
export const CONSENT_FIELD = 'consent';

export type SignupErrorCode = keyof typeof SIGNUP_ERRORS;

/** The answer to an address the shared e-mail rule refuses, in the form and on the server alike. */
export const EMAIL_PROBLEM_CODES = {
  required: 'email_required',
  invalid: 'email_invalid',
  too_long: 'email_too_long',
} as const satisfies Record<EmailProblem, SignupErrorCode>;

/** A refused signup as a toast: its title, and its message as the description. */
export function signupErrorToast(code: SignupErrorCode): { title: string; description: string } {
  const { title, message } = SIGNUP_ERRORS[code];
  return { title, description: message };
}

/** The error page's text for a form post that failed for any other reason. */
export const SIGNUP_FORM_FAILURES = {
  tooLarge: { title: SIGNUP_TOASTS.failure.title, message: 'The form submission is too large.' },
  other: { title: SIGNUP_TOASTS.failure.title, message: SIGNUP_TOASTS.failure.description },
} as const;

export function isSignupErrorCode(code: string): code is SignupErrorCode {
  return Object.hasOwn(SIGNUP_ERRORS, code);
}
