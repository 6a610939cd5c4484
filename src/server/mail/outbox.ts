import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import { isPostgres, parseJsonObject, rawSqliteOf, toIsoTimestamp } from '../db/database.js';
import type { Database, MailOutboxTable } from '../db/schema.js';

/**
 * The outbox's SQL (docs/decisions/008): enqueue in the caller's transaction, claim due rows with a
 * lease, record the outcome. Timestamps are ISO strings on both dialects (text on SQLite, where
 * they compare as text; timestamptz on PostgreSQL).
 */

export interface OutboxMessage {
  /** What the message is for: `test`, `confirmation`, `invite`… */
  kind: string;
  to: string;
  subject: string;
  text: string;
  html?: string | null;
  /** Extra headers (e.g. List-Unsubscribe), name → value. */
  headers?: Record<string, string>;
}

export interface EnqueueOptions {
  /** The host part of the Message-ID: the host of PUBLIC_URL. */
  messageIdHost: string;
  /** The time of enqueueing (tests); now by default. */
  now?: Date;
}

/** A claimed row, as the worker sends it. */
export interface OutboxRow {
  id: string;
  messageId: string;
  kind: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  headers: Record<string, string>;
  attempts: number;
}

type Executor = Kysely<Database>;

/** A stable RFC 5322 Message-ID: `<uuid@host>`. */
export function createMessageId(host: string): string {
  return `<${randomUUID()}@${host}>`;
}

const enqueueListeners = new Set<() => void>();

/** Called after each enqueueMail in this process (the worker polls at once instead of waiting). */
export function onEnqueue(listener: () => void): () => void {
  enqueueListeners.add(listener);
  return () => enqueueListeners.delete(listener);
}

/**
 * Writes one message to the outbox, with `db` or the caller's transaction (so the message exists
 * exactly when the change that causes it does). Resolves to the row's id and Message-ID.
 */
export async function enqueueMail(db: Executor, message: OutboxMessage, options: EnqueueOptions): Promise<{ id: string; messageId: string }> {
  const id = randomUUID();
  const messageId = createMessageId(options.messageIdHost);
  const now = (options.now ?? new Date()).toISOString();
  await db
    .insertInto('mail_outbox')
    .values({
      id,
      message_id: messageId,
      kind: message.kind,
      to_address: message.to,
      subject: message.subject,
      text_body: message.text,
      html_body: message.html ?? null,
      headers: JSON.stringify(message.headers ?? {}),
      status: 'queued',
      attempts: 0,
      next_attempt_at: now,
      created_at: now,
    })
    .execute();
  // Inside a transaction the row is not visible yet; the worker then finds it on its next poll.
  for (const listener of enqueueListeners) listener();
  return { id, messageId };
}

function toRow(r: Selectable<MailOutboxTable>): OutboxRow {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(parseJsonObject(r.headers))) if (typeof value === 'string') headers[name] = value;
  return {
    id: r.id,
    messageId: r.message_id,
    kind: r.kind,
    to: r.to_address,
    subject: r.subject,
    text: r.text_body,
    html: r.html_body,
    headers,
    attempts: Number(r.attempts),
  };
}

export interface ClaimOptions {
  now: Date;
  /** How long the claim lasts; after it, another worker may take the row (the sender is presumed dead). */
  leaseMs: number;
  limit: number;
  /** A row whose lease expired after this many attempts is not claimed again (failExhaustedLeases ends it). */
  maxAttempts: number;
}

/**
 * Claims up to `limit` due rows for this worker: queued rows whose time has come, and rows left
 * `sending` by a sender whose lease expired. Each becomes `sending` with a lease and one more attempt.
 * PostgreSQL: the row locks of `FOR UPDATE SKIP LOCKED` make concurrent workers take different rows.
 * SQLite: one writer at a time; the statement runs inside BEGIN IMMEDIATE (the write lock from the start).
 */
