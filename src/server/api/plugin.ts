import type { FastifyInstance } from 'fastify';
import { adminApiKeyRoutes } from './admin-routes.js';
import { apiDocsRoutes } from './docs.js';
import { LastUseRecorder } from './keys.js';
import { apiV1Routes, type ApiRoutesOptions } from './routes.js';

/** The API room: /api/v1 (routes.ts), its document and page (docs.ts), and the admin's keys (admin-routes.ts). */
export async function apiRoutes(app: FastifyInstance, options: Pick<ApiRoutesOptions, 'signups' | 'consent'>): Promise<void> {
  const lastUse = new LastUseRecorder(app.database.db, (err) => app.log.error({ err }, 'api: could not record a key\'s last use'));
  // Before the database closes (onClose hooks run last-added first; the database's was added first).
  app.addHook('onClose', async () => lastUse.settle());
  // Each key's requests count where the signups' do: memory on SQLite, else the database or Redis.
  await app.register(apiV1Routes, { ...options, store: app.rateLimits.signups, lastUse });
  await app.register(apiDocsRoutes);
  await app.register(adminApiKeyRoutes);
}
