import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { HttpError } from '../http/errors.js';
import {
  ADMIN_WEBHOOKS_PATH,
  createdWebhookSchema,
  createWebhookSchema,
  removedWebhookSchema,
  WEBHOOK_DELIVERIES_SHOWN,
  WEBHOOK_EVENT_TYPES,
  webhookDeliveryListSchema,
  webhookDeliverySchema,
  webhookEndpointSchema,
  webhookIdParamsSchema,
  webhookListSchema,
} from '../../shared/admin/webhooks-api.js';
import { findEndpoint, listEndpoints, toEndpointView } from './endpoints.js';
import { createWebhookEndpoint, removeWebhookEndpoint, replayWebhookDelivery, rotateWebhookSecret, setWebhookEnabled, type ManageDeps, type WebhookActor } from './manage.js';
import { listDeliveries } from './queue.js';

/**
 * The admin webhooks API (contract: src/shared/admin/webhooks-api.ts). Owner-only: every route
 * declares `role: 'owner'` (guardAdminScope; the role sweep, tests/server/auth/roles-sweep.test.ts,
 * holds them to it).
 */
export async function adminWebhookRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { db } = app.database;
  const deps: ManageDeps = { db, box: app.secretBox, config: app.config.webhooks };
  const actorOf = (request: FastifyRequest): WebhookActor => {
    const admin = app.adminOf(request);
    return { email: admin.email, id: admin.userId, ip: request.ip, by: 'admin' };
  };
  /** After a change: this process's view of the subscriptions is read again before the answer. */
  const changed = async <T>(result: T): Promise<T> => {
    await app.webhooks.refresh();
    return result;
  };
  const idParams = { params: webhookIdParamsSchema };

  app.guardAdminScope();

  app.get(ADMIN_WEBHOOKS_PATH, { config: { role: 'owner' }, schema: { response: { 200: webhookListSchema } } }, async () => ({
    endpoints: (await listEndpoints(db)).map((row) => toEndpointView(row)),
    eventTypes: [...WEBHOOK_EVENT_TYPES],
    maxEndpoints: app.config.webhooks.maxEndpoints,
  }));

  app.post(ADMIN_WEBHOOKS_PATH, { config: { role: 'owner' }, schema: { body: createWebhookSchema, response: { 201: createdWebhookSchema } } }, async (request, reply) => {
    const created = await createWebhookEndpoint(deps, actorOf(request), request.body);
    request.log.info({ endpoint: created.endpoint.id, actor: app.adminOf(request).userId }, 'webhooks: endpoint created');
    return reply.code(201).send(await changed(created));
  });

  for (const enabled of [true, false]) {
    app.post(`${ADMIN_WEBHOOKS_PATH}/:id/${enabled ? 'enable' : 'disable'}`, { config: { role: 'owner' }, schema: { ...idParams, response: { 200: webhookEndpointSchema } } }, async (request) =>
      changed(await setWebhookEnabled(deps, actorOf(request), request.params.id, enabled)),
    );
  }

  app.post(`${ADMIN_WEBHOOKS_PATH}/:id/rotate`, { config: { role: 'owner' }, schema: { ...idParams, response: { 200: createdWebhookSchema } } }, async (request) =>
    rotateWebhookSecret(deps, actorOf(request), request.params.id),
  );

  app.post(`${ADMIN_WEBHOOKS_PATH}/:id/remove`, { config: { role: 'owner' }, schema: { ...idParams, response: { 200: removedWebhookSchema } } }, async (request) => {
    await removeWebhookEndpoint(deps, actorOf(request), request.params.id);
    return changed({ removed: true as const });
  });

  app.get(`${ADMIN_WEBHOOKS_PATH}/:id/deliveries`, { config: { role: 'owner' }, schema: { ...idParams, response: { 200: webhookDeliveryListSchema } } }, async (request) => {
    if (!(await findEndpoint(db, request.params.id))) throw new HttpError(404, 'not_found', 'There is no such webhook endpoint.');
    return { deliveries: await listDeliveries(db, request.params.id, WEBHOOK_DELIVERIES_SHOWN) };
  });

  app.post(`${ADMIN_WEBHOOKS_PATH}/deliveries/:id/replay`, { config: { role: 'owner' }, schema: { ...idParams, response: { 200: webhookDeliverySchema } } }, async (request) => {
    const replayed = await replayWebhookDelivery(deps, actorOf(request), request.params.id);
    app.webhooks.worker.wake();
    return replayed;
  });
}