export async function claimDueMail(db: Executor, options: ClaimOptions): Promise<OutboxRow[]> {
  const now = options.now.toISOString();
  const lease = new Date(options.now.getTime() + options.leaseMs).toISOString();
  const lockRows = isPostgres(db) ? sql`FOR UPDATE SKIP LOCKED` : sql``;
  const claim = sql<Selectable<MailOutboxTable>>`
    UPDATE mail_outbox SET status = 'sending', attempts = attempts + 1, lease_until = ${lease}
    WHERE id IN (
      SELECT id FROM mail_outbox
      WHERE (status = 'queued' AND next_attempt_at <= ${now})
         OR (status = 'sending' AND lease_until < ${now} AND attempts < ${options.maxAttempts})
      ORDER BY next_attempt_at
      LIMIT ${options.limit}
      ${lockRows}
    )
    RETURNING *`;
  if (!rawSqliteOf(db)) return (await claim.execute(db)).rows.map(toRow);
  // Kysely gives one connection at a time, so BEGIN…COMMIT on it is this claim's alone.
  return db.connection().execute(async (conn) => {
    await sql`BEGIN IMMEDIATE`.execute(conn);
    try {
      const rows = (await claim.execute(conn)).rows.map(toRow);
      await sql`COMMIT`.execute(conn);
      return rows;
    } catch (err) {
      await sql`ROLLBACK`.execute(conn).catch(() => undefined);
      throw err;
    }
  });
}

/** Rows left `sending` by a dead sender after their last allowed attempt: failed, with the reason. */
export async function failExhaustedLeases(db: Executor, now: Date, maxAttempts: number): Promise<number> {
  const result = await db
    .updateTable('mail_outbox')
    .set({ status: 'failed', lease_until: null, last_error: sql<string>`coalesce(last_error, ${'the sender stopped while sending (lease expired)'})` })
    .where('status', '=', 'sending')
    .where('lease_until', '<', now.toISOString())
    .where('attempts', '>=', maxAttempts)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Extends the lease of a claimed row before sending it late in a batch; false when the row is no
 * longer this claim's (its lease ran out and another worker took it: that attempt counted one more).
 */
export async function renewLease(db: Executor, row: Pick<OutboxRow, 'id' | 'attempts'>, until: Date): Promise<boolean> {
  const result = await db
    .updateTable('mail_outbox')
    .set({ lease_until: until.toISOString() })
    .where('id', '=', row.id)
    .where('status', '=', 'sending')
    .where('attempts', '=', row.attempts)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function markSent(db: Executor, id: string, now: Date): Promise<void> {
  await db
    .updateTable('mail_outbox')
    .set({ status: 'sent', sent_at: now.toISOString(), lease_until: null, last_error: null })
    .where('id', '=', id)
    .where('status', '=', 'sending')
    .execute();
}

/** A temporary failure: queued again for `retryAt`, the error kept. */
export async function markRetry(db: Executor, id: string, retryAt: Date, error: string): Promise<void> {
  await db
    .updateTable('mail_outbox')
    .set({ status: 'queued', next_attempt_at: retryAt.toISOString(), lease_until: null, last_error: error })
    .where('id', '=', id)
    .where('status', '=', 'sending')
    .execute();
}

/** Given up: a permanent failure, or the last attempt failed. */
export async function markFailed(db: Executor, id: string, error: string): Promise<void> {
  await db
    .updateTable('mail_outbox')
    .set({ status: 'failed', lease_until: null, last_error: error })
    .where('id', '=', id)
    .where('status', '=', 'sending')
    .execute();
}

/** Claimed rows this worker will not send after all (it is stopping): queued again, the attempt not counted. */
export async function releaseClaimed(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('mail_outbox')
    .set({ status: 'queued', lease_until: null, attempts: sql<number>`attempts - 1` })
    .where('id', 'in', ids)
    .where('status', '=', 'sending')
    .execute();
}

export interface OutboxRecord {
  id: string;
  messageId: string;
  kind: string;
  to: string;
  status: 'queued' | 'sending' | 'sent' | 'failed';
  attempts: number;
  nextAttemptAt: string;
  lastError: string | null;
  sentAt: string | null;
}

/** One row as stored, or undefined (tests, and later the admin's outbox view). */
export async function findOutboxMessage(db: Executor, id: string): Promise<OutboxRecord | undefined> {
  const r = await db.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirst();
  if (!r) return undefined;
  return {
    id: r.id,
    messageId: r.message_id,
    kind: r.kind,
    to: r.to_address,
    status: r.status,
    attempts: Number(r.attempts),
    nextAttemptAt: toIsoTimestamp(r.next_attempt_at),
    lastError: r.last_error,
    sentAt: r.sent_at === null ? null : toIsoTimestamp(r.sent_at),
  };
}
