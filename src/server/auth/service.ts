import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { recordAudit } from '../audit/audit-log.js';
import type { AppConfig } from '../config.js';
import { isPostgres, parseJsonObject, toIsoTimestamp } from '../db/database.js';
import type { AdminRefreshTokensTable, AdminSessionsTable, Database } from '../db/schema.js';
import type { AuthSuccess } from './authenticate.js';
import { AuthApiError } from './errors.js';
import { rateLimitAddress } from '../geolocation/ip.js';
import { databaseStore, limitKey, retryAfterSeconds, type RateLimitStore } from '../rate-limit/index.js';
import { checkPasswordStrength, hashPassword, PASSWORD_MAX_LENGTH, verifyAgainstDummy, verifyPassword, type WeakPassword } from './passwords.js';
import { hashRefreshToken, newRefreshToken, signAccessToken } from './tokens.js';
import { userJson, type AdminUserRow } from './user-json.js';

export interface AuthServiceOptions {
  db: Kysely<Database>;
  config: AppConfig['auth'];
  /** Where sign-in attempts are counted; the database (table auth_rate_limits) unless given. */
  limits?: RateLimitStore;
  /** Milliseconds since the epoch; tests may inject a clock. */
  now?: () => number;
}

export interface ClientInfo {
  ip: string | null;
  userAgent: string | null;
}

export type SessionResponse = Record<string, unknown>;

type TokenRow = Selectable<AdminRefreshTokensTable>;
type SessionRow = Selectable<AdminSessionsTable>;

const MAX_USER_AGENT = 512;
const MAX_EMAIL = 320;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS_ALL = /[\u0000-\u001f\u007f]/g;
/** user_metadata ends up in every access token, so keep it small. */
const MAX_METADATA_BYTES = 16 * 1024;
/**
 * Deepest nesting of objects/arrays allowed in user_metadata. JSON.parse takes any depth, but
 * JSON.stringify (here, in the JWT signer and in the reply serialiser) is recursive and throws a
 * RangeError on a few thousand levels: a 500 now, and a stored value would break every later
 * sign-in of the account.
 */
const MAX_METADATA_DEPTH = 32;
const REFRESH_TOKEN_MIN = 12;
const REFRESH_TOKEN_MAX = 512;

const invalidCredentials = () => new AuthApiError(400, 'invalid_credentials', 'Invalid login credentials');
const tokenNotFound = () => new AuthApiError(400, 'refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found');

function rateLimited(retryAfter: number): AuthApiError {
  return new AuthApiError(429, 'over_request_rate_limit', 'Request rate limit reached', {}, { 'retry-after': String(retryAfter) });
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

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    throw new AuthApiError(400, 'bad_json', `Could not parse request body as JSON: ${field} must be a string`);
  }
  return value;
}

function requireObjectBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (!isPlainObject(body)) throw new AuthApiError(400, 'bad_json', 'Could not parse request body as JSON: expected an object');
  return body;
}

export class AuthService {
  private readonly db: Kysely<Database>;
  private readonly config: AppConfig['auth'];
  private readonly now: () => number;
  private readonly isPostgres: boolean;
  private readonly limits: RateLimitStore;

  constructor(options: AuthServiceOptions) {
    this.db = options.db;
    this.config = options.config;
    this.now = options.now ?? Date.now;
    this.limits = options.limits ?? databaseStore(options.db, { now: this.now });
    this.isPostgres = isPostgres(this.db);
  }

  private nowIso(): string {
    return new Date(this.now()).toISOString();
  }

