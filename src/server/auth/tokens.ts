import { createHash, randomBytes } from 'node:crypto';
import { SignJWT, decodeProtectedHeader, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { JWT_ALGORITHM, getKeyRing, getVerificationKey } from './keys.js';

export const JWT_AUDIENCE = 'authenticated';
export const JWT_ROLE = 'authenticated';

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface AccessTokenInput {
  userId: string;
  email: string;
  sessionId: string;
  userMetadata: Record<string, unknown>;
  /** Unix seconds of the password sign-in (the amr entry). */
  passwordAt: number;
  issuedAt: number;
  expiresInSeconds: number;
}

export interface AccessClaims extends JWTPayload {
  sub: string;
  session_id: string;
  email?: string;
}

export async function signAccessToken(db: Kysely<Database>, input: AccessTokenInput): Promise<{ token: string; expiresAt: number }> {
  const ring = await getKeyRing(db);
  const expiresAt = input.issuedAt + input.expiresInSeconds;
  // Claim order follows GoTrue (§5.2 of ../shared/docs/auth-protocol.md); `iss` is omitted as GoTrue does when unset.
  const token = await new SignJWT({
    sub: input.userId,
    aud: JWT_AUDIENCE,
    exp: expiresAt,
    iat: input.issuedAt,
    email: input.email,
    phone: '',
    app_metadata: { provider: 'email', providers: ['email'] },
    user_metadata: input.userMetadata,
    role: JWT_ROLE,
    aal: 'aal1',
    amr: [{ method: 'password', timestamp: input.passwordAt }],
    session_id: input.sessionId,
    is_anonymous: false,
  })
    .setProtectedHeader({ alg: JWT_ALGORITHM, kid: ring.signing.kid, typ: 'JWT' })
    .sign(ring.signing.privateKey);
  return { token, expiresAt };
}

export class TokenVerificationError extends Error {
  constructor(
    message: string,
    /** `bad_sub` is the GoTrue 400 case (sub not a UUID); everything else is a 403 `bad_jwt`. */
    public readonly kind: 'bad_jwt' | 'bad_sub' = 'bad_jwt',
  ) {
    super(message);
    this.name = 'TokenVerificationError';
  }
}

/**
 * Verifies an access token: ES256 only, a kid that is one of our keys, a valid signature, an `exp`
 * in the future (no leeway), and UUID `sub`/`session_id`. It does NOT check the database rows;
 * callers must (see authenticate.ts).
 */
export async function verifyAccessToken(db: Kysely<Database>, token: string): Promise<AccessClaims> {
  let header;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw new TokenVerificationError('invalid JWT: unable to parse or verify signature, token is malformed');
  }
  if (header.alg !== JWT_ALGORITHM) {
    throw new TokenVerificationError(`invalid JWT: unable to parse or verify signature, signing method ${String(header.alg)} is invalid`);
  }
  if (typeof header.kid !== 'string' || header.kid === '') {
    throw new TokenVerificationError('invalid JWT: unable to parse or verify signature, missing kid');
  }
  const key = await getVerificationKey(db, header.kid);
  if (!key) throw new TokenVerificationError('invalid JWT: unable to parse or verify signature, unknown kid');
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, key, { algorithms: [JWT_ALGORITHM], requiredClaims: ['exp', 'sub'] }));
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) {
      throw new TokenVerificationError('invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired');
    }
    if (err instanceof joseErrors.JWSSignatureVerificationFailed) {
      throw new TokenVerificationError('invalid JWT: unable to parse or verify signature, token signature is invalid');
    }
    throw new TokenVerificationError('invalid JWT: unable to parse or verify signature, token is invalid');
  }
  if (typeof payload.sub !== 'string' || payload.sub === '') throw new TokenVerificationError('invalid claim: missing sub claim');
  if (!UUID_RE.test(payload.sub)) throw new TokenVerificationError('invalid claim: sub claim must be a UUID', 'bad_sub');
  const sessionId = (payload as { session_id?: unknown }).session_id;
  if (typeof sessionId !== 'string' || !UUID_RE.test(sessionId)) {
    throw new TokenVerificationError('invalid claim: session_id claim must be a UUID');
  }
  return payload as AccessClaims;
}

/** A new opaque refresh token: 32 random bytes, base64url (43 characters). */
export function newRefreshToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Refresh tokens are stored only as this hash. */
export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
