import {
  ADMIN_SESSIONS_PATH,
  ADMIN_SESSIONS_REVOKE_PATH,
  revokeResultSchema,
  sessionListSchema,
  type AdminSession,
  type RevokeSessionsRequest,
} from '../../../shared/admin/sessions-api.js';
import { postJson, readJson, request } from '../common/admin-api.js';

/** The signed-in admin's own live sessions, newest sign-in first. */
export async function fetchAdminSessions(signal?: AbortSignal): Promise<AdminSession[]> {
  const response = await request(ADMIN_SESSIONS_PATH, { signal });
  return (await readJson(response, sessionListSchema)).sessions;
}

/** Signs out the named sessions or all the others; returns how many ended. */
export async function revokeAdminSessions(which: RevokeSessionsRequest): Promise<number> {
  const response = await postJson(ADMIN_SESSIONS_REVOKE_PATH, which);
  return (await readJson(response, revokeResultSchema)).revoked;
}
