import type { Kysely } from 'kysely';
import { toIsoTimestamp } from '../db/database.js';
import { decodeKeysetCursor, encodeKeysetCursor, type KeysetCursor } from '../db/keyset-cursor.js';
import type { Database } from '../db/schema.js';
import { OUTBOX_STATUSES, type OutboxMessageView, type OutboxStatus } from '../../shared/admin/mail-api.js';

/**
 * The admin's view of the outbox (src/shared/admin/mail-api.ts): counts, pages newest first, and
 * retries of failed messages. Same queries on SQLite and PostgreSQL.
 */
type Db = Kysely<Database>;

/** Keyset position: created_at (ISO, as every outbox row is written) and id of the last row seen. */
export type OutboxCursor = KeysetCursor;

const ISO_MS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Ids per `id IN (...)` statement: far below either database's parameter limit. */
const ID_CHUNK_SIZE = 5000;

export const encodeOutboxCursor: (cursor: OutboxCursor) => string = encodeKeysetCursor;

/** Outbox rows are written with ISO timestamps to the millisecond, and their ids are lower-case. */
const isOutboxTime = (t: string) => ISO_MS_RE.test(t) && !Number.isNaN(Date.parse(t)) && new Date(t).toISOString() === t;

/** The cursor, or null when it is not one this server issued (a 400, never a query error). */
export function decodeOutboxCursor(value: string): OutboxCursor | null {
  const cursor = decodeKeysetCursor(value, isOutboxTime);
  return cursor && { createdAt: cursor.createdAt, id: cursor.id.toLowerCase() };
}

export async function countOutbox(db: Db): Promise<Record<OutboxStatus, number>> {
  // Served by the (status, next_attempt_at) index alone.
  const rows = await db
    .selectFrom('mail_outbox')
    .select((eb) => ['status', eb.fn.countAll().as('n')])
    .groupBy('status')
    .execute();
  const counts = Object.fromEntries(OUTBOX_STATUSES.map((s) => [s, 0])) as Record<OutboxStatus, number>;
  // PostgreSQL returns count(*) as a bigint string.
  for (const r of rows) counts[r.status] = Number(r.n);
  return counts;
}

/** One page, newest first (created_at DESC, id DESC), strictly after `after`; reads limit + 1 to know if more follow. */
export async function listOutboxPage(
  db: Db,
  options: { status?: OutboxStatus | undefined; limit: number; after?: OutboxCursor | null },
): Promise<{ messages: OutboxMessageView[]; next: OutboxCursor | null }> {
  const { status, limit, after } = options;
  let query = db
    .selectFrom('mail_outbox')
    .select(['id', 'kind', 'to_address', 'subject', 'status', 'attempts', 'last_error', 'created_at', 'next_attempt_at', 'sent_at'])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1);
  if (status) query = query.where('status', '=', status);
  if (after) {
    query = query.where((eb) =>
      eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]),
    );
  }
  const rows = await query.execute();
  const messages = rows.slice(0, limit).map(
    (r): OutboxMessageView => ({
      id: r.id,
      kind: r.kind,
      to: r.to_address,
      subject: r.subject,
      status: r.status,
      attempts: Number(r.attempts),
      lastError: r.last_error,
      createdAt: toIsoTimestamp(r.created_at),
      nextAttemptAt: toIsoTimestamp(r.next_attempt_at),
      sentAt: r.sent_at === null ? null : toIsoTimestamp(r.sent_at),
    }),
  );
  const last = messages[messages.length - 1];
  return { messages, next: rows.length > limit && last ? { createdAt: last.createdAt, id: last.id } : null };
}

/**
 * Queues the failed messages among `ids` again for `now`, their attempts reset (so they get the
 * full number of tries); the last error stays until one is sent. Other rows are left alone.
 * Returns the ids that were queued again.
 */
export async function retryFailedMail(db: Db, ids: readonly string[], now: Date): Promise<string[]> {
  const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
  const retried: string[] = [];
  for (let i = 0; i < unique.length; i += ID_CHUNK_SIZE) {
    const rows = await db
      .updateTable('mail_outbox')
      .set({ status: 'queued', attempts: 0, next_attempt_at: now.toISOString(), lease_until: null })
      .where('id', 'in', unique.slice(i, i + ID_CHUNK_SIZE))
      .where('status', '=', 'failed')
      .returning('id')
      .execute();
    for (const r of rows) retried.push(r.id);
  }
  return retried;
}
