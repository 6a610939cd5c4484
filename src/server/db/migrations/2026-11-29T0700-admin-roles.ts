import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// Admin roles (issue 32 point 4): owner, admin or viewer. Every existing admin keeps today's rights
// ('admin'), and the earliest-created one (ties broken by id) becomes the owner, so an installation
// that already has admins is never left without one. A CHECK keeps the column to the three names.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('admin_users')
    .addColumn('role', 'text', (c) => c.notNull().defaultTo('admin').check(sql`role IN ('owner', 'admin', 'viewer')`))
    .execute();
  await sql`
    UPDATE admin_users SET role = 'owner'
    WHERE id = (SELECT id FROM admin_users ORDER BY created_at, id LIMIT 1)
  `.execute(db);
  await sql`CREATE INDEX admin_users_role_idx ON admin_users (role)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS admin_users_role_idx`.execute(db);
  await db.schema.alterTable('admin_users').dropColumn('role').execute();
}
