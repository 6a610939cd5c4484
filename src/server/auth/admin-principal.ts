/** The signed-in admin behind a request, as `app.requireAdmin(request)` resolves it (src/server/auth/require-admin.ts). */
export interface AdminPrincipal {
  userId: string;
  email: string;
  sessionId: string;
}
