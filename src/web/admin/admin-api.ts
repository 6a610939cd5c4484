import { z } from 'zod/mini';
import {
  ADMIN_DELETE_MATCHING_PATH,
  ADMIN_DELETE_PATH,
  ADMIN_EXPORT_PATH,
  ADMIN_INSIGHTS_PATH,
  ADMIN_INVITE_PATH,
  ADMIN_WAITLIST_PATH,
  deleteMatchingResultSchema,
  deleteResultSchema,
  inviteResultSchema,
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
import { createCsvRowCounter } from './csv-row-counter.js';

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

export interface ExportedFile {
  blob: Blob;
  /** From Content-Disposition; null when the server sent none. */
  fileName: string | null;
  /** Data rows in the file (its header not counted), counted while it arrived. */
  rows: number;
}

/** The export's bytes go into a Blob about this many at a time (see exportWaitlist). */
const EXPORT_BLOB_PART_BYTES = 1 << 20;

/**
 * Downloads an export without a long task on the page, however large the file (1,000,000 rows are
 * about 90 MB). The body is read chunk by chunk and its rows counted as the bytes arrive, so it never
 * becomes one string to decode and scan. The file is built from Blobs of about a megabyte made along
 * the way: Chrome copies a Blob's bytes on the main thread when it is made (about 2 s for 90 MB in
 * one `new Blob`), while a Blob made of Blobs copies nothing.
 */
export async function exportWaitlist(body: ExportRequest, signal?: AbortSignal): Promise<ExportedFile> {
  const response = await postJson(ADMIN_EXPORT_PATH, body, signal);
  const fileName = fileNameFromDisposition(response.headers.get('Content-Disposition'));
  const type = response.headers.get('Content-Type') ?? 'text/csv; charset=utf-8';
  const counter = createCsvRowCounter();
  const parts: Blob[] = [];
  let pending: Uint8Array<ArrayBuffer>[] = [];
  let pendingBytes = 0;
  const flush = () => {
    if (pending.length === 0) return;
    parts.push(new Blob(pending));
    pending = [];
    pendingBytes = 0;
  };
  if (response.body) {
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        counter.push(value);
        pending.push(value);
        pendingBytes += value.byteLength;
        if (pendingBytes >= EXPORT_BLOB_PART_BYTES) flush();
      }
    } catch (error) {
      if (isAbort(error)) throw error;
      throw new AdminApiError(0, 'The download was interrupted. Check your connection and try again.');
    } finally {
      reader.releaseLock();
    }
  }
  flush();
  return { blob: new Blob(parts, { type }), fileName, rows: counter.rows() };
}

/** The file name of a Content-Disposition header: RFC 5987 `filename*` first, then `filename`. */
export function fileNameFromDisposition(header: string | null): string | null {
  if (!header) return null;
  const extended = /filename\*\s*=\s*(?:[\w!#$%&+^`{}~-]+)?'[^']*'([^;]+)/i.exec(header);
  if (extended?.[1]) {
    try {
      return safeFileName(decodeURIComponent(extended[1].trim().replace(/^"|"$/g, '')));
    } catch {
      // Malformed percent-encoding: fall through to the plain parameter.
    }
  }
  const quoted = /filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header);
  if (quoted?.[1]) return safeFileName(quoted[1].replace(/\\(.)/g, '$1'));
  const bare = /filename\s*=\s*([^;\s]+)/i.exec(header);
  if (bare?.[1]) return safeFileName(bare[1]);
  return null;
}

function safeFileName(name: string): string | null {
  const base = name.split(/[\\/]/).pop()?.trim() ?? '';
  return base === '' || base === '.' || base === '..' ? null : base;
}
