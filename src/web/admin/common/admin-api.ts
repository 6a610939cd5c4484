import { z } from 'zod/mini';
import { ADMIN_INSIGHTS_PATH, waitlistInsightsSchema, type WaitlistInsights } from '../../../shared/admin/waitlist-api.js';
import { filterToSearchParams, type WaitlistFilter } from '../../../shared/admin/waitlist-filter.js';
import { getAuthClient } from '../../session/auth-client.js';

/**
 * The admin API's client: the access token on every request, its errors as AdminApiError, answers
 * checked against the contract. Each area's own calls build on it (waitlist/waitlist-api.ts,
 * mail/mail-api.ts, account/sessions-api.ts); the insight figures are here, asked for by the
 * waitlist area (filter suggestions, invite counts) and the insight panel alike.
 */

// The page's Content-Security-Policy forbids eval: zod must not even probe for it.
z.config({ jitless: true });

/** A failed admin API call: the HTTP status (0 for a network failure), a message fit for a toast and the server's error code. */
export class AdminApiError extends Error {
  constructor(
    public readonly status: number,
    message: string,
    public readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'AdminApiError';
  }

  /** The session is gone or no longer accepted: the page signs out locally and goes to /auth. */
  get unauthorized(): boolean {
    return this.status === 401;
  }
}

export function isUnauthorized(error: unknown): boolean {
  return error instanceof AdminApiError && error.unauthorized;
}

/** The session is valid but its assurance level is not enough: a TOTP code is due, or (ADMIN_MFA=required) a factor must be enrolled first. */
export function isInsufficientAal(error: unknown): boolean {
  return error instanceof AdminApiError && error.code === 'insufficient_aal';
}

/** The admin's role (as the server holds it now) does not allow this call. */
export function isInsufficientRole(error: unknown): boolean {
  return error instanceof AdminApiError && error.code === 'insufficient_role';
}

export function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

/** The current access token; auth-js refreshes it first when it is about to expire. Also for the event stream, which reads its response itself. */
export async function accessToken(): Promise<string> {
  const { data, error } = await getAuthClient().getSession();
  if (error || !data.session) throw new AdminApiError(401, 'Your session has ended. Please sign in again.');
  return data.session.access_token;
}

async function errorFrom(response: Response): Promise<AdminApiError> {
  let message = `Request failed with status ${response.status}`;
  let code: string | null = null;
  try {
    const body: unknown = await response.json();
    const nested = (body as { error?: { message?: unknown; code?: unknown } } | null)?.error;
    const flat = (body as { message?: unknown; code?: unknown } | null) ?? undefined;
    if (typeof nested?.message === 'string' && nested.message !== '') message = nested.message;
    else if (typeof flat?.message === 'string' && flat.message !== '') message = flat.message;
    const rawCode = nested?.code ?? flat?.code;
    if (typeof rawCode === 'string' && rawCode !== '') code = rawCode;
  } catch {
    // Not JSON (a proxy's error page, say): keep the status line.
  }
  return new AdminApiError(response.status, message, code);
}

export async function request(path: string, init: RequestInit = {}): Promise<Response> {
  const token = await accessToken();
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${token}`);
  let response: Response;
  try {
    response = await fetch(path, { ...init, headers, credentials: 'same-origin' });
  } catch (error) {
    if (isAbort(error)) throw error;
    throw new AdminApiError(0, 'Could not reach the server. Check your connection and try again.');
  }
  if (!response.ok) throw await errorFrom(response);
  return response;
}

export function postJson(path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return request(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
}

/** The answer's JSON, checked against the route's declared response. */
export async function readJson<T>(response: Response, schema: z.ZodMiniType<T>): Promise<T> {
  const result = schema.safeParse(await response.json().catch(() => undefined));
  if (!result.success) throw new AdminApiError(response.status, 'The server sent an answer this page does not understand. Reload the page.');
  return result.data;
}

/** The insight panel's figures for the entries matching `filter` (its `until` too, when set). */
export async function fetchWaitlistInsights(filter: WaitlistFilter, signal?: AbortSignal): Promise<WaitlistInsights> {
  const params = filterToSearchParams(filter);
  if (filter.until) params.set('until', filter.until);
  const query = params.toString();
  const response = await request(query ? `${ADMIN_INSIGHTS_PATH}?${query}` : ADMIN_INSIGHTS_PATH, { signal });
  return readJson(response, waitlistInsightsSchema);
}

/** Waits `ms`, or less if `signal` aborts (the caller checks which). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
