import { z } from 'zod/mini';
import { UUID_PATTERN } from './waitlist-api.js';

/**
 * The signed-in admin's own sessions (ASVS 3.3.4), declared once for the admin page, the server and
 * the tests. Every call needs `Authorization: Bearer <access_token>` of a signed-in admin, as the
 * waitlist API (src/shared/admin/waitlist-api.ts), with the same errors and aal2 rules.
 *
 * GET  /api/admin/sessions                          -> SessionList (newest sign-in first)
 * POST /api/admin/sessions/revoke  {ids} | {others: true} -> RevokeResult
 *
 * Only the caller's own sessions are listed or ended: another admin's id is ignored like an unknown
 * one. The current session cannot be ended here (400 `current_session`): that is Sign Out.
 */
export const ADMIN_SESSIONS_PATH = '/api/admin/sessions';
export const ADMIN_SESSIONS_REVOKE_PATH = `${ADMIN_SESSIONS_PATH}/revoke`;
/** Most ids one revoke request may name (an admin has a handful of sessions). */
export const ADMIN_MAX_SESSION_IDS = 100;

export const adminSessionSchema = z.object({
  id: z.string(),
  /** The sign-in, ISO 8601. */
  created_at: z.string(),
  /** The last real use (sign-in, admin API call, password change), ISO 8601. */
  last_active_at: z.string(),
  ip_address: z.nullable(z.string()),
  user_agent: z.nullable(z.string()),
  aal: z.enum(['aal1', 'aal2']),
  /** The session of the request that asked. */
  current: z.boolean(),
});
export type AdminSession = z.infer<typeof adminSessionSchema>;

export const sessionListSchema = z.object({ sessions: z.array(adminSessionSchema) });
export type SessionList = z.infer<typeof sessionListSchema>;

export const revokeSessionsRequestSchema = z.union([
  z.strictObject({
    ids: z.array(z.string().check(z.regex(new RegExp(UUID_PATTERN)))).check(z.minLength(1), z.maxLength(ADMIN_MAX_SESSION_IDS)),
  }),
  z.strictObject({ others: z.literal(true) }),
]);
export type RevokeSessionsRequest = z.infer<typeof revokeSessionsRequestSchema>;

export const revokeResultSchema = z.object({ revoked: z.number() });
export type RevokeResult = z.infer<typeof revokeResultSchema>;
