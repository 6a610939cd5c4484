/**
 * Where a signup came from (issue 10): the campaign's UTM parameters, the referring site and the
 * page the visitor landed on, captured by the form and stored with the entry. Declared once here
 * for the form (with and without JavaScript), the server, the admin and the CSV columns.
 *
 * These values come from the visitor's browser: they are bounded, cleaned and stored for reporting
 * only, and never trusted for anything else (no redirect, no markup, no decision is made on them).
 * A value that fails the rules below is dropped (null); attribution never fails a signup.
 *
 * - `utm_*`: trimmed; control characters removed; at most MAX_UTM_LENGTH characters (cut there).
 * - `referrer`: the referring page's origin only (`https://news.example`): http(s) URLs only, never
 *   a path or query (they can hold personal data); our own origin is not a referrer (null).
 * - `landing_path`: the path of the first page of the visit (`/`, `/thanks`…), without query or
 *   fragment, at most MAX_LANDING_PATH_LENGTH characters, starting with a single `/`.
 * - `source` (derived, stored for grouping and filtering): utm_source lower-cased, else the
 *   referrer's host name without a leading `www.`, else null (shown as "Direct").
 */
export const UTM_FIELDS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const;
export type UtmField = (typeof UTM_FIELDS)[number];

/** The fields a signup request may carry (JSON or form), named as the columns that store them. */
export const ATTRIBUTION_FIELDS = [...UTM_FIELDS, 'referrer', 'landing_path'] as const;
export type AttributionField = (typeof ATTRIBUTION_FIELDS)[number];

export const MAX_UTM_LENGTH = 150;
export const MAX_REFERRER_LENGTH = 200;
export const MAX_LANDING_PATH_LENGTH = 300;

/** What an entry stores about where it came from (every field null when nothing was captured). */
export type Attribution = Record<AttributionField, string | null> & { source: string | null };

export const NO_ATTRIBUTION: Attribution = {
  utm_source: null,
  utm_medium: null,
  utm_campaign: null,
  utm_term: null,
  utm_content: null,
  referrer: null,
  landing_path: null,
  source: null,
};

// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;

// Half of a surrogate pair on its own (JSON's "\ud800"): not text either database can store as
// sent, and PostgreSQL refuses it inside the batch insert's JSON, failing the whole batch. Found
// code point by code point (a lookbehind regex would not even parse in older Safari).
const isLoneSurrogate = (point: string) => point.length === 1 && point >= '\ud800' && point <= '\udfff';

/** A UTM value as stored: trimmed, without control or bidi characters, cut at MAX_UTM_LENGTH code points; null when empty or not text. */
export function cleanUtmValue(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const points = Array.from(value.replace(CONTROL_CHARS, '').trim()).filter((point) => !isLoneSurrogate(point));
  const cleaned = points.slice(0, MAX_UTM_LENGTH).join('').trim();
  return cleaned === '' ? null : cleaned;
}

/** The origin of an http(s) URL, or null (anything else, too long, or `ownOrigin` itself). */
export function cleanReferrer(value: unknown, ownOrigin?: string | null): string | null {
  if (typeof value !== 'string' || value.length > 2048) return null;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const origin = url.origin;
  if (origin.length > MAX_REFERRER_LENGTH || origin === 'null') return null;
  if (ownOrigin && origin === ownOrigin) return null;
  return origin;
}

const PATH_CHARS = /^\/(?!\/)[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;

/** A path as stored: from a path or a whole URL, without query and fragment; null when it is not a plain path. */
export function cleanLandingPath(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  let path = value.trim();
  if (path === '' || path.length > 2048) return null;
  if (!path.startsWith('/')) {
    try {
      path = new URL(path).pathname;
    } catch {
      return null;
    }
  }
  path = path.replace(/[?#].*$/, '');
  if (path.length > MAX_LANDING_PATH_LENGTH || !PATH_CHARS.test(path)) return null;
  return path;
}

/** The derived `source`: utm_source lower-cased, else the referrer's host without `www.`, else null. */
export function deriveSource(utmSource: string | null, referrer: string | null): string | null {
  if (utmSource) return utmSource.toLowerCase();
  if (referrer) {
    try {
      return new URL(referrer).hostname.replace(/^www\./, '') || null;
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * The attribution of a signup from the fields it sent (JSON or form, any of ATTRIBUTION_FIELDS;
 * anything else ignored). `ownOrigin` (PUBLIC_URL's origin, or the request's) is not a referrer.
 */
export function normalizeAttribution(fields: Partial<Record<string, unknown>>, ownOrigin?: string | null): Attribution {
  // Written out field by field: this runs for every signup.
  const utm_source = cleanUtmValue(fields.utm_source);
  const referrer = cleanReferrer(fields.referrer, ownOrigin);
  return {
    utm_source,
    utm_medium: cleanUtmValue(fields.utm_medium),
    utm_campaign: cleanUtmValue(fields.utm_campaign),
    utm_term: cleanUtmValue(fields.utm_term),
    utm_content: cleanUtmValue(fields.utm_content),
    referrer,
    landing_path: cleanLandingPath(fields.landing_path),
    source: deriveSource(utm_source, referrer),
  };
}

/**
 * The attribution a no-JavaScript form post carries in its `Referer` header: the landing page's
 * own URL (same origin), whose query holds the UTM parameters and whose path is the landing path.
 * The external referrer is unknown then (null). A cross-origin or missing Referer gives nothing.
 */
export function attributionFromFormReferer(referer: string | undefined, ownOrigin: string | null): Attribution {
  if (!referer || referer.length > 4096 || !ownOrigin) return { ...NO_ATTRIBUTION };
  let url: URL;
  try {
    url = new URL(referer);
  } catch {
    return { ...NO_ATTRIBUTION };
  }
  if (url.origin !== ownOrigin) return { ...NO_ATTRIBUTION };
  const fields: Record<string, unknown> = { landing_path: url.pathname };
  for (const f of UTM_FIELDS) {
    const v = url.searchParams.get(f);
    if (v !== null) fields[f] = v;
  }
  return normalizeAttribution(fields, ownOrigin);
}

/** True when nothing was captured. */
export function isEmptyAttribution(a: Attribution): boolean {
  return ATTRIBUTION_FIELDS.every((f) => a[f] === null);
}

/** How the admin shows an entry's source: the derived source, or 'Direct'. */
export function formatSource(source: string | null): string {
  return source ?? 'Direct';
}
