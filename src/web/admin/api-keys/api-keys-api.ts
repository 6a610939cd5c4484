import {
  ADMIN_API_KEYS_PATH,
  apiKeyListSchema,
  apiKeySummarySchema,
  createdApiKeySchema,
  type ApiKeySummary,
  type CreateApiKeyRequest,
  type CreatedApiKey,
} from '../../../shared/admin/api-keys-api.js';
import { postJson, readJson, request } from '../common/admin-api.js';

export async function fetchApiKeys(signal?: AbortSignal): Promise<ApiKeySummary[]> {
  return (await readJson(await request(ADMIN_API_KEYS_PATH, { signal }), apiKeyListSchema)).keys;
}

export async function createApiKey(body: CreateApiKeyRequest): Promise<CreatedApiKey> {
  return readJson(await postJson(ADMIN_API_KEYS_PATH, body), createdApiKeySchema);
}

export async function revokeApiKey(id: string): Promise<ApiKeySummary> {
  return readJson(await request(`${ADMIN_API_KEYS_PATH}/${encodeURIComponent(id)}/revoke`, { method: 'POST' }), apiKeySummarySchema);
}
