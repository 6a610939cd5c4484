import { randomBytes, randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable, type UpdateObject } from 'kysely';
import { isPostgres, rawSqliteOf, toIsoTimestamp } from '../db/database.js';
import type { Database, WebhookDeliveriesTable } from '../db/schema.js';
import type { WebhookDeliveryView } from '../../shared/admin/webhooks-api.js';
import { takesEvent } from './endpoints.js';

/**
 * The deliveries' SQL (docs/decisions/057), after the mail outbox's (mail/outbox.ts): events are
 * written in the caller's transaction with one delivery per enabled endpoint that takes them; the
 * worker claims due deliveries with a lease and a token, and only the claim holding the token
 * records the outcome. Timestamps are ISO strings on both dialects.
 */
type Db = Kysely<Database>;

/** An event as a feature raises it (webhooks/index.ts builds them). */
export interface WebhookEvent {
  type: string;
  /** The waitlist entry it is about (its events are deleted when it is erased), or null. */
  entryId: string | null;
  data: Record<string, unknown>;
}

/** The largest body an event may have; ours are far smaller, so a bigger one is a bug, refused loudly. */
export const MAX_PAYLOAD_BYTES = 16 * 1024;
/** Events (and deliveries) per INSERT: each statement carries them as one JSON parameter. */
const CHUNK = 2000;

/** A Standard Webhooks message id: `msg_` and 24 random bytes, base64url. */
export const newEventId = () => `msg_${randomBytes(18).toString('base64url')}`;

/**
 * Writes the events with `db` or the caller's transaction, and a delivery of each to every enabled
 * endpoint taking its type (read in the same transaction). Resolves to the deliveries written;
 * writes nothing when no endpoint takes them.
 */
export async function enqueueEvents(db: Db, events: readonly WebhookEvent[], now: Date): Promise<number> {
  if (events.length === 0) return 0;
  const endpoints = await db.selectFrom('webhook_endpoints').select(['id', 'events']).where('enabled', '=', 1).execute();
  if (endpoints.length === 0) return 0;
  const at = now.toISOString();
  const eventRows: string[][] = [];
  const deliveryRows: string[][] = [];
  for (const event of events) {
    const takers = endpoints.filter((e) => takesEvent(e.events, event.type));
    if (takers.length === 0) continue;
    const id = newEventId();
    const payload = JSON.stringify({ type: event.type, timestamp: at, data: event.data });
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) throw new Error(`webhooks: a ${event.type} event of ${Buffer.byteLength(payload)} bytes exceeds ${MAX_PAYLOAD_BYTES}`);
    eventRows.push([id, event.type, event.entryId ?? '', payload]);
    for (const endpoint of takers) deliveryRows.push([randomUUID(), id, endpoint.id]);
  }
  const pg = isPostgres(db);
  for (let i = 0; i < eventRows.length; i += CHUNK) {
    const json = JSON.stringify(eventRows.slice(i, i + CHUNK));
    const insert = sql`INSERT INTO webhook_events (id, type, entry_id, payload, created_at)`;
    await (pg
      ? sql`${insert} SELECT r->>0, r->>1, nullif(r->>2, ''), r->>3, ${at}::timestamptz FROM json_array_elements(${json}::json) AS r`
      : sql`${insert} SELECT value->>0, value->>1, nullif(value->>2, ''), value->>3, ${at} FROM json_each(${json})`
    ).execute(db);
  }
  for (let i = 0; i < deliveryRows.length; i += CHUNK) {
    const json = JSON.stringify(deliveryRows.slice(i, i + CHUNK));
    const insert = sql`INSERT INTO webhook_deliveries (id, event_id, endpoint_id, next_attempt_at, created_at)`;
    await (pg
      ? sql`${insert} SELECT (r->>0)::uuid, r->>1, (r->>2)::uuid, ${at}::timestamptz, ${at}::timestamptz FROM json_array_elements(${json}::json) AS r`
      : sql`${insert} SELECT value->>0, value->>1, value->>2, ${at}, ${at} FROM json_each(${json})`
    ).execute(db);
  }
  return deliveryRows.length;
}

