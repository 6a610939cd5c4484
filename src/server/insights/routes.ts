import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod/mini';
import { checkQueryFilter, queryFilter } from '../admin/index.js';
import { waitlistInsights } from './panel.js';
import { ADMIN_INSIGHTS_PATH, waitlistInsightsSchema, waitlistPageQuerySchema } from '../../shared/admin/waitlist-api.js';

/** The filter part of a query string: the page query's fields without paging. */
const filterQuerySchema = z.omit(waitlistPageQuerySchema, { limit: true, cursor: true });

/** `GET ADMIN_INSIGHTS_PATH`: the insight panel of the list under the same filter (panel.ts), admin-only like the list. */
export async function adminInsightsRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  app.guardAdminScope();
  app.get(
    ADMIN_INSIGHTS_PATH,
    { config: { role: 'viewer' }, preValidation: checkQueryFilter, schema: { querystring: filterQuerySchema, response: { 200: waitlistInsightsSchema } } },
    async (request) => waitlistInsights(app.database.db, queryFilter(request.query), { confirmation: app.config.consent.confirmation }),
  );
}
