import { z } from 'zod/mini';
import { API_SCOPES, MAX_API_KEY_EXPIRY_DAYS, MAX_API_KEY_NAME_LENGTH, MAX_API_KEY_RATE_LIMIT } from '../api/scopes.js';
import { UUID_PATTERN } from './waitlist-api.js';

/**
 * The admin's management of API keys (src/web/admin/api-keys, src/server/api/admin-routes.ts):
 *
 * GET  /api/admin/api-keys             -> ApiKeyList (newest first, revoked ones included)
 * POST /api/admin/api-keys {name, scopes, expiresInDays?} -> CreatedApiKey (201): the key itself,
 *      shown this once; only its hash is stored
 * POST /api/admin/api-keys/:id/revoke  -> ApiKeySummary: the key stops working at once
 *
 * Admin-only, as every /api/admin call (issue 32 point 4 makes it owner-only).
 */
export const ADMIN_API_KEYS_PATH = '/api/admin/api-keys';

export const apiKeySummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  /** The key's first characters (`wl_AbCd1234`): enough to tell keys apart, useless to sign in. */
  prefix: z.string(),
  scopes: z.array(z.enum(API_SCOPES)),
  rateLimit: z.number(),
  createdAt: z.string(),
  expiresAt: z.nullable(z.string()),
  revokedAt: z.nullable(z.string()),
  /** To the minute at best: uses are recorded at most once a minute. */
  lastUsedAt: z.nullable(z.string()),
});
export type ApiKeySummary = z.infer<typeof apiKeySummarySchema>;

export const apiKeyListSchema = z.object({ keys: z.array(apiKeySummarySchema) });
export type ApiKeyList = z.infer<typeof apiKeyListSchema>;

export const createApiKeyRequestSchema = z.object({
  name: z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_API_KEY_NAME_LENGTH)),
  scopes: z.array(z.enum(API_SCOPES)).check(z.minLength(1), z.maxLength(API_SCOPES.length)),
  expiresInDays: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(MAX_API_KEY_EXPIRY_DAYS))),
  rateLimit: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(MAX_API_KEY_RATE_LIMIT))),
});
export type CreateApiKeyRequest = z.input<typeof createApiKeyRequestSchema>;

export const createdApiKeySchema = z.object({ key: apiKeySummarySchema, token: z.string() });
export type CreatedApiKey = z.infer<typeof createdApiKeySchema>;

export const apiKeyParamsSchema = z.object({ id: z.string().check(z.regex(new RegExp(UUID_PATTERN))) });