/** Erasure: every stored event about these entries (their payloads may hold the address) and its deliveries. */
export async function forgetEntries(db: Db, entryIds: readonly string[]): Promise<void> {
  for (let i = 0; i < entryIds.length; i += CHUNK) {
    const ids = entryIds.slice(i, i + CHUNK);
    const events = db.selectFrom('webhook_events').select('id').where('entry_id', 'in', ids);
    await db.deleteFrom('webhook_deliveries').where('event_id', 'in', events).execute();
    await db.deleteFrom('webhook_events').where('entry_id', 'in', ids).execute();
  }
}

/** A claimed delivery, with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  leaseToken: string;
  attempts: number;
  createdAt: string;
  eventId: string;
  payload: string;
  endpointId: string;
}

/**
 * Claims up to `limit` due deliveries: queued ones whose time has come, and sending ones whose
 * sender's lease expired (it died). PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: BEGIN IMMEDIATE.
 */
export async function claimDueDeliveries(db: Db, options: { now: Date; leaseMs: number; limit: number }): Promise<ClaimedDelivery[]> {
  const now = options.now.toISOString();
  const lease = new Date(options.now.getTime() + options.leaseMs).toISOString();
  const token = randomUUID();
  const lockRows = isPostgres(db) ? sql`FOR UPDATE SKIP LOCKED` : sql``;
  const claim = sql<Selectable<WebhookDeliveriesTable>>`
    UPDATE webhook_deliveries SET status = 'sending', attempts = attempts + 1, lease_until = ${lease}, lease_token = ${token}
    WHERE id IN (
      SELECT id FROM webhook_deliveries
      WHERE (status = 'queued' AND next_attempt_at <= ${now}) OR (status = 'sending' AND lease_until < ${now})
      ORDER BY next_attempt_at
      LIMIT ${options.limit}
      ${lockRows}
    )
    RETURNING *`;
  const run = async (executor: Db) => (await claim.execute(executor)).rows;
  let rows: Selectable<WebhookDeliveriesTable>[];
  if (!rawSqliteOf(db)) rows = await run(db);
  else {
    rows = await db.connection().execute(async (conn) => {
      await sql`BEGIN IMMEDIATE`.execute(conn);
      try {
        const claimed = await run(conn);
        await sql`COMMIT`.execute(conn);
        return claimed;
      } catch (err) {
        await sql`ROLLBACK`.execute(conn).catch(() => undefined);
        throw err;
      }
    });
  }
  if (rows.length === 0) return [];
  const events = await db.selectFrom('webhook_events').select(['id', 'payload']).where('id', 'in', [...new Set(rows.map((r) => r.event_id))]).execute();
  const payloads = new Map(events.map((e) => [e.id, e.payload]));
  return rows.map((r) => ({
    id: r.id,
    leaseToken: r.lease_token ?? '',
    attempts: Number(r.attempts),
    createdAt: toIsoTimestamp(r.created_at),
    eventId: r.event_id,
    payload: payloads.get(r.event_id) ?? '',
    endpointId: r.endpoint_id,
  }));
}

export type DeliveryClaim = Pick<ClaimedDelivery, 'id' | 'leaseToken'>;

/** Records a claim's outcome while the claim still holds the lease; false when it no longer does. */
export async function settleDelivery(db: Db, claim: DeliveryClaim, outcome: UpdateObject<Database, 'webhook_deliveries'>): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ ...outcome, lease_until: null, lease_token: null })
    .where('id', '=', claim.id)
    .where('status', '=', 'sending')
    .where('lease_token', '=', claim.leaseToken)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Claimed deliveries this worker will not send after all (it is stopping): queued again, the attempt not counted. */
export async function releaseDeliveries(db: Db, claims: readonly DeliveryClaim[]): Promise<void> {
  for (const claim of claims) await settleDelivery(db, claim, { status: 'queued', attempts: sql<number>`attempts - 1` });
}

/** The endpoint's most recent deliveries, newest first, with their event's type. */
export async function listDeliveries(db: Db, endpointId: string, limit: number): Promise<WebhookDeliveryView[]> {
  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select(['d.id', 'd.event_id', 'e.type', 'd.status', 'd.attempts', 'd.response_status', 'd.last_error', 'd.created_at', 'd.next_attempt_at', 'd.finished_at'])
    .where('d.endpoint_id', '=', endpointId.toLowerCase())
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(toDeliveryView);
}

