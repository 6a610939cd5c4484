import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { SecretBox } from '../crypto/secret-box.js';
import { toIsoTimestamp } from '../db/database.js';
import type { Database, WebhookEndpointsTable } from '../db/schema.js';
import type { WebhookEndpointView } from '../../shared/admin/webhooks-api.js';

/**
 * The webhook endpoints' SQL and secrets. Each endpoint has its own secret (`whsec_` + 32 random
 * bytes in base64, as the Standard Webhooks libraries take it), shown once and stored only sealed
 * with the secret box under the context `webhook:<id>`, so a sealed secret copied to another row
 * does not open. A rotation keeps the replaced secret signing beside the new one for the overlap.
 */
type Db = Kysely<Database>;
type Box = Pick<SecretBox, 'seal' | 'open'>;

export const secretContext = (endpointId: string) => `webhook:${endpointId}`;

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** `*` for every event, else the types between commas (matched with a LIKE on the delimited text). */
export function encodeEvents(events: readonly string[] | undefined): string {
  const unique = [...new Set(events ?? [])].sort();
  return unique.length === 0 ? '*' : `,${unique.join(',')},`;
}

export function decodeEvents(stored: string): string[] {
  return stored === '*' ? [] : stored.split(',').filter((t) => t !== '');
}

export function takesEvent(stored: string, type: string): boolean {
  return stored === '*' || stored.includes(`,${type},`);
}

export function toEndpointView(row: Selectable<WebhookEndpointsTable>, now = Date.now()): WebhookEndpointView {
  const until = row.previous_secret_until === null ? null : toIsoTimestamp(row.previous_secret_until);
  return {
    id: row.id,
    url: row.url,
    events: decodeEvents(row.events),
    enabled: Number(row.enabled) === 1,
    disabledReason: row.disabled_reason,
    previousSecretUntil: until !== null && Date.parse(until) > now ? until : null,
    createdAt: toIsoTimestamp(row.created_at),
  };
}

export async function countEndpoints(db: Db): Promise<number> {
  const row = await db.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function listEndpoints(db: Db): Promise<Selectable<WebhookEndpointsTable>[]> {
  return db.selectFrom('webhook_endpoints').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function findEndpoint(db: Db, id: string): Promise<Selectable<WebhookEndpointsTable> | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id.toLowerCase()).executeTakeFirst();
}

/** Inserts an endpoint (enabled) with a new secret; resolves to the row and the secret in clear (shown once). */
export async function insertEndpoint(db: Db, box: Box, input: { url: string; events?: readonly string[] | undefined }, now: Date): Promise<{ row: Selectable<WebhookEndpointsTable>; secret: string }> {
  const id = randomUUID();
  const secret = newWebhookSecret();
  const at = now.toISOString();
  const row = {
    id,
    url: input.url,
    events: encodeEvents(input.events),
    enabled: 1,
    disabled_reason: null,
    secret: box.seal(secret, secretContext(id)),
    previous_secret: null,
    previous_secret_until: null,
    created_at: at,
    updated_at: at,
  };
  await db.insertInto('webhook_endpoints').values(row).execute();
  return { row, secret };
}

/**
 * Enables or disables an endpoint (with the reason). Disabling ends its waiting deliveries as failed
 * (an admin may replay them): nothing is sent to it any more. Resolves to the row, or undefined.
 */
export async function setEndpointEnabled(db: Db, id: string, enabled: boolean, reason: string | null, now: Date): Promise<Selectable<WebhookEndpointsTable> | undefined> {
  const row = await db
    .updateTable('webhook_endpoints')
    .set({ enabled: enabled ? 1 : 0, disabled_reason: enabled ? null : reason, updated_at: now.toISOString() })
    .where('id', '=', id.toLowerCase())
    .returningAll()
    .executeTakeFirst();
  if (row && !enabled) {
    await db
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', last_error: `Not sent: ${reason ?? 'the endpoint was disabled'}`, finished_at: now.toISOString(), lease_until: null, lease_token: null })
      .where('endpoint_id', '=', row.id)
      .where('status', '=', 'queued')
      .execute();
  }
  return row;
}

