/**
 * Admin roles (issue 32 point 4), declared once for the server, the admin page and the CLI.
 *
 * - viewer: sees and searches the waitlist and the insight panel; cannot export, delete, invite,
 *   retry e-mail or see the outbox (whose rows carry addresses).
 * - admin: everything an admin could do before roles.
 * - owner: an admin who also manages the admins' roles (and, as the lead declares them, API keys
 *   and webhooks).
 *
 * Each role has the rights of those below it. The server checks the role stored in the database
 * on every admin request (a route declares the least role it needs: `config: { role }`); the
 * access token carries it too (`user_role`, and `app_metadata.role` of the user object), for the
 * page to hide what the role cannot do.
 */
export const ADMIN_ROLES = ['viewer', 'admin', 'owner'] as const;
export type AdminRole = (typeof ADMIN_ROLES)[number];

/** The role of a new admin when others exist (the first admin is always an owner). */
export const DEFAULT_ADMIN_ROLE: AdminRole = 'admin';

/** The top-level access-token claim beside GoTrue's `role` (which stays `authenticated`). */
export const ROLE_CLAIM = 'user_role';

export function isAdminRole(value: unknown): value is AdminRole {
  return typeof value === 'string' && (ADMIN_ROLES as readonly string[]).includes(value);
}

/** Whether `role` has the rights of `required` (each role has those of the roles below it). */
export function roleAtLeast(role: AdminRole, required: AdminRole): boolean {
  return ADMIN_ROLES.indexOf(role) >= ADMIN_ROLES.indexOf(required);
}

/** What the admin page offers a role (the server refuses the rest anyway). */
export function roleRights(role: AdminRole) {
  const admin = roleAtLeast(role, 'admin');
  return { exportEntries: admin, deleteEntries: admin, invite: admin, outbox: admin, records: admin, manageTeam: roleAtLeast(role, 'owner') };
}
export type RoleRights = ReturnType<typeof roleRights>;

/**
 * The role a GoTrue user object (or access-token claims) carries in `app_metadata.role`; the least
 * one when it carries none or an unknown one (a page then offers too little, never too much).
 */
export function roleOfUser(user: { app_metadata?: Record<string, unknown> } | null | undefined): AdminRole {
  const role = user?.app_metadata?.['role'];
  return isAdminRole(role) ? role : 'viewer';
}

export const ROLE_LABELS: Record<AdminRole, string> = { owner: 'Owner', admin: 'Admin', viewer: 'Viewer' };

/** Every admin route is under this path, and declares its role (the server refuses to start otherwise). */
export const ADMIN_API_PREFIX = '/api/admin';
