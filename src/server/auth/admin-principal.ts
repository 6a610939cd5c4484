import type { AdminRole } from '../../shared/admin/roles.js';

/** The signed-in admin behind a request, as `app.requireAdmin(request)` resolves it (src/server/auth/require-admin.ts). */
export interface AdminPrincipal {
  userId: string;
  email: string;
  sessionId: string;
  /** The admin's role as the database holds it when the request was checked. */
  role: AdminRole;
}
