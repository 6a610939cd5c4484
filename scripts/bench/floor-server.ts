/**
 * The floor of the signup benchmark: what `POST /api/waitlist` costs with nothing but Fastify.
 * It parses the JSON, validates the address with a JSON schema (Fastify's Ajv, `format: email`),
 * serializes the answer from its schema and answers 201: no database, no rate limit, no
 * geolocation, no request log. X-Forwarded-For is ignored. The product is measured against it.
 *
 *   PORT=4500 node floor-server.js     (signup.ts runs it as plain JavaScript, compiled on the fly)
 */
import Fastify from 'fastify';

const port = Number(process.env.PORT ?? 4500);
const app = Fastify({ logger: false, bodyLimit: 8 * 1024 });

app.post(
  '/api/waitlist',
  {
    schema: {
      body: {
        type: 'object',
        required: ['email'],
        properties: { email: { type: 'string', format: 'email', maxLength: 254 } },
      },
      response: { 201: { type: 'object', properties: { status: { type: 'string' } } } },
    },
  },
  async (_request, reply) => reply.status(201).send({ status: 'joined' }),
);
app.get('/healthz', async () => ({ status: 'ok' }));

process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
await app.listen({ host: '127.0.0.1', port });
