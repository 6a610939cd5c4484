import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', {
    schema: {
      response: {
        200: { type: 'object', properties: { status: { type: 'string' }, database: { type: 'string' } } },
        503: { type: 'object', properties: { status: { type: 'string' }, database: { type: 'string' } } },
      },
    },
  }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    try {
      await sql`select 1`.execute(app.database.db);
      return { status: 'ok', database: app.database.dialect };
    } catch (err) {
      request.log.error({ err }, 'health check: database unreachable');
      return reply.status(503).send({ status: 'unavailable', database: app.database.dialect });
    }
  });
}
