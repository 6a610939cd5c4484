import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../http/errors.js';
import { hasBody, isJsonContentType } from '../http/cross-site.js';
import { rateLimitAddress } from '../geolocation/ip.js';
import { answerLimit } from '../rate-limit/hook.js';
import { limitKey, type RateLimitStore } from '../rate-limit/index.js';
import { findUsableApiKey, type ApiKeyPrincipal, type KeyRefusal, type LastUseRecorder } from './keys.js';
import { API_KEY_PATTERN, type ApiScope } from '../../shared/api/scopes.js';

/**
 * The API's check of every request (issue 32 point 2): `Authorization: Bearer wl_…`, a key that is
 * neither revoked nor expired, the scope the route needs, and the key's own rate limit (its
 * requests per minute, counted per key wherever the signup limits count: memory, the database or
 * Redis). Refused keys are counted per client address too, so guessing keys is bounded in rate
 * and in database reads. The key is only ever a credential here: /auth/v1 and /api/admin take
 * admins' access tokens only, and a key there is an invalid token (401).
 */
const WINDOW_MS = 60_000;
/** Refused keys per client address and minute before further attempts are refused unread (429). */
const REFUSALS_PER_MINUTE = 30;

const KEY_RE = new RegExp(API_KEY_PATTERN);

const REFUSED: Record<KeyRefusal | 'missing', { code: string; message: string }> = {
  missing: { code: 'unauthorized', message: 'Send an API key: Authorization: Bearer wl_…' },
  unknown: { code: 'unauthorized', message: 'This API key is not valid.' },
  revoked: { code: 'key_revoked', message: 'This API key has been revoked.' },
  expired: { code: 'key_expired', message: 'This API key has expired.' },
};

export interface ApiGuardOptions {
  store: RateLimitStore;
  lastUse: LastUseRecorder;
}

const principals = new WeakMap<FastifyRequest, ApiKeyPrincipal>();

/** The key that the guard let through for this request. */
export function apiKeyOf(request: FastifyRequest): ApiKeyPrincipal {
  const key = principals.get(request);
  if (!key) throw new HttpError(401, REFUSED.missing.code, REFUSED.missing.message);
  return key;
}

function refusal(reply: FastifyReply, why: KeyRefusal | 'missing'): HttpError {
  reply.header('www-authenticate', why === 'missing' ? 'Bearer' : 'Bearer error="invalid_token"');
  return new HttpError(401, REFUSED[why].code, REFUSED[why].message);
}

function tooMany(message: string): HttpError {
  return new HttpError(429, 'rate_limited', message);
}

/**
 * The onRequest hook of a route that needs `scope`: answers are never cached, bodies are JSON
 * (`allowForm`: a form too, the download's), and the key is checked before anything is read.
 */
export function apiGuard(app: FastifyInstance, options: ApiGuardOptions, scope: ApiScope, allowForm = false) {
  const { db } = app.database;
  const { store, lastUse } = options;
  const memory = store.kind === 'memory';
  return async function guard(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    reply.header('cache-control', 'no-store');
    const type = request.headers['content-type'];
    const form = allowForm && typeof type === 'string' && type.toLowerCase().startsWith('application/x-www-form-urlencoded');
    if (hasBody(request) && !isJsonContentType(type) && !form) {
      throw new HttpError(415, 'unsupported_media_type', 'Send the request body as JSON (Content-Type: application/json).');
    }
    const address = rateLimitAddress(request.ip ?? '');
    const refusalKey = memory ? `api_auth:${address}` : limitKey('api_auth', address);
    const refusalLimit = { max: REFUSALS_PER_MINUTE, windowMs: WINDOW_MS };
    const refuse = async (why: KeyRefusal | 'missing') => {
      await store.hit(refusalKey, refusalLimit);
      return refusal(reply, why);
    };
    if ((await store.peek(refusalKey, refusalLimit)).count >= REFUSALS_PER_MINUTE) {
      throw tooMany('Too many requests with an invalid API key. Wait a minute.');
    }
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    const token = match?.[1];
    if (token === undefined || !KEY_RE.test(token)) throw await refuse('missing');
    const key = await findUsableApiKey(db, token);
    if (typeof key === 'string') throw await refuse(key);
    if (!key.scopes.has(scope)) {
      throw new HttpError(403, 'insufficient_scope', `This API key does not have the ${scope} scope.`);
    }
    const state = await store.hit(memory ? `api_key:${key.id}` : limitKey('api_key', key.id), { max: key.rateLimit, windowMs: WINDOW_MS });
    if (!answerLimit(reply, key.rateLimit, state)) throw tooMany(`This API key may make ${key.rateLimit} requests a minute. Wait and try again.`);
    lastUse.used(key.id);
    principals.set(request, key);
  };
}
