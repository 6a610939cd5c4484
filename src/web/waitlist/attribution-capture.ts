import {
  ATTRIBUTION_FIELDS,
  cleanLandingPath,
  cleanReferrer,
  cleanUtmValue,
  UTM_FIELDS,
  type AttributionField,
} from '../../shared/waitlist/attribution.js';

/**
 * The first touch of the tab's visit (issue 10), sent with the signup: the UTM parameters of the
 * page the visitor arrived on, the referring site's origin and that page's path. Captured when the
 * app starts on a page (this module's import, below), since later the arrival page is gone: links
 * inside the site navigate without reloading, and a reload's `document.referrer` is our own page.
 * Kept in sessionStorage (this tab only, gone when it closes), so a full page load inside the site
 * keeps the first touch instead of replacing it with the inner page.
 *
 * Cleaned here with the server's own rules (attribution.ts, no schema library in the landing page's
 * JavaScript) so the body stays small; the server cleans again and trusts none of it.
 */

/** The attribution fields a signup sends: only those captured (an empty object when none). */
export type CapturedAttribution = Partial<Record<AttributionField, string>>;

/** What the capture reads of the page (window.location and document.referrer in the browser). */
export interface PageArrival {
  /** location.search: `?utm_source=…` */
  search: string;
  /** document.referrer: the page that linked here, '' when none or hidden by its Referrer-Policy. */
  referrer: string;
  /** location.pathname */
  pathname: string;
  /** location.origin: our own pages are not a referrer. */
  ownOrigin: string;
}

export const ATTRIBUTION_STORAGE_KEY = 'waitlist:first-touch';

/** The page's own attribution: its UTM parameters, the referring origin (not ours) and its path. */
export function attributionOfPage(page: PageArrival): CapturedAttribution {
  const touch: CapturedAttribution = {};
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(page.search);
  } catch {
    params = new URLSearchParams();
  }
  for (const field of UTM_FIELDS) {
    const value = cleanUtmValue(params.get(field));
    if (value !== null) touch[field] = value;
  }
  const referrer = cleanReferrer(page.referrer, page.ownOrigin);
  if (referrer !== null) touch.referrer = referrer;
  const landingPath = cleanLandingPath(page.pathname);
  if (landingPath !== null) touch.landing_path = landingPath;
  return touch;
}

/** A stored first touch read back; null when absent or not one (another script's value, a hand edit). */
export function parseStoredTouch(stored: string | null): CapturedAttribution | null {
  if (stored === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(stored);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const touch: CapturedAttribution = {};
  for (const field of ATTRIBUTION_FIELDS) {
    const v = (value as Record<string, unknown>)[field];
    if (typeof v === 'string') touch[field] = v;
  }
  return touch;
}

/**
 * The visit's first touch: the stored one when this tab already captured it, else this page's.
 * `store` is what to keep in sessionStorage (null: keep what is there).
 */
export function firstTouch(page: PageArrival, stored: string | null): { touch: CapturedAttribution; store: string | null } {
  const kept = parseStoredTouch(stored);
  if (kept) return { touch: kept, store: null };
  const touch = attributionOfPage(page);
  return { touch, store: JSON.stringify(touch) };
}

let captured: CapturedAttribution | undefined;

/**
 * The first touch of this tab's visit, captured on the first call (at start-up, see below). Storage
 * may be blocked (privacy settings, sandboxed frames): then the touch lives as long as the page.
 * `{}` outside a browser (prerendering).
 */
export function firstTouchAttribution(): CapturedAttribution {
  if (captured) return captured;
  if (typeof window === 'undefined' || typeof document === 'undefined') return {};
  let stored: string | null = null;
  try {
    stored = window.sessionStorage.getItem(ATTRIBUTION_STORAGE_KEY);
  } catch {
    // Storage blocked: this page is the first we know of.
  }
  const { location } = window;
  const result = firstTouch({ search: location.search, referrer: document.referrer, pathname: location.pathname, ownOrigin: location.origin }, stored);
  if (result.store !== null) {
    try {
      window.sessionStorage.setItem(ATTRIBUTION_STORAGE_KEY, result.store);
    } catch {
      // Blocked or full: the touch is still sent from this page.
    }
  }
  captured = result.touch;
  return captured;
}

// On the app's start (this module is part of the landing form's code, loaded on every page): the
// page the visitor arrived on is only known now.
firstTouchAttribution();
