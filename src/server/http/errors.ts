import type { FastifyError, FastifyInstance } from 'fastify';

/** An error whose message is safe to show the client, with a stable machine-readable code. */
export class HttpError extends Error {
  constructor(
    public readonly statusCode: number,
    public readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

const frameworkCodes: Record<string, { code: string; message: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'payload_too_large', message: 'The request body is too large.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'unsupported_media_type', message: 'Send the request as JSON or as a form.' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'bad_request', message: 'The request body is empty.' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'bad_request', message: 'The request body is not valid JSON.' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'bad_request', message: 'The Content-Length header does not match the body.' },
};

/**
 * The one error handler: 4xx keep a clear message and a stable code; anything else is logged with
 * the request context and answered with a masked 500, never a stack trace.
 */
export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof HttpError) {
      return reply.status(err.statusCode).send({ error: { code: err.code, message: err.message } });
    }
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const known = err.code ? frameworkCodes[err.code] : undefined;
      if (err.validation) {
        return reply.status(400).send({ error: { code: 'bad_request', message: `Invalid request: ${err.message}` } });
      }
      if (status === 429) {
        return reply.status(429).send({ error: { code: 'rate_limited', message: err.message } });
      }
      if (known) return reply.status(status).send({ error: known });
      if (err instanceof SyntaxError) {
        return reply.status(400).send({ error: frameworkCodes.FST_ERR_CTP_INVALID_JSON_BODY });
      }
      return reply.status(status).send({ error: { code: 'bad_request', message: err.message } });
    }
    request.log.error({ err }, 'request failed');
    return reply.status(500).send({ error: { code: 'internal_error', message: 'Something went wrong on our side. Please try again later.' } });
  });
}
