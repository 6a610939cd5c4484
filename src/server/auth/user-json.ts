import { createHash } from 'node:crypto';
import { parseJsonObject, toIsoTimestamp } from '../db/database.js';
import { appMetadata, JWT_AUDIENCE, JWT_ROLE } from './tokens.js';
import type { FactorRow } from './factors-repository.js';
import type { AdminUserRow } from './users-repository.js';
import type { FactorJson, GoTrueUser } from './auth-api.js';

/** A stable UUID-shaped identity id derived from the user id (there is no identities table). */
function identityId(userId: string): string {
  const h = createHash('sha256').update(`email-identity:${userId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** One factor as `user.factors` lists it (GoTrue leaves an empty friendly name out). */
function factorJson(factor: FactorRow): FactorJson {
  return {
    id: factor.id,
    friendly_name: factor.friendly_name === '' ? undefined : factor.friendly_name,
    factor_type: factor.factor_type,
    status: factor.status,
    created_at: toIsoTimestamp(factor.created_at),
    updated_at: toIsoTimestamp(factor.updated_at),
  };
}

/** `user` with its factors, which GoTrue leaves out while there are none. */
export function withFactors(user: GoTrueUser, factors: FactorRow[]): GoTrueUser {
  return factors.length === 0 ? user : { ...user, factors: factors.map(factorJson) };
}

/**
 * The one mapping from an admin row to the GoTrue user object (goTrueUserSchema, which also fixes
 * the field order and drops `last_sign_in_at` while it is undefined). Admin accounts are created by
 * an operator, so the email counts as confirmed at creation.
 */
export function userJson(user: AdminUserRow, factors: FactorRow[] = []): GoTrueUser {
  const createdAt = toIsoTimestamp(user.created_at);
  const updatedAt = toIsoTimestamp(user.updated_at);
  const lastSignInAt = user.last_sign_in_at ? toIsoTimestamp(user.last_sign_in_at) : undefined;
  return withFactors({
    id: user.id,
    aud: JWT_AUDIENCE,
    role: JWT_ROLE,
    email: user.email,
    email_confirmed_at: createdAt,
    phone: '',
    confirmed_at: createdAt,
    last_sign_in_at: lastSignInAt,
    app_metadata: appMetadata(user.role),
    user_metadata: parseJsonObject(user.user_metadata),
    identities: [
      {
        identity_id: identityId(user.id),
        id: user.id,
        user_id: user.id,
        identity_data: { sub: user.id, email: user.email, email_verified: true, phone_verified: false },
        provider: 'email',
        last_sign_in_at: lastSignInAt,
        created_at: createdAt,
        updated_at: updatedAt,
        email: user.email,
      },
    ],
    created_at: createdAt,
    updated_at: updatedAt,
    is_anonymous: false,
  }, factors);
}
