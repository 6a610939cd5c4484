import { parseJsonObject } from '../db/database.js';
import { AuthApiError } from './errors.js';
import { checkPasswordStrength, hashPassword, PASSWORD_MAX_LENGTH, STORED_PASSWORD_MAX_LENGTH, verifyPassword } from './passwords.js';
import type { UpdateUserBody } from './auth-api.js';
import type { AdminUserRow } from './users-repository.js';

/**
 * PUT /user's checks: what an update asks of the admin's row, refused with GoTrue's errors before
 * anything is written. The service (service.ts) counts the request first and writes the result.
 */

/** user_metadata ends up in every access token, so keep it small. */
const MAX_METADATA_BYTES = 16 * 1024;
/**
 * Deepest nesting of objects/arrays allowed in user_metadata. JSON.parse takes any depth, but
 * JSON.stringify (here, in the JWT signer and in the reply serialiser) is recursive and throws a
 * RangeError on a few thousand levels: a 500 now, and a stored value would break every later
 * sign-in of the account.
 */
const MAX_METADATA_DEPTH = 32;
/** GoTrue answers both current_password_required and current_password_invalid with this message. */
const CURRENT_PASSWORD_MESSAGE = 'Current password required when setting new password.';

/** The columns an update changes: user_metadata (merged; null removes a key) and the new password's hash. */
export interface UserUpdates {
  user_metadata?: string;
  password_hash?: string;
}

/** Checks `body` against the admin's row and returns what to write (nothing to write: no field set). */
export async function userUpdates(user: AdminUserRow, body: UpdateUserBody): Promise<UserUpdates> {
  const email = body.email?.trim() ?? '';
  if (email !== '' && email.toLowerCase() !== user.email) {
    throw new AuthApiError(422, 'validation_failed', 'Email changes are not supported');
  }
  if ((body.phone?.trim() ?? '') !== '') {
    throw new AuthApiError(422, 'validation_failed', 'Phone numbers are not supported');
  }

  const updates: UserUpdates = {};
  if (body.data) {
    if (jsonDepthExceeds(body.data, MAX_METADATA_DEPTH)) {
      throw new AuthApiError(422, 'validation_failed', `User metadata cannot be nested more than ${MAX_METADATA_DEPTH} levels deep`);
    }
    const merged: Record<string, unknown> = { ...parseJsonObject(user.user_metadata) };
    for (const [key, value] of Object.entries(body.data)) {
      if (key === '__proto__') continue;
      if (value === null) delete merged[key];
      else merged[key] = value;
    }
    const text = JSON.stringify(merged);
    if (Buffer.byteLength(text, 'utf8') > MAX_METADATA_BYTES) {
      throw new AuthApiError(422, 'validation_failed', `User metadata cannot be larger than ${MAX_METADATA_BYTES / 1024} KB`);
    }
    updates.user_metadata = text;
  }

  const password = body.password;
  if (typeof password === 'string') {
    if (password.length > PASSWORD_MAX_LENGTH) {
      throw new AuthApiError(400, 'validation_failed', `Password cannot be longer than ${PASSWORD_MAX_LENGTH} characters`);
    }
    const weak = await checkPasswordStrength(password, [user.email]);
    if (weak) throw new AuthApiError(422, 'weak_password', weak.message, { weak_password: { reasons: weak.reasons } });
    // GoTrue's UpdatePasswordRequireCurrentPassword, always on here (ASVS 2.1.6); checked before
    // same_password, which would otherwise tell a session thief whether a guess is the password.
    const current = body.current_password ?? '';
    if (current === '') throw new AuthApiError(400, 'current_password_required', CURRENT_PASSWORD_MESSAGE);
    if (current.length > STORED_PASSWORD_MAX_LENGTH || !(await verifyPassword(user.password_hash, current))) {
      throw new AuthApiError(400, 'current_password_invalid', CURRENT_PASSWORD_MESSAGE);
    }
    if (await verifyPassword(user.password_hash, password)) {
      throw new AuthApiError(422, 'same_password', 'New password should be different from the old password.');
    }
    updates.password_hash = await hashPassword(password);
  }
  return updates;
}

/** Nesting depth of a parsed JSON value (a scalar is 0), computed without recursion; stops past `limit`. */
function jsonDepthExceeds(value: unknown, limit: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth + 1 > limit) return true;
    for (const child of Object.values(current as Record<string, unknown>)) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}
