import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { EXPORT_TICKET_SECONDS, type ExportDownload, type ExportDownloadStatus, type ExportRequest } from '../../shared/admin/waitlist-api.js';

/**
 * Export downloads by ticket (the `export_downloads` table). The admin page does not read an export
 * through JavaScript: it asks for one with its access token (createExportDownload), posts the
 * one-time ticket it gets in a plain form, and the browser saves the answer itself, streaming it to
 * disk as it arrives, however large; the page learns the outcome and the row count for its toast
 * from exportDownloadStatus. A row holds the request only until its ticket is used or expires, and
 * only the ticket's SHA-256 is stored: a copy of the table cannot start a download.
 */

/** How long a download's row is kept (its outcome is read within seconds). */
const KEEP_MS = 24 * 60 * 60 * 1000;
/** How often a running download's heartbeat is written, and how old one may be before the download counts as failed (its server died). */
export const HEARTBEAT_MS = 10_000;
const HEARTBEAT_STALE_MS = 3 * HEARTBEAT_MS;
/** How often expired requests and old rows are swept away (sweepExportDownloads). */
export const SWEEP_MS = 60_000;
const STOPPED_MESSAGE = 'The download stopped: the server did not finish sending it. Export again.';

const hashTicket = (ticket: string) => createHash('sha256').update(ticket).digest('hex');

const iso = (ms: number) => new Date(ms).toISOString();

/** Who asks for a download: an admin's session, or an API key (src/server/api); it must still be valid when the ticket is used. */
export type ExportOwner = { userId: string; sessionId: string } | { apiKeyId: string };

/** Whose downloads a request may follow: an admin's (any of their sessions') or an API key's. */
export type ExportFollower = { userId: string } | { apiKeyId: string };

/** A new download of `request` for `owner` (the table is swept first). */
export async function createExportDownload(
  db: Kysely<Database>,
  owner: ExportOwner,
  request: ExportRequest,
  now = Date.now(),
): Promise<ExportDownload> {
  await sweepExportDownloads(db, now);
  const ticket = randomBytes(32).toString('base64url');
  const download = { id: randomUUID(), ticket, expiresAt: iso(now + EXPORT_TICKET_SECONDS * 1000) };
  await db
    .insertInto('export_downloads')
    .values({
      id: download.id,
      ticket_hash: hashTicket(ticket),
      ...('apiKeyId' in owner
        ? { user_id: null, session_id: null, api_key_id: owner.apiKeyId }
        : { user_id: owner.userId, session_id: owner.sessionId, api_key_id: null }),
      request: JSON.stringify(request),
      created_at: iso(now),
      expires_at: download.expiresAt,
    })
    .execute();
  return download;
}

/**
 * Uses a ticket: its download becomes `running`, in one statement, so of two posts of the same
 * ticket (on one instance or two) only one gets it; the request is then taken out of the table and
 * returned as it was stored (JSON: the caller validates it again). Null for a ticket that is
 * unknown, used or expired.
 */
export async function claimExportDownload(
  db: Kysely<Database>,
  ticket: string,
  /** Whose tickets this route takes: an admin session's (the admin page) or an API key's (/api/v1). */
  kind: 'session' | 'api-key',
  now = Date.now(),
): Promise<{ id: string; owner: ExportOwner; request: string } | null> {
  const claimed = await db
    .updateTable('export_downloads')
    .set({ status: 'running', heartbeat_at: iso(now) })
    .where('ticket_hash', '=', hashTicket(ticket))
    .where('status', '=', 'ready')
    .where('expires_at', '>', iso(now))
    .where(kind === 'api-key' ? 'api_key_id' : 'user_id', 'is not', null)
    .returning(['id', 'user_id', 'session_id', 'api_key_id', 'request'])
    .executeTakeFirst();
  if (!claimed) return null;
  await db.updateTable('export_downloads').set({ request: null }).where('id', '=', claimed.id).execute();
  const owner: ExportOwner =
    claimed.api_key_id !== null ? { apiKeyId: claimed.api_key_id } : { userId: claimed.user_id ?? '', sessionId: claimed.session_id ?? '' };
  return { id: claimed.id, owner, request: claimed.request ?? 'null' };
}

/** Says a running download is still being sent. */
export async function beatExportDownload(db: Kysely<Database>, id: string, now = Date.now()): Promise<void> {
  await db.updateTable('export_downloads').set({ heartbeat_at: iso(now) }).where('id', '=', id).where('status', '=', 'running').execute();
}

/** Clears the requests of tickets that expired unused, and deletes rows older than KEEP_MS. */
export async function sweepExportDownloads(db: Kysely<Database>, now = Date.now()): Promise<void> {
  await db.updateTable('export_downloads').set({ request: null }).where('status', '=', 'ready').where('expires_at', '<=', iso(now)).where('request', 'is not', null).execute();
  await db.deleteFrom('export_downloads').where('created_at', '<', iso(now - KEEP_MS)).execute();
}

/** How a download's answer ended. */
export type ExportOutcome = { status: 'done' | 'failed'; rows: number | null; message: string | null };

/** Records how a running download ended; a download already ended keeps its first outcome. */
export async function finishExportDownload(db: Kysely<Database>, id: string, outcome: ExportOutcome, now = Date.now()): Promise<void> {
  await db.updateTable('export_downloads').set({ ...outcome, finished_at: iso(now) }).where('id', '=', id).where('status', '=', 'running').execute();
}

/** The download's progress for the admin or key that made it; null for another's or an unknown id. */
export async function exportDownloadStatus(db: Kysely<Database>, id: string, follower: ExportFollower, now = Date.now()): Promise<ExportDownloadStatus | null> {
  const row = await db
    .selectFrom('export_downloads')
    .select(['status', 'rows', 'message', 'expires_at', 'heartbeat_at'])
    .where('id', '=', id)
    .$call((qb) => ('apiKeyId' in follower ? qb.where('api_key_id', '=', follower.apiKeyId) : qb.where('user_id', '=', follower.userId)))
    .executeTakeFirst();
  if (!row) return null;
  if (row.status === 'ready' && new Date(row.expires_at).getTime() <= now) return { status: 'expired', rows: null, message: null };
  if (row.status === 'running' && (row.heartbeat_at === null || new Date(row.heartbeat_at).getTime() < now - HEARTBEAT_STALE_MS)) {
    return { status: 'failed', rows: row.rows, message: STOPPED_MESSAGE };
  }
  return { status: row.status, rows: row.rows, message: row.message };
}
