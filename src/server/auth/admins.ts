import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { checkWaitlistEmail } from '../../shared/waitlist/email.js';
import { isUniqueViolation, toIsoTimestamp } from '../db/database.js';
import type { Database } from '../db/schema.js';
import type { AdminRole } from '../../shared/admin/roles.js';
import { LAST_OWNER_MESSAGE, lockOwners } from './admin-roles.js';
import { checkPasswordStrength, hashPassword, PASSWORD_MAX_LENGTH } from './passwords.js';
import { deleteUserRefreshTokens } from './refresh-tokens-repository.js';
import { deleteSessions } from './sessions-repository.js';
import * as users from './users-repository.js';

/** Admin account management shared by the CLI (and any future UI). Emails are stored lower-cased. */
export class AdminAccountError extends Error {
  constructor(
    public readonly kind: 'invalid_email' | 'weak_password' | 'duplicate' | 'not_found' | 'last_owner',
    message: string,
  ) {
    super(message);
    this.name = 'AdminAccountError';
  }
}

export interface AdminSummary {
  id: string;
  email: string;
  createdAt: string;
  lastSignInAt: string | null;
  sessions: number;
  role: AdminRole;
}

export function normalizeEmail(value: string): string {
  const check = checkWaitlistEmail(value);
  if (!check.ok) {
    throw new AdminAccountError('invalid_email', `"${value}" is not a valid e-mail address.`);
  }
  return check.email;
}

/** Throws AdminAccountError('weak_password') with every reason, in plain words; a password built from the e-mail is weak. */
export async function assertStrongPassword(password: string, email?: string): Promise<void> {
  if (password.length > PASSWORD_MAX_LENGTH) {
    throw new AdminAccountError('weak_password', `Password cannot be longer than ${PASSWORD_MAX_LENGTH} characters.`);
  }
  const weak = await checkPasswordStrength(password, email === undefined ? [] : [email]);
  if (weak) throw new AdminAccountError('weak_password', weak.message);
}

export function countAdmins(db: Kysely<Database>): Promise<number> {
  return users.countUsers(db);
}

export const firstAdminIsOwner = (email: string) => `The first admin is an owner: create ${email} without --role, then add others.`;

/**
 * Creates an admin with `role`, or by default an owner when it is the first admin and an admin
 * otherwise. The first admin is always an owner: asking for another role for it is refused (the
 * team would have no owner).
 */
export async function createAdmin(
  db: Kysely<Database>,
  emailInput: string,
  password: string,
  options: { role?: AdminRole } = {},
): Promise<{ id: string; email: string; role: AdminRole }> {
  const email = normalizeEmail(emailInput);
  await assertStrongPassword(password, email);
  const now = new Date().toISOString();
  const id = randomUUID();
  const passwordHash = await hashPassword(password);
  try {
    return await db.transaction().execute(async (trx) => {
      const first = (await users.countUsers(trx)) === 0;
      const role = options.role ?? (first ? 'owner' : 'admin');
      if (first && role !== 'owner') throw new AdminAccountError('last_owner', firstAdminIsOwner(email));
      await users.insertUser(trx, { id, email, password_hash: passwordHash, user_metadata: '{}', created_at: now, updated_at: now, last_sign_in_at: null, role });
      return { id, email, role };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AdminAccountError('duplicate', `An admin with the e-mail ${email} already exists.`);
    throw err;
  }
}

export async function listAdmins(db: Kysely<Database>): Promise<AdminSummary[]> {
  const rows = await users.listUsersWithSessionCounts(db);
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    createdAt: toIsoTimestamp(r.created_at),
    lastSignInAt: r.last_sign_in_at ? toIsoTimestamp(r.last_sign_in_at) : null,
    sessions: Number(r.sessions),
    role: r.role,
  }));
}

/** The id of the admin with this (normalized) e-mail, or undefined when there is none. */
export function findAdminId(db: users.Db, email: string): Promise<string | undefined> {
  return users.findUserIdByEmail(db, email);
}

async function findId(db: users.Db, email: string): Promise<string> {
  const id = await findAdminId(db, email);
  if (id === undefined) throw new AdminAccountError('not_found', `No admin with the e-mail ${email}.`);
  return id;
}

/**
 * Deletes the admin; its sessions and refresh tokens go with it (ON DELETE CASCADE, and explicitly).
 * The last owner is not deleted while other admins remain (they would have no owner).
 */
export async function deleteAdmin(db: Kysely<Database>, emailInput: string): Promise<void> {
  const email = normalizeEmail(emailInput);
  await db.transaction().execute(async (trx) => {
    const owners = await lockOwners(trx);
    const id = await findId(trx, email);
    const row = await users.findUserById(trx, id);
    if (row?.role === 'owner' && owners <= 1 && (await users.countUsers(trx)) > 1) {
      throw new AdminAccountError('last_owner', LAST_OWNER_MESSAGE);
    }
    await deleteUserRefreshTokens(trx, id);
    await deleteSessions(trx, id, 'all');
    await users.deleteUser(trx, id);
  });
}

/** Sets a new password and signs the admin out everywhere. Returns how many sessions were revoked. */
export async function setAdminPassword(db: Kysely<Database>, emailInput: string, password: string): Promise<number> {
  const email = normalizeEmail(emailInput);
  await assertStrongPassword(password, email);
  await findId(db, email); // fail fast, before the slow hash
  const passwordHash = await hashPassword(password);
  return db.transaction().execute(async (trx) => {
    const id = await findId(trx, email);
    await users.updateUser(trx, id, { password_hash: passwordHash, updated_at: new Date().toISOString() });
    await deleteUserRefreshTokens(trx, id);
    return deleteSessions(trx, id, 'all');
  });
}
