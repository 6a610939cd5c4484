import { z } from 'zod/mini';
import { ATTRIBUTION_FIELDS, type AttributionField } from '../../shared/waitlist/attribution.js';
import { CHALLENGE_FIELD } from '../../shared/waitlist/challenge-contract.js';
import { checkWaitlistEmail } from '../../shared/waitlist/email.js';
import {
  CONSENT_FIELD,
  EMAIL_PROBLEM_CODES,
  HONEYPOT_FIELD,
  isSignupErrorCode,
  LIST_FIELD,
  PORTAL_LIST,
  THANKS_URL_FIELD,
  type SignupErrorCode,
  type SignupRequest,
} from '../../shared/waitlist/signup-contract.js';

/**
 * The address, checked exactly as the form checks it and returned as stored (trimmed, lower-cased).
 * Absent or blank is `email_required`, any non-string (a repeated form field, a number) is
 * `email_invalid`. Each issue's message is the SignupErrorCode, which the route answers with.
 */
const emailField = z.pipe(
  z.unknown(),
  z.transform((value, ctx): string => {
    const check =
      value === undefined || value === null || typeof value === 'string'
        ? checkWaitlistEmail(value)
        : ({ ok: false, problem: 'invalid' } as const);
    if (check.ok) return check.email;
    ctx.issues.push({ code: 'custom', message: EMAIL_PROBLEM_CODES[check.problem], input: value });
    return '';
  }),
);

/** Anything that is not an object (a JSON array or string) is read as an empty form. */
const asFields = z.transform((body: unknown): Record<string, unknown> =>
  typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {},
);

/**
 * Where the signup came from (attribution.ts), flat: `utm_source` … `utm_content`, `referrer`,
 * `landing_path`. Taken as anything here and cleaned by normalizeAttribution, which drops what it
 * refuses: a bad value (too long, a number, a repeated form field) never fails the signup.
 */
const attributionShape = Object.fromEntries(ATTRIBUTION_FIELDS.map((field) => [field, z.optional(z.unknown())])) as Record<
  AttributionField,
  z.ZodMiniOptional<z.ZodMiniUnknown>
>;

/** `POST /api/waitlist`, JSON or form. Every other field is ignored; IP and location come from the server. */
export const signupRequestSchema = z.pipe(
  asFields,
  z.object({
    email: emailField,
    ...attributionShape,
    /** The honeypot: checked before this schema (a filled one is answered like a success). */
    [HONEYPOT_FIELD]: z.optional(z.unknown()),
    /** The consent checkbox, when content.ts has one: ticked is JSON `true` or the form's 'on' (see isConsentTicked). */
    [CONSENT_FIELD]: z.optional(z.unknown()),
    /** A plain form on an allowed site: the thanks page it asks to end on (routes.ts thanksLocation). */
    [THANKS_URL_FIELD]: z.optional(z.unknown()),
    /** The list to join: the portal's (absent) or an open offering list's slug (routes.ts). */
    [LIST_FIELD]: z.optional(z.unknown()),
    /** An offering list's non-binding intended amount: one of its band keys, or empty (src/shared/lists/contract.ts). */
    intended_amount: z.optional(z.unknown()),
    /** The proof-of-work solution (challenge-contract.ts), checked by the challenge room when SIGNUP_CHALLENGE is on. */
    [CHALLENGE_FIELD]: z.optional(z.unknown()),
  }),
);

/** What the schema gives is the contract's SignupRequest, field for field: the two cannot drift apart. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const readsTheContract: Same<z.output<typeof signupRequestSchema>, SignupRequest> = true;
void readsTheContract;

/** `joined`, or `pending` when double opt-in is on and a confirmation e-mail is on its way. */
export const signupSuccessSchema = z.object({ status: z.enum(['joined', 'pending']) });

/** A ticked consent checkbox: JSON `true`, or a form's 'on' (what a checkbox posts), 'true' or '1'. */
export function isConsentTicked(value: unknown): boolean {
  if (value === true) return true;
  return typeof value === 'string' && ['on', 'true', '1'].includes(value.trim().toLowerCase());
}

/** The signup code a failed validation carries (see emailField). */
export function signupCodeOf(issues: ReadonlyArray<{ message: string }>): SignupErrorCode {
  const code = issues[0]?.message ?? '';
  return isSignupErrorCode(code) ? code : 'email_required';
}

/** A signup's list, when it names one: the portal's list, or null for any other (refused). Absent is the portal's. */
export function isKnownList(value: unknown): boolean {
  return value === undefined || value === PORTAL_LIST;
}
