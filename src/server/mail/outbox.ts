import { randomUUID } from 'node:crypto';
import { sql, type Insertable, type Kysely, type Selectable, type UpdateObject } from 'kysely';
import { isPostgres, parseJsonObject, rawSqliteOf, scrubDeletedRows, toIsoTimestamp } from '../db/database.js';
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

/**
 * A message rendered when it is sent (docs/decisions/008): the outbox stores the template's name
 * and `data` (JSON); the renderer registered under that name (app.mail.registerTemplate) makes the
 * subject, text, HTML and headers at send time, or says why the message must not be sent at all.
 * `subject` is stored at enqueue for the outbox view.
 */
export interface TemplatedMessage {
  kind: string;
  to: string;
  subject: string;
  template: string;
  data: Record<string, unknown>;
}

/** What a template renders to at send time. */
export interface RenderedMail {
  subject: string;
  text: string;
  html: string | null;
  headers: Record<string, string>;
}

/**
 * Renders a templated message when the worker sends it; `{ skip: reason }` when it must not be sent
 * any more (the person unsubscribed or was erased): the row is marked failed with that reason,
 * without contacting the SMTP server.
 */
export type TemplateRenderer = (data: Record<string, unknown>, message: { messageId: string; to: string }) => Promise<RenderedMail | { skip: string }>;

/** A message the worker is about to send, as a send recorder sees it (no address, no body). */
export interface SendingMessage {
  messageId: string;
  kind: string;
  /** The template's name and data of a templated message; null for a message stored with its body. */
  template: string | null;
  data: Record<string, unknown> | null;
}

/**
 * Records each message sent (the records room: which template version it was): called before the
 * send, outside any transaction; what it resolves to runs in the transaction that marks the row
 * sent. A recorder that throws holds the message back (retried later): nothing is sent unrecorded.
 */
export type SendRecorder = (message: SendingMessage) => Promise<((trx: Kysely<Database>, sentAt: Date) => Promise<void>) | null>;

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
  /** The claim's lease token: only the claim holding it may renew the lease or record the outcome. */
  leaseToken: string;
  /** A templated message's template name and data (rendered by the worker), or null. */
  template: string | null;
  templateData: Record<string, unknown> | null;
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

/** Wakes this process's worker (after an enqueue, or an admin's retry). */
export function notifyEnqueued(): void {
  for (const listener of enqueueListeners) listener();
}

export function isTemplatedMessage(message: OutboxMessage | TemplatedMessage): message is TemplatedMessage {
  return 'template' in message;
}

/** The row of a new message; a templated one has no body yet (rendered at send time). */
function newRow(message: OutboxMessage | TemplatedMessage, messageIdHost: string, now: string): Insertable<MailOutboxTable> {
  const common = {
    id: randomUUID(),
    message_id: createMessageId(messageIdHost),
    kind: message.kind,
    to_address: message.to,
    subject: message.subject,
    next_attempt_at: now,
    created_at: now,
  };
  if (isTemplatedMessage(message)) {
    return { ...common, text_body: '', html_body: null, template: message.template, template_data: JSON.stringify(message.data) };
  }
  return {
    ...common,
    text_body: message.text,
    html_body: message.html ?? null,
    headers: JSON.stringify(message.headers ?? {}),
    template: null,
    template_data: null,
  };
}

/**
 * Writes one message to the outbox, with `db` or the caller's transaction (so the message exists
 * exactly when the change that causes it does). Resolves to the row's id and Message-ID.
 */
export async function enqueueMail(db: Executor, message: OutboxMessage | TemplatedMessage, options: EnqueueOptions): Promise<{ id: string; messageId: string }> {
  const row = newRow(message, options.messageIdHost, (options.now ?? new Date()).toISOString());
  await db.insertInto('mail_outbox').values(row).execute();
  // Inside a transaction the row is not visible yet; the worker then finds it on its next poll.
  notifyEnqueued();
  return { id: row.id, messageId: row.message_id };
}

/** Messages per INSERT of enqueueManyMail (each statement carries them as one JSON parameter). */
export const ENQUEUE_CHUNK_SIZE = 5000;

/**
 * Writes many templated messages (launch invites) with `db` or the caller's transaction; resolves
 * to how many were written. Each chunk is one `INSERT … SELECT` over a JSON array passed as a
 * single parameter and unpacked by the database (json_each / json_array_elements): multi-row
 * VALUES lists (10 parameters a row) were measured 20–40 % slower on both databases, mostly
 * building, compiling and preparing statements of 20,000 parameters.
 */
