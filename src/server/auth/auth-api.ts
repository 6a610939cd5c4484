import { z } from 'zod/mini';
import { ADMIN_ROLES } from '../../shared/admin/roles.js';

/**
 * The admin auth service at /auth/v1: the GoTrue subset @supabase/auth-js uses, declared once for
 * the server and the tests. The wire reference is the protocol document beside this repository,
 * ../shared/docs/auth-protocol.md from its root; § numbers below point into it.
 *
 * A body field of the wrong type is answered 400 `bad_json` "Could not parse request body as JSON:
 * <the message declared here>"; the first problem, in field order, decides. A problem declared with
 * `params: { status, code }` is answered with that status and code instead. Fields not declared
 * here (`gotrue_meta_security`, `code_challenge`, `nonce`…) are ignored, and a response carries
 * only the fields declared here, in GoTrue's order.
 */

/** A body field GoTrue reads as a string; `null` counts as absent (§2.5). */
function stringField(name: string) {
  return z.optional(z.nullable(z.string({ error: `${name} must be a string` })));
}

/** A JSON object body; an empty body or `null` counts as `{}`. */
function objectBody<Shape extends z.core.$ZodShape>(shape: Shape) {
  return z.pipe(
    z.transform((body: unknown) => body ?? {}),
    z.object(shape, { error: 'expected an object' }),
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** POST /token: `grant_type` picks the body; anything else is 400 `invalid_credentials`. */
export const tokenQuerySchema = z.object({
  grant_type: z.catch(z.optional(z.enum(['password', 'refresh_token'])), undefined),
});

/** POST /token?grant_type=password (§2.1). */
export const passwordGrantBodySchema = objectBody({
  email: stringField('email'),
  phone: stringField('phone'),
  password: stringField('password'),
});
export type PasswordGrantBody = z.output<typeof passwordGrantBodySchema>;

/** POST /token?grant_type=refresh_token (§2.2). */
export const refreshGrantBodySchema = objectBody({
  refresh_token: stringField('refresh_token'),
});
export type RefreshGrantBody = z.output<typeof refreshGrantBodySchema>;

/** POST /logout?scope=global|local|others (§2.3). A repeated `scope` arrives as a list; the service names it in its 400. */
export const logoutQuerySchema = z.object({
  scope: z.optional(z.union([z.string(), z.array(z.string())])),
});
export type LogoutScope = z.output<typeof logoutQuerySchema>['scope'];

/** PUT /user (§2.5). Checked in this order: the strings, then `app_metadata`, then `data`. */
export const updateUserBodySchema = objectBody({
  email: stringField('email'),
  phone: stringField('phone'),
  password: stringField('password'),
  /** Needed with `password` (GoTrue's current_password_required / current_password_invalid). */
  current_password: stringField('current_password'),
  app_metadata: z.optional(
    z.custom<null>((value) => value === null, { error: 'User not allowed', params: { status: 403, code: 'not_admin' } }),
  ),
  // Kept as sent (not copied key by key), so the service sees exactly the object the client wrote.
  data: z.optional(
    z.custom<Record<string, unknown> | null>((value) => value === null || isPlainObject(value), { error: 'data must be an object' }),
  ),
});
export type UpdateUserBody = z.output<typeof updateUserBodySchema>;

/** With the admin's role (src/shared/admin/roles.ts), which auth-js passes through as it does any key. */
const appMetadataSchema = z.object({ provider: z.string(), providers: z.array(z.string()), role: z.enum(ADMIN_ROLES) });

/** One element of `identities` (§3.2). */
const identitySchema = z.object({
  identity_id: z.string(),
  id: z.string(),
  user_id: z.string(),
  identity_data: z.object({ sub: z.string(), email: z.string(), email_verified: z.boolean(), phone_verified: z.boolean() }),
  provider: z.string(),
  last_sign_in_at: z.optional(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  email: z.string(),
});

/** One element of `user.factors` (GoTrue's Factor): `friendly_name` is left out when empty. */
export const factorSchema = z.object({
  id: z.string(),
  friendly_name: z.optional(z.string()),
  factor_type: z.literal('totp'),
  status: z.enum(['unverified', 'verified']),
  created_at: z.string(),
  updated_at: z.string(),
});
export type FactorJson = z.infer<typeof factorSchema>;

/** The GoTrue user object (§3.2): GET and PUT /user, and `user` in a session. */
export const goTrueUserSchema = z.object({
  id: z.string(),
  aud: z.string(),
  role: z.string(),
  email: z.string(),
  email_confirmed_at: z.string(),
  phone: z.string(),
  confirmed_at: z.string(),
  last_sign_in_at: z.optional(z.string()),
  app_metadata: appMetadataSchema,
  user_metadata: z.record(z.string(), z.unknown()),
  identities: z.array(identitySchema),
  created_at: z.string(),
  updated_at: z.string(),
  is_anonymous: z.boolean(),
  /** Left out when the user has none, as GoTrue does (auth-mfa.md: listFactors reads it). */
  factors: z.optional(z.array(factorSchema)),
});
export type GoTrueUser = z.infer<typeof goTrueUserSchema>;

/** The session answer of both grants (§3.1); `weak_password` only on the password grant. */
export const sessionResponseSchema = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  expires_in: z.number(),
  expires_at: z.number(),
  refresh_token: z.string(),
  user: goTrueUserSchema,
  weak_password: z.optional(z.nullable(z.object({ message: z.string(), reasons: z.array(z.string()) }))),
});
export type SessionResponse = z.infer<typeof sessionResponseSchema>;

/** A UUID in a body field; anything else is answered as GoTrue's JSON decoder does (400 bad_json). */
function uuidField(name: string) {
  return z.optional(
    z.nullable(
      z.string({ error: `${name} must be a string` }).check(
        z.regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, { error: `${name} must be a UUID` }),
      ),
    ),
  );
}

/** POST /factors (auth-mfa.md "Enrol"). `factor_type` is checked by the service (GoTrue's messages). */
export const enrollFactorBodySchema = objectBody({
  factor_type: stringField('factor_type'),
  friendly_name: stringField('friendly_name'),
  issuer: stringField('issuer'),
});
export type EnrollFactorBody = z.output<typeof enrollFactorBodySchema>;

export const enrollFactorResponseSchema = z.object({
  id: z.string(),
  type: z.literal('totp'),
  friendly_name: z.string(),
  totp: z.object({ qr_code: z.string(), secret: z.string(), uri: z.string() }),
});
export type EnrollFactorResponse = z.infer<typeof enrollFactorResponseSchema>;

/** `:factorId` of the /factors/… routes; a non-UUID is answered 404 by the service. */
export const factorParamsSchema = z.object({ factorId: z.string() });

/** POST /factors/{id}/challenge answers; the body is ignored for TOTP. */
export const challengeResponseSchema = z.object({
  id: z.string(),
  type: z.literal('totp'),
  expires_at: z.number(),
});
export type ChallengeResponse = z.infer<typeof challengeResponseSchema>;

/** POST /factors/{id}/verify; the answer is a session (sessionResponseSchema). */
export const verifyFactorBodySchema = objectBody({
  challenge_id: uuidField('challenge_id'),
  code: stringField('code'),
});
export type VerifyFactorBody = z.output<typeof verifyFactorBodySchema>;

/** DELETE /factors/{id}. */
export const unenrollResponseSchema = z.object({ id: z.string() });
