/**
 * What other features take from auth (the declared interface): the signed-in admin's type. The
 * checks themselves reach them as `app.guardAdminScope()`, `app.adminOf(request)` and the other
 * decorations of require-admin.ts.
 */
export type { AdminPrincipal } from './admin-principal.js';
