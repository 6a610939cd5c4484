import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { EXPORT_TICKET_SECONDS, type ExportDownload, type ExportDownloadStatus, type ExportRequest } from '../../shared/admin/waitlist-api.js';

/**
 * Export downloads by ticket (the `export_downloads` table). The admin page does not read an export
 * through JavaScript: it asks for one with its access token (createExportDownload), posts the
 * one-time ticket it gets in a plain form, and the browser saves the answer itself, streaming it to
 * disk as it arrives, however large (claimExportDownload, then finishExportDownload as the answer
 * ends). The page learns the outcome and the row count for its toast from exportDownloadStatus.
 *
 * A row holds the request only until its ticket is used, and is purged a day after it was made.
 * Only the ticket's SHA-256 is stored: a copy of the table cannot start a download.
 */

/** How long a download's row is kept (its outcome is read within seconds). */
const KEEP_MS = 24 * 60 * 60 * 1000;

const hashTicket = (ticket: string) => createHash('sha256').update(ticket).digest('hex');

const iso = (ms: number) => new Date(ms).toISOString();

/** A new download of `request` for the admin's session; older rows than KEEP_MS are purged first. */
export async function createExportDownload(
  db: Kysely<Database>,
  owner: { userId: string; sessionId: string },
  request: ExportRequest,
  now = Date.now(),
): Promise<ExportDownload> {
  await db.deleteFrom('export_downloads').where('created_at', '<', iso(now - KEEP_MS)).execute();
  const ticket = randomBytes(32).toString('base64url');
  const download = { id: randomUUID(), ticket, expiresAt: iso(now + EXPORT_TICKET_SECONDS * 1000) };
  await db
    .insertInto('export_downloads')
    .values({
      id: download.id,
      ticket_hash: hashTicket(ticket),
      user_id: owner.userId,
      session_id: owner.sessionId,
      request: JSON.stringify(request),
      created_at: iso(now),
      expires_at: download.expiresAt,
    })
    .execute();
  return download;
}

export interface ClaimedDownload {
  id: string;
  userId: string;
  sessionId: string;
  /** The request as it was stored (JSON); the caller validates it again. */
  request: string;
}

/**
 * Uses a ticket: its download becomes `running`, in one statement, so of two posts of the same
 * ticket (on one instance or two) only one gets it; the request is then taken out of the table.
 * Null for a ticket that is unknown, used or expired.
 */
export async function claimExportDownload(db: Kysely<Database>, ticket: string, now = Date.now()): Promise<ClaimedDownload | null> {
  const claimed = await db
    .updateTable('export_downloads')
    .set({ status: 'running' })
    .where('ticket_hash', '=', hashTicket(ticket))
    .where('status', '=', 'ready')
    .where('expires_at', '>', iso(now))
    .returning(['id', 'user_id', 'session_id', 'request'])
    .executeTakeFirst();
  if (!claimed) return null;
  await db.updateTable('export_downloads').set({ request: null }).where('id', '=', claimed.id).execute();
  return { id: claimed.id, userId: claimed.user_id, sessionId: claimed.session_id, request: claimed.request ?? 'null' };
}

/** How a running download ended; a download already ended keeps its first outcome. */
export async function finishExportDownload(
  db: Kysely<Database>,
  id: string,
  outcome: { status: 'done' | 'failed'; rows: number | null; message: string | null },
  now = Date.now(),
): Promise<void> {
  await db
    .updateTable('export_downloads')
    .set({ status: outcome.status, rows: outcome.rows, message: outcome.message, finished_at: iso(now) })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .execute();
}

/** The download's progress for the admin who made it; null for another admin's or an unknown id. */
export async function exportDownloadStatus(db: Kysely<Database>, id: string, userId: string, now = Date.now()): Promise<ExportDownloadStatus | null> {
  const row = await db
    .selectFrom('export_downloads')
    .select(['status', 'rows', 'message', 'expires_at'])
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!row) return null;
  const expired = row.status === 'ready' && new Date(row.expires_at).getTime() <= now;
  return { status: expired ? 'expired' : row.status, rows: row.rows, message: row.message };
}