  /** POST /token?grant_type=password */
  async signInWithPassword(rawBody: unknown, client: ClientInfo): Promise<SessionResponse> {
    const body = requireObjectBody(rawBody);
    const email = optionalString(body, 'email')?.trim() ?? '';
    const phone = optionalString(body, 'phone')?.trim() ?? '';
    const password = optionalString(body, 'password') ?? '';
    if (email !== '' && phone !== '') {
      throw new AuthApiError(400, 'validation_failed', 'Only an email address or phone number should be provided on login.');
    }
    if (email === '' && phone === '') throw new AuthApiError(400, 'validation_failed', 'missing email or phone');
    if (phone !== '') throw new AuthApiError(422, 'phone_provider_disabled', 'Phone logins are disabled');
    if (password === '') throw new AuthApiError(400, 'validation_failed', 'missing password');

    // Per-IP: every attempt counts. Per-account: every attempt counts until a success resets it,
    // so parallel guesses cannot slip past a check-then-count race.
    if (client.ip) {
      const ipState = await this.limits.hit(limitKey('ip', rateLimitAddress(client.ip)), this.config.ipAttemptLimit);
      if (ipState.count > this.config.ipAttemptLimit.max) throw rateLimited(retryAfterSeconds(ipState));
    }
    const normalised = email.toLowerCase();
    const accountKey = limitKey('account', normalised);
    const accountState = await this.limits.hit(accountKey, this.config.accountFailureLimit);
    if (accountState.count > this.config.accountFailureLimit.max) throw rateLimited(retryAfterSeconds(accountState));

    // An address no admin can have (too long, control characters such as NUL, which PostgreSQL
    // text rejects) is not looked up, but still pays the same argon2 cost below.
    const lookupable = normalised.length <= MAX_EMAIL && !CONTROL_CHARS.test(normalised);
    const user = lookupable
      ? await this.db.selectFrom('admin_users').selectAll().where('email', '=', normalised).executeTakeFirst()
      : undefined;
    let ok = false;
    if (user) ok = await verifyPassword(user.password_hash, password);
    else await verifyAgainstDummy(password); // same argon2 cost for an unknown address
    if (!user || !ok) {
      await recordAudit(this.db, {
        action: 'sign_in_failed',
        actorEmail: normalised.replace(CONTROL_CHARS_ALL, '').slice(0, MAX_EMAIL),
        actorId: null,
        ip: client.ip,
        detail: { reason: 'invalid_credentials' },
      });
      throw invalidCredentials();
    }

    await this.limits.reset(accountKey);
    const weak: WeakPassword | null = checkPasswordStrength(password);
    const { session, refreshToken, updatedUser } = await this.db.transaction().execute(async (trx) => {
      const at = this.nowIso();
      const values = {
        id: randomUUID(),
        user_id: user.id,
        created_at: at,
        updated_at: at,
        user_agent: client.userAgent?.slice(0, MAX_USER_AGENT) ?? null,
        ip_address: client.ip,
      };
      await trx.insertInto('admin_sessions').values(values).execute();
      const sessionRow: SessionRow = values;
      const token = await this.insertRefreshToken(trx, sessionRow, null, at);
      await trx.updateTable('admin_users').set({ last_sign_in_at: at }).where('id', '=', user.id).execute();
      const fresh = await trx.selectFrom('admin_users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
      return { session: sessionRow, refreshToken: token, updatedUser: fresh };
    });
    await recordAudit(this.db, {
      action: 'sign_in',
      actorEmail: updatedUser.email,
      actorId: updatedUser.id,
      ip: client.ip,
      detail: { session_id: session.id },
    });
    const response = await this.sessionResponse(updatedUser, session, refreshToken);
    return { ...response, weak_password: weak ? { message: weak.message, reasons: weak.reasons } : null };
  }

  private async insertRefreshToken(trx: Transaction<Database>, session: SessionRow, parentId: string | null, at: string): Promise<string> {
    const token = newRefreshToken();
    await trx
      .insertInto('admin_refresh_tokens')
      .values({
        id: randomUUID(),
        token_hash: hashRefreshToken(token),
        session_id: session.id,
        user_id: session.user_id,
        parent_id: parentId,
        revoked_at: null,
        created_at: at,
        updated_at: at,
      })
      .execute();
    return token;
  }

  private async sessionResponse(user: AdminUserRow, session: SessionRow, refreshToken: string): Promise<SessionResponse> {
    const issuedAt = Math.floor(this.now() / 1000);
    const expiresIn = this.config.jwtExpirySeconds;
    const { token, expiresAt } = await signAccessToken(this.db, {
      userId: user.id,
      email: user.email,
      sessionId: session.id,
      userMetadata: parseJsonObject(user.user_metadata),
      passwordAt: Math.floor(new Date(toIsoTimestamp(session.created_at)).getTime() / 1000),
      issuedAt,
      expiresInSeconds: expiresIn,
    });
    return {
      access_token: token,
      token_type: 'bearer',
      expires_in: expiresIn,
      expires_at: expiresAt,
      refresh_token: refreshToken,
      user: userJson(user),
    };
  }

  /**
   * Takes the per-session write lock so refreshes of one session run one at a time: on PostgreSQL a
   * `SELECT … FOR UPDATE` of the session row; on SQLite a no-op write first, which takes the database
   * write lock before anything is read (no stale snapshot, no lock upgrade).
   */
  private async lockSession(trx: Transaction<Database>, sessionId: string): Promise<SessionRow | undefined> {
    if (this.isPostgres) {
      // Like GoTrue, give up after 5 s of contention instead of queueing forever.
      await sql`SET LOCAL lock_timeout = '5s'`.execute(trx);
      return trx.selectFrom('admin_sessions').selectAll().where('id', '=', sessionId).forUpdate().executeTakeFirst();
    }
    await trx.updateTable('admin_sessions').set({ updated_at: sql<string>`updated_at` }).where('id', '=', sessionId).execute();
    return trx.selectFrom('admin_sessions').selectAll().where('id', '=', sessionId).executeTakeFirst();
  }

  /**
   * Lock contention (PostgreSQL lock_timeout, SQLite busy timeout) becomes a retryable 503: a 4xx
   * on refresh would sign out a client whose access token has expired (protocol §9.5).
   */
  private async serialised<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code === '55P03' || code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT') {
        throw new AuthApiError(503, 'conflict', 'Too many concurrent token refresh requests on the same session or refresh token', {}, { 'retry-after': '1' });
      }
      throw err;
    }
  }

  /** POST /token?grant_type=refresh_token: rotation with GoTrue's reuse rules (§6.2, §6.4). */
  async refresh(rawBody: unknown, client: ClientInfo): Promise<SessionResponse> {
    const body = requireObjectBody(rawBody);
    const presented = optionalString(body, 'refresh_token') ?? '';
    if (presented.length < REFRESH_TOKEN_MIN || presented.length > REFRESH_TOKEN_MAX) {
      throw new AuthApiError(400, 'validation_failed', 'Refresh token is not valid');
    }
    const tokenHash = hashRefreshToken(presented);
    const found = await this.db.selectFrom('admin_refresh_tokens').select(['id', 'session_id']).where('token_hash', '=', tokenHash).executeTakeFirst();
    if (!found) throw tokenNotFound();

    type Outcome =
      | { kind: 'issued'; user: AdminUserRow; session: SessionRow; refreshToken: string }
      | { kind: 'not_found' }
      | { kind: 'already_used' };

    const outcome = await this.serialised(() => this.db.transaction().execute(async (trx): Promise<Outcome> => {
      const session = await this.lockSession(trx, found.session_id);
      if (!session) return { kind: 'not_found' };
      const row: TokenRow | undefined = await trx.selectFrom('admin_refresh_tokens').selectAll().where('id', '=', found.id).executeTakeFirst();
      if (!row) return { kind: 'not_found' };
      const user = await trx.selectFrom('admin_users').selectAll().where('id', '=', session.user_id).executeTakeFirst();
      if (!user) return { kind: 'not_found' };
      const at = this.nowIso();

      let parentId: string;
      if (row.revoked_at === null) {
        // 1. Normal rotation.
        await trx.updateTable('admin_refresh_tokens').set({ revoked_at: at, updated_at: at }).where('id', '=', row.id).execute();
        parentId = row.id;
      } else {
        const active = await trx
          .selectFrom('admin_refresh_tokens')
          .selectAll()
          .where('session_id', '=', session.id)
          .where('revoked_at', 'is', null)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .executeTakeFirst();
        const revokedForMs = this.now() - new Date(toIsoTimestamp(row.updated_at)).getTime();
        if (active && active.parent_id === row.id) {
          // 2. The client lost the last response: only hashes are stored, so instead of returning the
          // active token we rotate it on the client's behalf.
          await trx.updateTable('admin_refresh_tokens').set({ revoked_at: at, updated_at: at }).where('id', '=', active.id).execute();
          parentId = active.id;
        } else if (revokedForMs <= this.config.refreshReuseIntervalSeconds * 1000) {
          // 3. Concurrent refresh (another tab) within the reuse interval: branch from the same token.
          parentId = row.id;
        } else {
          // 4. Reuse outside the rules: treat as theft and sign the whole session out.
          await trx.deleteFrom('admin_refresh_tokens').where('session_id', '=', session.id).execute();
          await trx.deleteFrom('admin_sessions').where('id', '=', session.id).execute();
          return { kind: 'already_used' };
        }
      }
      const refreshToken = await this.insertRefreshToken(trx, session, parentId, at);
      const updatedSession: SessionRow = {
        ...session,
        updated_at: at,
        ip_address: client.ip ?? session.ip_address,
        user_agent: client.userAgent?.slice(0, MAX_USER_AGENT) ?? session.user_agent,
      };
      await trx
        .updateTable('admin_sessions')
        .set({ updated_at: at, ip_address: updatedSession.ip_address, user_agent: updatedSession.user_agent })
        .where('id', '=', session.id)
        .execute();
      return { kind: 'issued', user, session: updatedSession, refreshToken };
    }));

    if (outcome.kind === 'not_found') throw tokenNotFound();
    if (outcome.kind === 'already_used') {
      throw new AuthApiError(400, 'refresh_token_already_used', 'Invalid Refresh Token: Already Used');
    }
    return this.sessionResponse(outcome.user, outcome.session, outcome.refreshToken);
  }

  /** POST /logout?scope=… */
  async logout(auth: AuthSuccess, scopeInput: unknown, client: ClientInfo): Promise<void> {
    const scope = scopeInput === undefined || scopeInput === '' ? 'global' : scopeInput;
    if (scope !== 'global' && scope !== 'local' && scope !== 'others') {
      const shown = typeof scope === 'string' ? scope.slice(0, 64) : String(scope);
      throw new AuthApiError(400, 'validation_failed', `Unsupported logout scope "${shown}"`);
    }
    let query = this.db.deleteFrom('admin_sessions').where('user_id', '=', auth.user.id);
    if (scope === 'local') query = query.where('id', '=', auth.session.id);
    if (scope === 'others') query = query.where('id', '!=', auth.session.id);
    const result = await query.executeTakeFirst();
    await recordAudit(this.db, {
      action: 'sign_out',
      actorEmail: auth.user.email,
      actorId: auth.user.id,
      ip: client.ip,
      detail: { scope, session_id: auth.session.id, sessions_ended: Number(result.numDeletedRows) },
    });
  }

  /** PUT /user */
  async updateUser(auth: AuthSuccess, rawBody: unknown): Promise<Record<string, unknown>> {
    const body = requireObjectBody(rawBody);
    const email = optionalString(body, 'email');
    const phone = optionalString(body, 'phone');
    const password = optionalString(body, 'password');
    const data = body.data;
    if (body.app_metadata !== undefined && body.app_metadata !== null) {
      throw new AuthApiError(403, 'not_admin', 'User not allowed');
    }
    if (data !== undefined && data !== null && !isPlainObject(data)) {
      throw new AuthApiError(400, 'bad_json', 'Could not parse request body as JSON: data must be an object');
    }
    if (email !== undefined && email.trim() !== '' && email.trim().toLowerCase() !== auth.user.email) {
      throw new AuthApiError(422, 'validation_failed', 'Email changes are not supported');
    }
    if (phone !== undefined && phone.trim() !== '') {
      throw new AuthApiError(422, 'validation_failed', 'Phone numbers are not supported');
    }

    const updates: { user_metadata?: string; password_hash?: string; updated_at?: string } = {};
    if (isPlainObject(data)) {
      if (jsonDepthExceeds(data, MAX_METADATA_DEPTH)) {
        throw new AuthApiError(422, 'validation_failed', `User metadata cannot be nested more than ${MAX_METADATA_DEPTH} levels deep`);
      }
      const merged: Record<string, unknown> = { ...parseJsonObject(auth.user.user_metadata) };
      for (const [key, value] of Object.entries(data)) {
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

    if (password !== undefined) {
      if (password.length > PASSWORD_MAX_LENGTH) {
        throw new AuthApiError(400, 'validation_failed', `Password cannot be longer than ${PASSWORD_MAX_LENGTH} characters`);
      }
      const weak = checkPasswordStrength(password);
      if (weak) throw new AuthApiError(422, 'weak_password', weak.message, { weak_password: { reasons: weak.reasons } });
      if (await verifyPassword(auth.user.password_hash, password)) {
        throw new AuthApiError(422, 'same_password', 'New password should be different from the old password.');
      }
      updates.password_hash = await hashPassword(password);
    }

    if (updates.user_metadata === undefined && updates.password_hash === undefined) return userJson(auth.user);
    updates.updated_at = this.nowIso();
    const user = await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('admin_users').set(updates).where('id', '=', auth.user.id).execute();
      if (updates.password_hash !== undefined) {
        // A new password signs every other device out; this session stays.
        await trx.deleteFrom('admin_sessions').where('user_id', '=', auth.user.id).where('id', '!=', auth.session.id).execute();
      }
      return trx.selectFrom('admin_users').selectAll().where('id', '=', auth.user.id).executeTakeFirstOrThrow();
    });
    return userJson(user);
  }
}
