import type { Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely';
import type { AdminUsersTable, Database } from '../db/schema.js';

/** Where the auth repositories run a query: the database, or a transaction of it. */
export type Db = Kysely<Database> | Transaction<Database>;

export type AdminUserRow = Selectable<AdminUsersTable>;

/** An admin with the number of its sessions, for `npm run admin -- list`. */
export type AdminUserSummaryRow = Pick<AdminUserRow, 'id' | 'email' | 'created_at' | 'last_sign_in_at' | 'role'> & { sessions: number | string };

export async function insertUser(db: Db, user: Insertable<AdminUsersTable>): Promise<void> {
  await db.insertInto('admin_users').values(user).execute();
}

export function findUserById(db: Db, id: string): Promise<AdminUserRow | undefined> {
  return db.selectFrom('admin_users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** `email` as stored: lower-cased. */
export function findUserByEmail(db: Db, email: string): Promise<AdminUserRow | undefined> {
  return db.selectFrom('admin_users').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function findUserIdByEmail(db: Db, email: string): Promise<string | undefined> {
  const row = await db.selectFrom('admin_users').select('id').where('email', '=', email).executeTakeFirst();
  return row?.id;
}

export async function countUsers(db: Db): Promise<number> {
  const row = await db.selectFrom('admin_users').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Every admin with its session count, by e-mail. */
export function listUsersWithSessionCounts(db: Db): Promise<AdminUserSummaryRow[]> {
  return db
    .selectFrom('admin_users as u')
    .leftJoin('admin_sessions as s', 's.user_id', 'u.id')
    .select((eb) => ['u.id', 'u.email', 'u.created_at', 'u.last_sign_in_at', 'u.role', eb.fn.count<number | string>('s.id').as('sessions')])
    .groupBy(['u.id', 'u.email', 'u.created_at', 'u.last_sign_in_at', 'u.role'])
    .orderBy('u.email')
    .execute();
}

export async function updateUser(db: Db, id: string, changes: Updateable<AdminUsersTable>): Promise<void> {
  await db.updateTable('admin_users').set(changes).where('id', '=', id).execute();
}

export async function deleteUser(db: Db, id: string): Promise<void> {
  await db.deleteFrom('admin_users').where('id', '=', id).execute();
}