/** Deletes an endpoint and its deliveries (events left without deliveries go with the retention). */
export async function deleteEndpoint(db: Db, id: string): Promise<boolean> {
  await db.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id.toLowerCase()).execute();
  const result = await db.deleteFrom('webhook_endpoints').where('id', '=', id.toLowerCase()).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/**
 * A new secret for the endpoint; the current one becomes the previous one and keeps signing (both
 * signatures in `webhook-signature`) until `now + overlapMs`. Resolves to the row and the new
 * secret in clear, or undefined when there is no such endpoint.
 */
export async function rotateEndpointSecret(db: Db, box: Box, id: string, now: Date, overlapMs: number): Promise<{ row: Selectable<WebhookEndpointsTable>; secret: string } | undefined> {
  const current = await findEndpoint(db, id);
  if (!current) return undefined;
  const secret = newWebhookSecret();
  const row = await db
    .updateTable('webhook_endpoints')
    .set({
      secret: box.seal(secret, secretContext(current.id)),
      previous_secret: current.secret,
      previous_secret_until: new Date(now.getTime() + overlapMs).toISOString(),
      updated_at: now.toISOString(),
    })
    .where('id', '=', current.id)
    // Two rotations at once: only one wins, the other finds the secret changed and is reported missing.
    .where('secret', '=', current.secret)
    .returningAll()
    .executeTakeFirst();
  return row && { row, secret };
}

/** The secrets that sign now: the current one, and the previous one while its overlap lasts. */
export function signingSecrets(row: Pick<Selectable<WebhookEndpointsTable>, 'id' | 'secret' | 'previous_secret' | 'previous_secret_until'>, box: Pick<SecretBox, 'open'>, now: Date): string[] {
  const context = secretContext(row.id);
  const secrets = [box.open(row.secret, context)];
  if (row.previous_secret !== null && row.previous_secret_until !== null && Date.parse(toIsoTimestamp(row.previous_secret_until)) > now.getTime()) {
    secrets.push(box.open(row.previous_secret, context));
  }
  return secrets;
}

/**
 * The Standard Webhooks headers of one attempt: `webhook-signature` holds one `v1,<base64 HMAC-SHA256
 * of "id.timestamp.body">` per secret (the key: the secret's base64 after `whsec_`), space-separated.
 * Signed with node:crypto; the tests verify every delivery with the official `standardwebhooks`.
 */
export function signedHeaders(eventId: string, body: string, secrets: readonly string[], at: Date): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signed = `${eventId}.${timestamp}.${body}`;
  const sign = (secret: string) => `v1,${createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64')).update(signed, 'utf8').digest('base64')}`;
  return { 'webhook-id': eventId, 'webhook-timestamp': timestamp, 'webhook-signature': secrets.map(sign).join(' ') };
}

/**
 * `npm run admin -- rotate-secret`: every endpoint's secrets sealed again with `box` (the secret box
 * that seals with the new AUTH_SECRET_KEY and opens with it or the previous one). Each update applies
 * only if the row still holds the value read. Resolves to how many were re-sealed and the contexts
 * of those that open with neither key.
 */
export async function resealEndpointSecrets(db: Db, box: Box): Promise<{ resealed: number; unopenable: string[] }> {
  let resealed = 0;
  const unopenable: string[] = [];
  for (const row of await db.selectFrom('webhook_endpoints').select(['id', 'secret', 'previous_secret']).execute()) {
    for (const column of ['secret', 'previous_secret'] as const) {
      const sealed = row[column];
      if (sealed === null) continue;
      let next: string;
      try {
        next = box.seal(box.open(sealed, secretContext(row.id)), secretContext(row.id));
      } catch {
        unopenable.push(`${secretContext(row.id)} (${column})`);
        continue;
      }
      const result = await db.updateTable('webhook_endpoints').set({ [column]: next }).where('id', '=', row.id).where(column, '=', sealed).executeTakeFirst();
      resealed += Number(result.numUpdatedRows);
    }
  }
  return { resealed, unopenable };
}
