import { COUNTRY_NAMES } from './country-names.js';

/** Where an address is, as stored on a waitlist entry. Unknown parts are null, never ''. */
export interface GeoLocation {
  country: string | null;
  city: string | null;
  region: string | null;
}

/** The logger calls the geolocation code makes (a Fastify/pino logger fits). */
export interface GeoLogger {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

const MAX_FIELD_LENGTH = 200;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** A place name fit to store: text only, trimmed, no control characters, bounded; otherwise null. */
export function cleanPlaceName(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const cleaned = value.replace(CONTROL_CHARACTERS, '').trim().slice(0, MAX_FIELD_LENGTH).trim();
  return cleaned === '' ? null : cleaned;
}

/**
 * English country name for an ISO 3166-1 alpha-2 code ('GB' -> 'United Kingdom'); null if unknown.
 * From a table (country-names.ts) made from ICU's names: Intl.DisplayNames would map about 5 MB of
 * ICU data into the server on the first signup.
 */
export function countryNameFromCode(code: unknown): string | null {
  if (typeof code !== 'string' || !/^[A-Za-z]{2}$/.test(code.trim())) return null;
  return COUNTRY_NAMES[code.trim().toUpperCase()] ?? null;
}

/** A location with at least one known part, or null. */
export function nonEmptyLocation(location: GeoLocation): GeoLocation | null {
  return location.country || location.city || location.region ? location : null;
}
