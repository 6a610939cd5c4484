/**
 * Waitlist e-mail rules, shared by the signup form and the server route so both say the same thing.
 */
export const MAX_EMAIL_LENGTH = 254;

export type EmailProblem = 'required' | 'too_long' | 'invalid';

export type EmailCheck = { ok: true; email: string } | { ok: false; problem: EmailProblem };

// Deliberately close to the WHATWG `type=email` rule, so the browser and the server agree.
const EMAIL_PATTERN =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** Trims the value, then checks it is a plausible address. Returns the address as it will be stored. */
export function checkWaitlistEmail(value: unknown): EmailCheck {
  if (typeof value !== 'string') return { ok: false, problem: 'required' };
  const trimmed = value.trim();
  if (trimmed === '') return { ok: false, problem: 'required' };
  if (trimmed.length > MAX_EMAIL_LENGTH) return { ok: false, problem: 'too_long' };
  if (CONTROL_CHARACTERS.test(trimmed) || !EMAIL_PATTERN.test(trimmed)) return { ok: false, problem: 'invalid' };
  return { ok: true, email: trimmed.toLowerCase() };
}
