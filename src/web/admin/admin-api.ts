import { z } from 'zod/mini';
import {
  ADMIN_DELETE_MATCHING_PATH,
  ADMIN_DELETE_PATH,
  ADMIN_EXPORT_DOWNLOAD_PATH,
  ADMIN_EXPORTS_PATH,
  ADMIN_INSIGHTS_PATH,
  ADMIN_INVITE_PATH,
  ADMIN_WAITLIST_PATH,
  deleteMatchingResultSchema,
  deleteResultSchema,
  EXPORT_TICKET_FIELD,
  exportDownloadSchema,
  exportDownloadStatusSchema,
  inviteResultSchema,
  type ExportDownloadStatus,
  waitlistInsightsSchema,
  waitlistPageSchema,
  type DeleteRequest,
  type DeleteResult,
  type ExportRequest,
  type InviteRequest,
  type InviteResult,
  type MatchingSelection,
  type WaitlistInsights,
  type WaitlistPage,
} from '../../shared/admin/waitlist-api.js';
import { filterToSearchParams, type WaitlistFilter } from '../../shared/admin/waitlist-filter.js';
import {
  ADMIN_SESSIONS_PATH,
  ADMIN_SESSIONS_REVOKE_PATH,
  revokeResultSchema,
  sessionListSchema,
  type AdminSession,
  type RevokeSessionsRequest,
} from '../../shared/admin/sessions-api.js';
import {
  ADMIN_MAIL_PATH,
  ADMIN_OUTBOX_PATH,
  ADMIN_OUTBOX_RETRY_PATH,
  mailStatusSchema,
  outboxPageSchema,
  retryResultSchema,
  type MailStatus,
  type OutboxPage,
  type OutboxPageQuery,
  type RetryRequest,
} from '../../shared/admin/mail-api.js';
import { getAuthClient } from '../session/auth-client.js';
import { postDownloadForm } from './download.js';

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

/** One page of the waitlist matching `filter`, newest first; counts only on the first (no `cursor`). */
export async function fetchWaitlistPage(
  { limit, cursor = null, filter = {} }: { limit: number; cursor?: string | null; filter?: WaitlistFilter },
  signal?: AbortSignal,
): Promise<WaitlistPage> {
  const params = new URLSearchParams({ limit: String(limit) });
  if (cursor) params.set('cursor', cursor);
  filterToSearchParams(filter, params);
  const response = await request(`${ADMIN_WAITLIST_PATH}?${params.toString()}`, { signal });
  return readJson(response, waitlistPageSchema);
}

/** The insight panel's figures for the entries matching `filter` (its `until` too, when set). */
export async function fetchWaitlistInsights(filter: WaitlistFilter, signal?: AbortSignal): Promise<WaitlistInsights> {
  const params = filterToSearchParams(filter);
  if (filter.until) params.set('until', filter.until);
  const query = params.toString();
  const response = await request(query ? `${ADMIN_INSIGHTS_PATH}?${query}` : ADMIN_INSIGHTS_PATH, { signal });
  return readJson(response, waitlistInsightsSchema);
}

export async function deleteWaitlistEntries(ids: string[]): Promise<DeleteResult> {
  const response = await postJson(ADMIN_DELETE_PATH, { ids } satisfies DeleteRequest);
  return readJson(response, deleteResultSchema);
}

/** Deletes every entry matching the selection's filter but its `except`; returns how many went. */
export async function deleteMatchingEntries(selection: MatchingSelection): Promise<number> {
  const response = await postJson(ADMIN_DELETE_MATCHING_PATH, selection);
  return (await readJson(response, deleteMatchingResultSchema)).deleted;
}

/** Marks the joined and confirmed entries among `ids` invited and queues their invites; counts the rest. */
export async function inviteWaitlistEntries(ids: string[]): Promise<InviteResult> {
  const response = await postJson(ADMIN_INVITE_PATH, { ids } satisfies InviteRequest);
  return readJson(response, inviteResultSchema);
}

