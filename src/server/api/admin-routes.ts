import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { HttpError } from '../http/errors.js';
import { createApiKey, listApiKeys, revokeApiKey } from './keys.js';
import {
  ADMIN_API_KEYS_PATH,
  apiKeyListSchema,
  apiKeyParamsSchema,
  apiKeySummarySchema,
  createApiKeyRequestSchema,
  createdApiKeySchema,
} from '../../shared/admin/api-keys-api.js';

/**
 * The admin's API keys (contract: src/shared/admin/api-keys-api.ts): list, create (the key shown
 * once), revoke. Owner-only: every route declares `role: 'owner'` (issue 32 point 4; the role sweep,
 * tests/server/auth/roles-sweep.test.ts, holds them to it).
 */
export async function adminApiKeyRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { db } = app.database;
  app.guardAdminScope();
  const by = (request: Parameters<typeof app.adminOf>[0]) => {
    const admin = app.adminOf(request);
    return { userId: admin.userId, email: admin.email, ip: request.ip };
  };

  app.get(ADMIN_API_KEYS_PATH, { config: { role: 'owner' }, schema: { response: { 200: apiKeyListSchema } } }, async () => ({ keys: await listApiKeys(db) }));

  app.post(ADMIN_API_KEYS_PATH, { config: { role: 'owner' }, schema: { body: createApiKeyRequestSchema, response: { 201: createdApiKeySchema } } }, async (request, reply) => {
    const { name, scopes, expiresInDays, rateLimit } = request.body;
    const created = await createApiKey(db, { name, scopes, expiresInDays, rateLimit: rateLimit ?? app.config.apiKeyRateLimit }, by(request));
    return reply.status(201).send(created);
  });

  app.post(`${ADMIN_API_KEYS_PATH}/:id/revoke`, { config: { role: 'owner' }, schema: { params: apiKeyParamsSchema, response: { 200: apiKeySummarySchema } } }, async (request) => {
    const revoked = await revokeApiKey(db, request.params.id.toLowerCase(), by(request));
    if (!revoked) throw new HttpError(404, 'not_found', 'No API key has this id.');
    return revoked;
  });
}