function toDeliveryView(r: {
  id: string;
  event_id: string;
  type: string;
  status: WebhookDeliveryView['status'];
  attempts: number;
  response_status: number | null;
  last_error: string | null;
  created_at: Date | string;
  next_attempt_at: Date | string;
  finished_at: Date | string | null;
}): WebhookDeliveryView {
  return {
    id: r.id,
    eventId: r.event_id,
    eventType: r.type,
    status: r.status,
    attempts: Number(r.attempts),
    responseStatus: r.response_status === null ? null : Number(r.response_status),
    lastError: r.last_error,
    createdAt: toIsoTimestamp(r.created_at),
    nextAttemptAt: toIsoTimestamp(r.next_attempt_at),
    finishedAt: r.finished_at === null ? null : toIsoTimestamp(r.finished_at),
  };
}

export async function findDelivery(db: Db, id: string): Promise<WebhookDeliveryView | undefined> {
  const r = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select(['d.id', 'd.event_id', 'e.type', 'd.status', 'd.attempts', 'd.response_status', 'd.last_error', 'd.created_at', 'd.next_attempt_at', 'd.finished_at', 'd.endpoint_id'])
    .where('d.id', '=', id.toLowerCase())
    .executeTakeFirst();
  return r && toDeliveryView(r);
}

/**
 * Replay: the delivery's event queued again to the same endpoint now, as a new delivery (the
 * history stays; the `webhook-id` is the event's, as Standard Webhooks' receivers expect). Resolves
 * to the new delivery, `disabled` when the endpoint is off, or undefined when there is no such delivery.
 */
export async function replayDelivery(db: Db, id: string, now: Date): Promise<WebhookDeliveryView | 'disabled' | undefined> {
  const source = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as p', 'p.id', 'd.endpoint_id')
    .select(['d.event_id', 'd.endpoint_id', 'p.enabled'])
    .where('d.id', '=', id.toLowerCase())
    .executeTakeFirst();
  if (!source) return undefined;
  if (Number(source.enabled) !== 1) return 'disabled';
  const deliveryId = randomUUID();
  const at = now.toISOString();
  await db.insertInto('webhook_deliveries').values({ id: deliveryId, event_id: source.event_id, endpoint_id: source.endpoint_id, next_attempt_at: at, created_at: at }).execute();
  return findDelivery(db, deliveryId);
}

const DAY_MS = 86_400_000;

/** Rows per retention DELETE, so SQLite's write lock is never held for long (signups wait for it). */
const PURGE_CHUNK = 5000;

/** Deletes finished deliveries older than `retentionDays`, then the events no delivery needs any more; resolves to the deliveries deleted. */
export async function purgeExpiredDeliveries(db: Db, retentionDays: number, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * DAY_MS).toISOString();
  let deleted = 0;
  for (;;) {
    const result = await db
      .deleteFrom('webhook_deliveries')
      .where('id', 'in', (eb) => eb.selectFrom('webhook_deliveries').select('id').where('status', 'in', ['delivered', 'failed']).where('created_at', '<', cutoff).limit(PURGE_CHUNK))
      .executeTakeFirst();
    const n = Number(result.numDeletedRows);
    deleted += n;
    if (n < PURGE_CHUNK) break;
  }
  for (;;) {
    const result = await db
      .deleteFrom('webhook_events')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('webhook_events')
          .select('id')
          .where('created_at', '<', cutoff)
          .where((w) => w.not(w.exists(w.selectFrom('webhook_deliveries').select('webhook_deliveries.id').whereRef('webhook_deliveries.event_id', '=', 'webhook_events.id'))))
          .limit(PURGE_CHUNK),
      )
      .executeTakeFirst();
    if (Number(result.numDeletedRows) < PURGE_CHUNK) return deleted;
  }
}

/** Deliveries left `sending` by a dead sender after the retry window closed: failed, not claimed again. */
export async function failAbandonedDeliveries(db: Db, now: Date, retryWindowMs: number): Promise<number> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', lease_until: null, lease_token: null, finished_at: now.toISOString(), last_error: sql<string>`coalesce(last_error, ${'the sender stopped while sending (lease expired)'})` })
    .where('status', '=', 'sending')
    .where('lease_until', '<', now.toISOString())
    .where('created_at', '<', new Date(now.getTime() - retryWindowMs).toISOString())
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
