import { z } from 'zod/mini';
import {
  ADMIN_WEBHOOKS_PATH,
  adminReplayPath,
  adminWebhookPath,
  createdWebhookSchema,
  webhookDeliveryListSchema,
  webhookDeliverySchema,
  webhookEndpointSchema,
  webhookListSchema,
  type CreatedWebhook,
  type CreateWebhookRequest,
  type WebhookDeliveryView,
  type WebhookEndpointView,
  type WebhookList,
} from '../../../shared/admin/webhooks-api.js';
import { postJson, readJson, request } from '../common/admin-api.js';

/** The webhooks area's calls (contract: src/shared/admin/webhooks-api.ts). */
export async function fetchWebhooks(signal?: AbortSignal): Promise<WebhookList> {
  return readJson(await request(ADMIN_WEBHOOKS_PATH, { signal }), webhookListSchema);
}

export async function createWebhook(body: CreateWebhookRequest): Promise<CreatedWebhook> {
  return readJson(await postJson(ADMIN_WEBHOOKS_PATH, body), createdWebhookSchema);
}

export async function setWebhookEnabled(id: string, enabled: boolean): Promise<WebhookEndpointView> {
  return readJson(await postJson(adminWebhookPath(id, enabled ? 'enable' : 'disable'), {}), webhookEndpointSchema);
}

export async function rotateWebhook(id: string): Promise<CreatedWebhook> {
  return readJson(await postJson(adminWebhookPath(id, 'rotate'), {}), createdWebhookSchema);
}

export async function removeWebhook(id: string): Promise<void> {
  await readJson(await postJson(adminWebhookPath(id, 'remove'), {}), z.object({ removed: z.literal(true) }));
}

export async function fetchDeliveries(id: string, signal?: AbortSignal): Promise<WebhookDeliveryView[]> {
  return (await readJson(await request(adminWebhookPath(id, 'deliveries'), { signal }), webhookDeliveryListSchema)).deliveries;
}

export async function replayDelivery(id: string): Promise<WebhookDeliveryView> {
  return readJson(await postJson(adminReplayPath(id), {}), webhookDeliverySchema);
}
