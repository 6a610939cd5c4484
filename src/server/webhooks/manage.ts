import type { Kysely } from 'kysely';
import { recordAudit, type AuditAction } from '../audit/audit-log.js';
import type { WebhooksConfig } from '../config.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Database } from '../db/schema.js';
import { HttpError } from '../http/errors.js';
import type { CreatedWebhook, WebhookDeliveryView, WebhookEndpointView } from '../../shared/admin/webhooks-api.js';
import { countEndpoints, deleteEndpoint, findEndpoint, insertEndpoint, rotateEndpointSecret, setEndpointEnabled, toEndpointView } from './endpoints.js';
import { replayDelivery } from './queue.js';
import { urlProblem } from './safe-http.js';

/**
 * The endpoint changes the admin API and `npm run admin -- webhooks` share: each change and its
 * audit record in one transaction. The audit keeps the endpoint's id and origin only: a URL's path
 * or query can itself be a secret (chat services' incoming-webhook URLs are), and secrets never go there.
 */
type Db = Kysely<Database>;

export interface WebhookActor {
  email: string | null;
  id: string | null;
  ip: string | null;
  by: 'admin' | 'cli';
}

export interface ManageDeps {
  db: Db;
  box: Pick<SecretBox, 'seal' | 'open'>;
  config: Pick<WebhooksConfig, 'allowPrivate' | 'maxEndpoints' | 'secretOverlapMs'>;
  now?: () => Date;
}

const originOf = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
};

const notFound = () => new HttpError(404, 'not_found', 'There is no such webhook endpoint.');

function audit(trx: Db, actor: WebhookActor, action: AuditAction, detail: Record<string, unknown>) {
  return recordAudit(trx, { action, actorEmail: actor.email, actorId: actor.id, ip: actor.ip, detail: { ...detail, by: actor.by } });
}

export async function createWebhookEndpoint(deps: ManageDeps, actor: WebhookActor, input: { url: string; events?: readonly string[] | undefined }): Promise<CreatedWebhook> {
  const url = input.url.trim();
  const problem = urlProblem(url, deps.config.allowPrivate);
  if (problem) throw new HttpError(400, problem.code, problem.message);
  const now = deps.now?.() ?? new Date();
  return deps.db.transaction().execute(async (trx) => {
    if ((await countEndpoints(trx)) >= deps.config.maxEndpoints) {
      throw new HttpError(409, 'too_many_endpoints', `There are ${deps.config.maxEndpoints} endpoints already (WEBHOOK_MAX_ENDPOINTS): remove one first.`);
    }
    const { row, secret } = await insertEndpoint(trx, deps.box, { url, events: input.events }, now);
    await audit(trx, actor, 'webhook_created', { endpoint: row.id, origin: originOf(url), events: input.events?.length ? [...input.events] : 'all' });
    return { endpoint: toEndpointView(row, now.getTime()), secret };
  });
}

export async function setWebhookEnabled(deps: ManageDeps, actor: WebhookActor, id: string, enabled: boolean): Promise<WebhookEndpointView> {
  const now = deps.now?.() ?? new Date();
  return deps.db.transaction().execute(async (trx) => {
    const row = await setEndpointEnabled(trx, id, enabled, enabled ? null : `Disabled by ${actor.by === 'cli' ? 'the command line' : (actor.email ?? 'an admin')}`, now);
    if (!row) throw notFound();
    await audit(trx, actor, enabled ? 'webhook_enabled' : 'webhook_disabled', { endpoint: row.id, origin: originOf(row.url) });
    return toEndpointView(row, now.getTime());
  });
}

export async function removeWebhookEndpoint(deps: ManageDeps, actor: WebhookActor, id: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const row = await findEndpoint(trx, id);
    if (!row || !(await deleteEndpoint(trx, row.id))) throw notFound();
    await audit(trx, actor, 'webhook_removed', { endpoint: row.id, origin: originOf(row.url) });
  });
}

export async function rotateWebhookSecret(deps: ManageDeps, actor: WebhookActor, id: string): Promise<CreatedWebhook> {
  const now = deps.now?.() ?? new Date();
  return deps.db.transaction().execute(async (trx) => {
    const rotated = await rotateEndpointSecret(trx, deps.box, id, now, deps.config.secretOverlapMs);
    if (!rotated) throw notFound();
    await audit(trx, actor, 'webhook_secret_rotated', { endpoint: rotated.row.id, origin: originOf(rotated.row.url), overlap_hours: deps.config.secretOverlapMs / 3_600_000 });
    return { endpoint: toEndpointView(rotated.row, now.getTime()), secret: rotated.secret };
  });
}

export async function replayWebhookDelivery(deps: ManageDeps, actor: WebhookActor, deliveryId: string): Promise<WebhookDeliveryView> {
  const now = deps.now?.() ?? new Date();
  return deps.db.transaction().execute(async (trx) => {
    const replayed = await replayDelivery(trx, deliveryId, now);
    if (replayed === undefined) throw new HttpError(404, 'not_found', 'There is no such delivery.');
    if (replayed === 'disabled') throw new HttpError(409, 'endpoint_disabled', 'The endpoint is disabled: enable it first.');
    await audit(trx, actor, 'webhook_replayed', { delivery: deliveryId.toLowerCase(), replay: replayed.id, event: replayed.eventId });
    return replayed;
  });
}
