import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { HttpError } from '../http/errors.js';

export const API_VERSION_HEADER = 'X-Supabase-Api-Version';
export const API_VERSION = '2024-01-01';

/** A GoTrue-format error: `{code, message}` plus optional extra fields (e.g. `weak_password`). */
export class AuthApiError extends Error {
  constructor(
    public readonly statusCode: number,
    public readonly code: string,
    message: string,
    public readonly extra: Record<string, unknown> = {},
    public readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AuthApiError';
  }
}

export function sendAuthError(reply: FastifyReply, err: AuthApiError): FastifyReply {
  reply
    .status(err.statusCode)
    .header(API_VERSION_HEADER, API_VERSION)
    .header('x-sb-error-code', err.code)
    .header('cache-control', 'no-store');
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
  return reply.send({ code: err.code, message: err.message, ...err.extra });
}

/**
 * A body that is not `application/json` (UTF-8): 415. GoTrue has no error code of its own for it (it
 * never looks at Content-Type: apierrors/errorcode.go has none, `hook_payload_invalid_content_type`
 * is about its outgoing hooks) and answers a body it cannot read as JSON `bad_json`, so that is the
 * code here, with the status that says what is wrong.
 */
export function unsupportedMediaType(): AuthApiError {
  return new AuthApiError(415, 'bad_json', 'Content-Type must be application/json');
}

/**
 * The GoTrue answer to a request that fails its schema (src/server/auth/auth-api.ts), given the
 * first problem's message and, for a custom check, its params: 400 `bad_json` naming the problem,
 * unless the schema declared another status and code for it.
 */
export function schemaProblemError(message: string, params?: unknown): AuthApiError {
  const declared = params as { status?: unknown; code?: unknown } | undefined;
  if (typeof declared?.status === 'number' && typeof declared.code === 'string') {
    return new AuthApiError(declared.status, declared.code, message);
  }
  return new AuthApiError(400, 'bad_json', `Could not parse request body as JSON: ${message}`);
}

/**
 * The error handler for the /auth/v1 scope: every error becomes a GoTrue 2024 body, framework
 * errors are mapped to GoTrue codes, and anything unexpected is a masked 500 (logged without body).
 */
export function registerAuthErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof AuthApiError) return sendAuthError(reply, err);
    // The app's own refusals before the route (a cross-site request, http/cross-site.ts), in GoTrue's shape.
    if (err instanceof HttpError && err.statusCode < 500) return sendAuthError(reply, new AuthApiError(err.statusCode, err.code, err.message));
    if (hasZodFastifySchemaValidationErrors(err)) {
      const [first] = err.validation;
      return sendAuthError(reply, schemaProblemError(first?.message ?? '', first?.params.params));
    }
    switch (err.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendAuthError(reply, new AuthApiError(413, 'request_entity_too_large', 'Request body too large'));
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return sendAuthError(reply, new AuthApiError(400, 'bad_json', 'Could not read request body: Content-Length does not match the body'));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendAuthError(reply, unsupportedMediaType());
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return sendAuthError(reply, new AuthApiError(400, 'bad_json', 'Could not parse request body as JSON'));
      default:
        break;
    }
    const status = err.statusCode ?? 500;
    if (err instanceof SyntaxError) {
      return sendAuthError(reply, new AuthApiError(400, 'bad_json', 'Could not parse request body as JSON'));
    }
    if (status >= 400 && status < 500) {
      if (status === 429) return sendAuthError(reply, new AuthApiError(429, 'over_request_rate_limit', 'Request rate limit reached'));
      return sendAuthError(reply, new AuthApiError(status, 'validation_failed', 'The request is invalid'));
    }
    // Log the error only: never the request body (it may hold a password or refresh token).
    request.log.error({ err }, 'auth request failed');
    return sendAuthError(reply, new AuthApiError(500, 'unexpected_failure', 'Unexpected failure, please try again later'));
  });

  app.setNotFoundHandler((_request, reply) => sendAuthError(reply, new AuthApiError(404, 'not_found', 'Not found')));
}
