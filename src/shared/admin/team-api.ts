import { z } from 'zod/mini';
import { ADMIN_ROLES } from './roles.js';
import { UUID_PATTERN } from './waitlist-api.js';

/**
 * The owner's Team section (issue 32 point 4), declared once for the admin page, the server and
 * the tests. Owner-only (any other role: 403 `insufficient_role`), with the admin API's other
 * errors and aal2 rules (src/shared/admin/waitlist-api.ts).
 *
 * GET  /api/admin/team                  -> TeamList (every admin: e-mail, role, dates; by e-mail)
 * POST /api/admin/team/role {id, role}  -> TeamMember (the admin as changed; audited)
 *
 * The last owner cannot be given another role (409 `last_owner`); an unknown id is a 404.
 */
export const ADMIN_TEAM_PATH = '/api/admin/team';
export const ADMIN_TEAM_ROLE_PATH = `${ADMIN_TEAM_PATH}/role`;
export const LAST_OWNER_CODE = 'last_owner';

export const adminRoleSchema = z.enum(ADMIN_ROLES);

export const teamMemberSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: adminRoleSchema,
  /** ISO 8601. */
  created_at: z.string(),
  last_sign_in_at: z.nullable(z.string()),
  /** The admin who asked. */
  you: z.boolean(),
});
export type TeamMember = z.infer<typeof teamMemberSchema>;

export const teamListSchema = z.object({ admins: z.array(teamMemberSchema) });
export type TeamList = z.infer<typeof teamListSchema>;

export const setRoleRequestSchema = z.strictObject({
  id: z.string().check(z.regex(new RegExp(UUID_PATTERN))),
  role: adminRoleSchema,
});
export type SetRoleRequest = z.infer<typeof setRoleRequestSchema>;
