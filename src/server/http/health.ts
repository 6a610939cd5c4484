import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod/mini';

/** `GET /healthz`: 200 when the database answers, 503 when it does not. Never cached. */
export const HEALTH_PATH = '/healthz';

export const healthSchema = z.object({
  status: z.enum(['ok', 'unavailable']),
  database: z.enum(['sqlite', 'postgres']),
});

export async function healthRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  app.get(HEALTH_PATH, { schema: { response: { 200: healthSchema, 503: healthSchema } } }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    try {
      await sql`select 1`.execute(app.database.db);
      return { status: 'ok' as const, database: app.database.dialect };
    } catch (err) {
      request.log.error({ err }, 'health check: database unreachable');
      return reply.status(503).send({ status: 'unavailable', database: app.database.dialect });
    }
  });
}