/** As inviteWaitlistEntries, for every entry matching the selection's filter but its `except`. */
export async function inviteMatchingEntries(selection: MatchingSelection): Promise<InviteResult> {
  const response = await postJson(ADMIN_INVITE_PATH, selection satisfies InviteRequest);
  return readJson(response, inviteResultSchema);
}

/** Whether e-mail is on, its settings and the outbox's counts. */
export async function fetchMailStatus(signal?: AbortSignal): Promise<MailStatus> {
  return readJson(await request(ADMIN_MAIL_PATH, { signal }), mailStatusSchema);
}

/** One page of outbox messages (no bodies), newest first; `status` undefined = every status. */
export async function fetchOutboxPage(query: OutboxPageQuery, signal?: AbortSignal): Promise<OutboxPage> {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  return readJson(await request(`${ADMIN_OUTBOX_PATH}?${params.toString()}`, { signal }), outboxPageSchema);
}

/** Queues the failed messages among `ids` again; returns how many were. */
export async function retryOutboxMessages(ids: string[]): Promise<number> {
  const response = await postJson(ADMIN_OUTBOX_RETRY_PATH, { ids } satisfies RetryRequest);
  return (await readJson(response, retryResultSchema)).retried;
}

/** The signed-in admin's own live sessions, newest sign-in first. */
export async function fetchAdminSessions(signal?: AbortSignal): Promise<AdminSession[]> {
  const response = await request(ADMIN_SESSIONS_PATH, { signal });
  return (await readJson(response, sessionListSchema)).sessions;
}

/** Signs out the named sessions or all the others; returns how many ended. */
export async function revokeAdminSessions(which: RevokeSessionsRequest): Promise<number> {
  const response = await postJson(ADMIN_SESSIONS_REVOKE_PATH, which);
  return (await readJson(response, revokeResultSchema)).revoked;
}

/** The first wait before asking how a download is going, and the longest between two asks. */
const DOWNLOAD_POLL_FIRST_MS = 100;
const DOWNLOAD_POLL_MAX_MS = 1000;
/** Failed asks in a row (network, 5xx) before the page gives up on a download. */
const DOWNLOAD_POLL_RETRIES = 5;

/**
 * Exports as a file the browser downloads itself: the export is prepared with the access token
 * (ADMIN_EXPORTS_PATH), its one-time ticket posted in a plain form, and the browser streams the
 * answer to disk as it arrives, without this page reading a byte of it (a million rows are about
 * 90 MB). The server then says how the download went; resolves with the rows written once the file
 * is complete, and rejects with an AdminApiError if the download failed or never started.
 */
export async function downloadExport(body: ExportRequest, signal?: AbortSignal): Promise<{ rows: number }> {
  const prepared = await readJson(await postJson(ADMIN_EXPORTS_PATH, body, signal), exportDownloadSchema);
  postDownloadForm(ADMIN_EXPORT_DOWNLOAD_PATH, { [EXPORT_TICKET_FIELD]: prepared.ticket });
  let failures = 0;
  for (let wait = DOWNLOAD_POLL_FIRST_MS; ; wait = Math.min(DOWNLOAD_POLL_MAX_MS, wait * 1.5)) {
    await sleep(wait, signal);
    signal?.throwIfAborted();
    let status: ExportDownloadStatus;
    try {
      status = await readJson(await request(`${ADMIN_EXPORTS_PATH}/${prepared.id}`, { signal }), exportDownloadStatusSchema);
      failures = 0;
    } catch (error) {
      // A lost answer or a server hiccup while the browser downloads: ask again, a few times. The
      // server's own verdicts (signed out, unknown download) end it at once.
      const transient = error instanceof AdminApiError && (error.status === 0 || error.status >= 500);
      if (!transient || ++failures > DOWNLOAD_POLL_RETRIES) throw error;
      continue;
    }
    if (status.status === 'done') return { rows: status.rows ?? 0 };
    if (status.status === 'failed') throw new AdminApiError(0, status.message ?? 'The download failed. Try again.');
    if (status.status === 'expired') throw new AdminApiError(0, 'The download did not start. Check your connection and try again.');
  }
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
