/**
 * API keys (issue 32 point 2): what a key looks like and what it may do, declared once for the
 * server, the CLI and the admin page.
 *
 * A key is `wl_` followed by 43 base64url characters (32 random bytes): the prefix makes a leaked
 * key easy to recognise (secret scanners, logs) and tells it apart from an admin's access token (a
 * JWT starts with `eyJ`). It is sent as `Authorization: Bearer wl_…`.
 */
export const API_KEY_PREFIX = 'wl_';
export const API_KEY_PATTERN = '^wl_[A-Za-z0-9_-]{43}$';
/** How many characters of a key (prefix included) are kept and shown to tell keys apart. */
export const API_KEY_SHOWN_LENGTH = 11;

/**
 * - `entries:read`: list and read waitlist entries (GET /api/v1/entries, /api/v1/entries/{id});
 * - `signups:write`: add signups (POST /api/v1/signups);
 * - `export`: start CSV exports and download them (POST /api/v1/exports…).
 */
export const API_SCOPES = ['entries:read', 'signups:write', 'export'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

export function isApiScope(value: string): value is ApiScope {
  return (API_SCOPES as readonly string[]).includes(value);
}

/** Requests per minute a key may be allowed at most (each key's own; API_RATE_LIMIT is the default). */
export const MAX_API_KEY_RATE_LIMIT = 100_000;
/** The longest a key may be given to live, in days (a key may also never expire). */
export const MAX_API_KEY_EXPIRY_DAYS = 3650;
export const MAX_API_KEY_NAME_LENGTH = 100;
