import { createHash, randomBytes } from 'node:crypto';
import { SignJWT, decodeProtectedHeader, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { ROLE_CLAIM, type AdminRole } from '../../shared/admin/roles.js';
import { JWT_ALGORITHM, getKeyRing, getVerificationKey } from './keys.js';

export const JWT_AUDIENCE = 'authenticated';
export const JWT_ROLE = 'authenticated';
/**
 * The `iss` of every access token, checked on every request. A constant (there is no public URL
 * setting), so tokens do not depend on the Host a request named; auth-js does not read it.
 */
export const JWT_ISSUER = 'waitlist-auth';
/** Clock skew tolerated on `iat` (a token issued "in the future" by at most this much still counts). */
export const IAT_LEEWAY_SECONDS = 30;
/** The longest access-token lifetime the configuration allows (JWT_EXPIRY_SECONDS' upper bound). */
export const MAX_TOKEN_LIFETIME_SECONDS = 604_800;

export type Aal = 'aal1' | 'aal2';

/** GoTrue's `app_metadata` of an e-mail account, with the admin's role (tokens and the user object alike). */
export function appMetadata(role: AdminRole): { provider: string; providers: string[]; role: AdminRole } {
  return { provider: 'email', providers: ['email'], role };
}

/** One authentication method of a session, as in GoTrue's `amr` claim. */
export interface AmrEntry {
  method: string;
  timestamp: number;
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface AccessTokenInput {
  userId: string;
  email: string;
  sessionId: string;
  userMetadata: Record<string, unknown>;
  /**
   * The admin's role when the token is issued: in `app_metadata.role` and the top-level `user_role`
   * claim, for the page to show and hide; the server itself checks the database's on each request.
   */
  role: AdminRole;
  /** Unix seconds of the password sign-in. */
  passwordAt: number;
  /** The session's assurance level and methods, newest first (sessionAssurance); aal1 by password alone when absent. */
  aal?: Aal;
  amr?: AmrEntry[];
  issuedAt: number;
  expiresInSeconds: number;
}

export interface AccessClaims extends JWTPayload {
  sub: string;
  session_id: string;
  email?: string;
  aal?: Aal;
}

/** What a session row says about how it was authenticated. */
export interface SessionAssuranceInput {
  created_at: Date | string;
  /** Absent on a session row being created (aal1 by password). */
  aal?: Aal | string;
  /** JSON list of the methods added after the password sign-in. */
  amr?: string;
}

function isAmrEntry(value: unknown): value is AmrEntry {
  const v = value as AmrEntry | null;
  return typeof v === 'object' && v !== null && typeof v.method === 'string' && typeof v.timestamp === 'number';
}

/** The methods a session row stores (its `amr` column); anything malformed counts as none. */
export function storedAmr(text: string | undefined): AmrEntry[] {
  try {
    const value: unknown = JSON.parse(text ?? '[]');
    return Array.isArray(value) ? value.filter(isAmrEntry) : [];
  } catch {
    return [];
  }
}

/**
 * The `aal` and `amr` claims of a session, recomputed from its row on every token (so a refresh keeps
 * aal2): the password sign-in at `created_at`, plus the methods stored since, newest first.
 */
export function sessionAssurance(session: SessionAssuranceInput): { passwordAt: number; aal: Aal; amr: AmrEntry[] } {
  const extra = storedAmr(session.amr);
  const passwordAt = Math.floor(new Date(session.created_at).getTime() / 1000);
  const amr = [...extra, { method: 'password', timestamp: passwordAt }].sort((a, b) => b.timestamp - a.timestamp);
  const aal: Aal = session.aal === 'aal2' && extra.length > 0 ? 'aal2' : 'aal1';
  return { passwordAt, aal, amr };
}

export async function signAccessToken(db: Kysely<Database>, input: AccessTokenInput): Promise<{ token: string; expiresAt: number }> {
  const ring = await getKeyRing(db);
  const expiresAt = input.issuedAt + input.expiresInSeconds;
  // Claim order follows GoTrue (§5.2 of ../shared/docs/auth-protocol.md).
  const token = await new SignJWT({
    iss: JWT_ISSUER,
    sub: input.userId,
    aud: JWT_AUDIENCE,
    exp: expiresAt,
    iat: input.issuedAt,
    email: input.email,
    phone: '',
    app_metadata: appMetadata(input.role),
    user_metadata: input.userMetadata,
    // GoTrue's `role` stays `authenticated` (PostgREST and auth-js read it); ours is `user_role`.
    role: JWT_ROLE,
    aal: input.aal ?? 'aal1',
    amr: input.amr ?? [{ method: 'password', timestamp: input.passwordAt }],
    session_id: input.sessionId,
    is_anonymous: false,
    [ROLE_CLAIM]: input.role,
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

export interface VerifyOptions {
  /** The configured access-token lifetime: a token claiming a longer one (exp - iat) is refused. */
  maxLifetimeSeconds?: number;
  /** Milliseconds since the epoch. */
  now?: number;
}

const invalidClaims = (what: string) => new TokenVerificationError(`invalid JWT: unable to parse or verify signature, token has invalid claims: ${what}`);

/**
 * Verifies an access token: ES256 only, a kid that is one of our keys, a valid signature, our `iss`
 * and `aud`, an `exp` in the future (no leeway), an `iat` not in the future (30 s leeway) and no
 * further from `exp` than the configured lifetime, and UUID `sub`/`session_id`. It does NOT check the
 * database rows; callers must (see authenticate.ts).
 */
export async function verifyAccessToken(db: Kysely<Database>, token: string, options: VerifyOptions = {}): Promise<AccessClaims> {
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
    ({ payload } = await jwtVerify(token, key, {
      algorithms: [JWT_ALGORITHM],
      requiredClaims: ['exp', 'iat', 'sub'],
      issuer: JWT_ISSUER,
      audience: JWT_AUDIENCE,
      ...(options.now === undefined ? {} : { currentDate: new Date(options.now) }),
    }));
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) {
      throw new TokenVerificationError('invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired');
    }
    if (err instanceof joseErrors.JWTClaimValidationFailed) throw invalidClaims(`${err.claim} claim is invalid`);
    if (err instanceof joseErrors.JWSSignatureVerificationFailed) {
      throw new TokenVerificationError('invalid JWT: unable to parse or verify signature, token signature is invalid');
    }
    throw new TokenVerificationError('invalid JWT: unable to parse or verify signature, token is invalid');
  }
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  const { iat, exp } = payload as { iat: number; exp: number };
  if (iat > nowSeconds + IAT_LEEWAY_SECONDS) throw invalidClaims('token used before issued');
  if (exp - iat > (options.maxLifetimeSeconds ?? MAX_TOKEN_LIFETIME_SECONDS)) throw invalidClaims('token lifetime exceeds the configured one');
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