export async function enqueueManyMail(db: Executor, messages: readonly TemplatedMessage[], options: EnqueueOptions): Promise<number> {
  const now = (options.now ?? new Date()).toISOString();
  const pg = isPostgres(db);
  for (let i = 0; i < messages.length; i += ENQUEUE_CHUNK_SIZE) {
    const rows = messages
      .slice(i, i + ENQUEUE_CHUNK_SIZE)
      .map((m) => [randomUUID(), createMessageId(options.messageIdHost), m.kind, m.to, m.subject, m.template, JSON.stringify(m.data)]);
    const json = JSON.stringify(rows);
    // html_body, headers, status and attempts keep their defaults.
    const insert = sql`INSERT INTO mail_outbox (id, message_id, kind, to_address, subject, text_body, template, template_data, next_attempt_at, created_at)`;
    await (pg
      ? sql`${insert} SELECT (r->>0)::uuid, r->>1, r->>2, r->>3, r->>4, '', r->>5, r->>6, ${now}::timestamptz, ${now}::timestamptz
            FROM json_array_elements(${json}::json) AS r`
      : sql`${insert} SELECT value->>0, value->>1, value->>2, value->>3, value->>4, '', value->>5, value->>6, ${now}, ${now}
            FROM json_each(${json})`
    ).execute(db);
  }
  if (messages.length > 0) notifyEnqueued();
  return messages.length;
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
    leaseToken: r.lease_token ?? '',
    template: r.template,
    templateData: r.template === null ? null : parseJsonObject(r.template_data ?? '{}'),
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
  // A new token per claim: a sender whose lease ran out (the row claimed again since) no longer holds it.
  const token = randomUUID();
  const lockRows = isPostgres(db) ? sql`FOR UPDATE SKIP LOCKED` : sql``;
  const claim = sql<Selectable<MailOutboxTable>>`
    UPDATE mail_outbox SET status = 'sending', attempts = attempts + 1, lease_until = ${lease}, lease_token = ${token}
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
    .set({ status: 'failed', lease_until: null, lease_token: null, last_error: sql<string>`coalesce(last_error, ${'the sender stopped while sending (lease expired)'})` })
    .where('status', '=', 'sending')
    .where('lease_until', '<', now.toISOString())
    .where('attempts', '>=', maxAttempts)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The claim a worker holds on a row: the row and its claim's lease token. */
export type Claim = Pick<OutboxRow, 'id' | 'leaseToken'>;

/**
 * Extends the lease of a claimed row before sending it late in a batch; false when the row is no
 * longer this claim's (its lease ran out and another worker took it: that attempt counted one more).
 */
export async function renewLease(db: Executor, row: Claim, until: Date): Promise<boolean> {
  const result = await db
    .updateTable('mail_outbox')
    .set({ lease_until: until.toISOString() })
    .where('id', '=', row.id)
    .where('status', '=', 'sending')
    .where('lease_token', '=', row.leaseToken)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Records a claim's outcome, only while the claim still holds the row's lease: a sender that
 * outlived its lease (another worker claimed the row since) must not overwrite what the lease holder
 * does or did. False when the outcome was discarded for that reason.
 */
async function settle(db: Executor, row: Claim, outcome: UpdateObject<Database, 'mail_outbox'>): Promise<boolean> {
  const result = await db
    .updateTable('mail_outbox')
    .set({ ...outcome, lease_until: null, lease_token: null })
    .where('id', '=', row.id)
    .where('status', '=', 'sending')
    .where('lease_token', '=', row.leaseToken)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Sent. False when this claim had lost the lease (the outcome is discarded). */
export function markSent(db: Executor, row: Claim, now: Date): Promise<boolean> {
  return settle(db, row, { status: 'sent', sent_at: now.toISOString(), last_error: null });
}

/** A temporary failure: queued again for `retryAt`, the error kept. False when this claim had lost the lease. */
export function markRetry(db: Executor, row: Claim, retryAt: Date, error: string): Promise<boolean> {
  return settle(db, row, { status: 'queued', next_attempt_at: retryAt.toISOString(), last_error: error });
}

/** Given up: a permanent failure, or the last attempt failed. False when this claim had lost the lease. */
export function markFailed(db: Executor, row: Claim, error: string): Promise<boolean> {
  return settle(db, row, { status: 'failed', last_error: error });
}

/** Claimed rows this worker will not send after all (it is stopping): queued again, the attempt not counted. */
export async function releaseClaimed(db: Executor, rows: readonly Claim[]): Promise<void> {
  for (const row of rows) await settle(db, row, { status: 'queued', attempts: sql<number>`attempts - 1` });
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

const DAY_MS = 24 * 60 * 60 * 1000;
/** Rows per retention DELETE, so SQLite's write lock is never held for long (signups wait for it). */
const PURGE_CHUNK_SIZE = 5000;

/**
 * Deletes sent and failed messages whose last activity (sent_at, else the last attempt's due time)
 * is older than `retentionDays`: the outbox keeps addresses and bodies only as long as the admin
 * may need them. Queued and sending rows are never touched. Returns how many went.
 */
export async function purgeExpiredMail(db: Executor, retentionDays: number, now: Date = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * DAY_MS).toISOString();
  let deleted = 0;
  for (;;) {
    const result = await db
      .deleteFrom('mail_outbox')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('mail_outbox')
          .select('id')
          .where('status', 'in', ['sent', 'failed'])
          // next_attempt_at is never later than sent_at: this part can use the (status, next_attempt_at) index.
          .where('next_attempt_at', '<', cutoff)
          .where((w) => w.or([w('sent_at', 'is', null), w('sent_at', '<', cutoff)]))
          .limit(PURGE_CHUNK_SIZE),
      )
      .executeTakeFirst();
    const n = Number(result.numDeletedRows);
    deleted += n;
    if (n < PURGE_CHUNK_SIZE) return deleted;
  }
}

/**
 * Applies the outbox retention now and then once a day (like the audit log's). The returned
 * function stops the timer; the timer never keeps the process alive on its own.
 */
export async function startMailRetention(
  db: Executor,
  retentionDays: number,
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void },
  now: () => Date = () => new Date(),
): Promise<() => void> {
  const purge = async () => {
    try {
      const deleted = await purgeExpiredMail(db, retentionDays, now());
      if (deleted > 0) {
        log.info({ deleted, retentionDays }, 'mail: expired outbox messages deleted');
        // The rows held addresses and bodies: off the disk too (SQLite's WAL).
        await scrubDeletedRows(db);
      }
    } catch (err) {
      log.error({ err }, 'mail: could not delete expired outbox messages');
    }
  };
  await purge();
  const timer = setInterval(() => void purge(), DAY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
