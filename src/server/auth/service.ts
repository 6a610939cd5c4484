import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { recordAudit } from '../audit/audit-log.js';
import type { AppConfig } from '../config.js';
import { parseJsonObject, toIsoTimestamp } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { isAal2, type AuthSuccess } from './authenticate.js';
import { sessionLimits, sessionState } from './session-limits.js';
import { AuthApiError } from './errors.js';
import { rateLimitAddress } from '../geolocation/ip.js';
import {
  accountLimitKeys,
  databaseStore,
  hitUnlessOver,
  KNOWN_CLIENT_WINDOW_MS,
  limitKey,
  overLimitMemo,
  retryAfterSeconds,
  type Limit,
  type RateLimitStore,
  type WindowState,
} from '../rate-limit/index.js';
import { SignInAudit, type RefusalReason, type SignInEvent } from './sign-in-audit.js';
import { SignInLine } from './sign-in-line.js';
import { refreshChain, type RefreshChain } from './refresh-chain.js';
import { checkPasswordStrength, verifyAgainstDummy, verifyPassword } from './passwords.js';
import * as refreshTokens from './refresh-tokens-repository.js';
import * as sessions from './sessions-repository.js';
import { hasVerifiedFactor, listUserFactors } from './factors-repository.js';
import { hashRefreshToken, newRefreshToken, sessionAssurance, signAccessToken } from './tokens.js';
import { userJson } from './user-json.js';
import { userUpdates } from './user-update.js';
import * as users from './users-repository.js';
import type {
  GoTrueUser,
  LogoutScope,
  PasswordGrantBody,
  RefreshGrantBody,
  SessionResponse,
  UpdateUserBody,
} from './auth-api.js';
import { MAX_EMAIL_LENGTH } from '../../shared/waitlist/email.js';

export interface AuthServiceOptions {
  db: Kysely<Database>;
  config: AppConfig['auth'];
  /** Where sign-in attempts are counted; the database (table auth_rate_limits) unless given. */
  limits?: RateLimitStore;
  /** Milliseconds since the epoch; tests may inject a clock. */
  now?: () => number;
  /** Waits without blocking the event loop (the progressive sign-in slowdown); tests may record instead. */
  sleep?: (ms: number) => Promise<void>;
  /** A failed write of the refusals' counts into their audit records (they are written every minute). */
  onAuditError?: (err: unknown) => void;
}

/** What a session answer needs of the session: a row, or one being created (aal1, no extra methods). */
export type SessionForToken = Pick<sessions.SessionRow, 'id' | 'created_at'> & Partial<Pick<sessions.SessionRow, 'aal' | 'amr'>>;

export interface ClientInfo {
  ip: string | null;
  userAgent: string | null;
}

const MAX_USER_AGENT = 512;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS_ALL = /[\u0000-\u001f\u007f]/g;
const REFRESH_TOKEN_MIN = 12;
const REFRESH_TOKEN_MAX = 512;
/** Rotations a token may be behind the active one and still be led to it (within the reuse interval). */
const MAX_CHAIN_HOPS = 8;
/** Which of the user's sessions each logout scope ends, given the caller's session (§2.3). */
const LOGOUT_SCOPES: Record<string, (sessionId: string) => sessions.SessionSelection> = {
  global: () => 'all',
  local: (sessionId) => ({ only: sessionId }),
  others: (sessionId) => ({ except: sessionId }),
};

/** A client address the account signed in from (accountLimitKeys `known`): any count means known. */
const KNOWN_CLIENT: Limit = { max: 1, windowMs: KNOWN_CLIENT_WINDOW_MS };
const invalidCredentials = () => new AuthApiError(400, 'invalid_credentials', 'Invalid login credentials');
const tokenNotFound = () => new AuthApiError(400, 'refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found');

function rateLimited(retryAfter: number): AuthApiError {
  return new AuthApiError(429, 'over_request_rate_limit', 'Request rate limit reached', {}, { 'retry-after': String(retryAfter) });
}

/** The sign-in slowdown (signInDelayMs): 0.25 s, doubling with each further failure, at most 5 s. */
const SLOWDOWN_BASE_MS = 250;
const SLOWDOWN_MAX_MS = 5000;
/**
 * The account-wide failures that slow sign-in down are counted per hour, from every client together
 * (AUTH_ACCOUNT_WINDOW_SECONDS, the per-client window, when that is longer).
 */
const ACCOUNT_FAILURE_WINDOW_MS = 3_600_000;
/** How long a client refused again and again waits for its next 429 (pauseRepeatedRefusal). */
const REFUSAL_PAUSE_MS = 1000;
const MAX_PAUSED_REFUSALS = 1000;
/** Longest wait in an account's sign-in line (sign-in-line.ts): within REQUEST_TIMEOUT_MS's default 10 s. */
const SIGN_IN_LINE_MAX_WAIT_MS = 8_000;

/**
 * The pause before checking a password, given the account's failures from anywhere within the hour:
 * none until they exceed what one client may make (`perClientMax`), then 0.25 s doubling with each
 * further failure, at most 5 s. The paused checks of an account wait in one line (sign-in-line.ts),
 * so a stranger spreading guesses over many addresses is slowed down as a whole; the right password
 * still works.
 */
export function signInDelayMs(accountFailures: number, perClientMax: number): number {
  if (accountFailures < perClientMax) return 0;
  return Math.min(SLOWDOWN_MAX_MS, SLOWDOWN_BASE_MS * 2 ** Math.min(accountFailures - perClientMax, 16));
}

/** Reads back a user the transaction has just updated. */
async function reloadUser(trx: users.Db, id: string): Promise<users.AdminUserRow> {
  const user = await users.findUserById(trx, id);
  if (!user) throw new Error('the admin account was deleted during the update');
  return user;
}

/**
 * The rules of the admin auth service (sign-in, refresh rotation and reuse, logout scopes,
 * PUT /user). Input arrives parsed by the schemas of src/server/auth/auth-api.ts; the SQL is in
 * the *-repository.ts modules beside this file. § numbers point into the protocol document,
 * ../shared/docs/auth-protocol.md from the repository root.
 */
export class AuthService {
  private readonly db: Kysely<Database>;
  private readonly config: AppConfig['auth'];
  private readonly now: () => number;
  private readonly limits: RateLimitStore;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly chain: RefreshChain;
  private readonly signInAudit: SignInAudit;
  private readonly line = new SignInLine(SIGN_IN_LINE_MAX_WAIT_MS);
  /** Client addresses over the per-IP limit, until their window ends: refused without a database read. */
  private readonly ipsOver = overLimitMemo();
  private pausedRefusals = 0;
  /** The account-wide failures' window: per hour, from every client together. */
  private readonly accountWide: Limit;

  constructor(options: AuthServiceOptions) {
    this.db = options.db;
    this.config = options.config;
    this.now = options.now ?? Date.now;
    this.limits = options.limits ?? databaseStore(options.db, { now: this.now });
    this.sleep = options.sleep ?? ((ms) => delay(ms));
    this.chain = refreshChain(options.config);
    this.signInAudit = new SignInAudit(options.db, { now: this.now, onError: options.onAuditError });
    const { max, windowMs } = options.config.accountFailureLimit;
    this.accountWide = { max, windowMs: Math.max(ACCOUNT_FAILURE_WINDOW_MS, windowMs) };
  }

  /** Writes the refusal counts not yet in their audit records (the app calls it on close). */
  close(): Promise<void> {
    return this.signInAudit.close();
  }

  private nowIso(): string {
    return new Date(this.now()).toISOString();
  }

  /** POST /token?grant_type=password */
  async signInWithPassword(body: PasswordGrantBody, client: ClientInfo): Promise<SessionResponse> {
    const email = body.email?.trim() ?? '';
    const phone = body.phone?.trim() ?? '';
    const password = body.password ?? '';
    if (email !== '' && phone !== '') {
      throw new AuthApiError(400, 'validation_failed', 'Only an email address or phone number should be provided on login.');
    }
    if (email === '' && phone === '') throw new AuthApiError(400, 'validation_failed', 'missing email or phone');
    if (phone !== '') throw new AuthApiError(422, 'phone_provider_disabled', 'Phone logins are disabled');
    if (password === '') throw new AuthApiError(400, 'validation_failed', 'missing password');

    // Per IP: every attempt counts. Per account AND client (IP, IPv6 /64): every attempt counts
    // until a success resets it, so parallel guesses cannot slip past a check-then-count race, and
    // a stranger's guesses block only the stranger. Account-wide, failures from anywhere only slow
    // sign-in down, so the right password from another address still works (ASVS 2.2.1).
    // A client already over a limit is refused from a read (over the per-IP limit, from memory), and
    // its refusals of the window are one audit record with a count: a client looping on a refused
    // sign-in costs no write per request.
    const normalized = email.toLowerCase();
    const address = client.ip ? rateLimitAddress(client.ip) : '';
    const event: SignInEvent = { email: normalized.replace(CONTROL_CHARS_ALL, ''), ip: client.ip, client: address };
    if (address !== '') {
      const ipState = await hitUnlessOver(this.limits, limitKey('ip', address), this.config.ipAttemptLimit, { memo: this.ipsOver, now: this.now });
      if (ipState.remembered) await this.pauseRepeatedRefusal();
      if (ipState.over) await this.refuseSignIn(event, 'ip_rate_limited', ipState);
    }
    const keys = accountLimitKeys(normalized);
    const clientState = await hitUnlessOver(this.limits, keys.client(address), this.config.accountFailureLimit);
    if (clientState.over) await this.refuseSignIn(event, 'account_rate_limited', clientState);
    // Past the account's hourly failures, the check waits its turn in the account's line, unless this
    // client is one the account signed in from (then only its own pause: the owner is never refused).
    const slowdown = signInDelayMs((await this.limits.peek(keys.account, this.accountWide)).count, this.accountWide.max);
    const known = slowdown > 0 && (await this.limits.peek(keys.known(address), KNOWN_CLIENT)).count > 0;
    const checkPassword = async () => {
      // An address no admin can have (too long, control characters such as NUL, which PostgreSQL
      // text rejects) is not looked up, but still pays the same argon2 cost below.
      const lookupable = normalized.length <= MAX_EMAIL_LENGTH && !CONTROL_CHARS.test(normalized);
      const found = lookupable ? await users.findUserByEmail(this.db, normalized) : undefined;
      if (found && (await verifyPassword(found.password_hash, password))) return found;
      if (!found) await verifyAgainstDummy(password); // same argon2 cost for an unknown address
      await this.limits.hit(keys.account, this.accountWide);
      return null;
    };
    let user: users.AdminUserRow | null;
    if (slowdown === 0 || known) {
      if (slowdown > 0) await this.sleep(slowdown);
      user = await checkPassword();
    } else {
      const turn = await this.line.run(keys.account, slowdown, this.sleep, checkPassword);
      if ('busyForMs' in turn) await this.refuseSignIn(event, 'account_slowed', { count: 0, resetInMs: turn.busyForMs });
      user = 'done' in turn ? turn.done : null;
    }
    if (!user) {
      await this.signInAudit.failed(event);
      throw invalidCredentials();
    }

    // Only this client's counter: the account-wide failures keep slowing a stranger down until
    // their hour ends (or `npm run admin -- unlock`). The client is the account's for 30 days.
    await this.limits.reset(keys.client(address));
    await this.limits.reset(keys.known(address));
    await this.limits.hit(keys.known(address), KNOWN_CLIENT);
    const weak = await checkPasswordStrength(password, [user.email]);
    const { session, refreshToken, updatedUser } = await this.db.transaction().execute(async (trx) => {
      const at = this.nowIso();
      const session = {
        id: randomUUID(),
        user_id: user.id,
        created_at: at,
        updated_at: at,
        last_active_at: at,
        user_agent: client.userAgent?.slice(0, MAX_USER_AGENT) ?? null,
        ip_address: client.ip,
      };
      // Ended sessions of the account go now rather than lingering until they are presented.
      await this.deleteEndedSessions(trx, user.id);
      await sessions.insertSession(trx, session);
      const token = await this.issueRefreshToken(trx, session, null, at);
      await users.updateUser(trx, user.id, { last_sign_in_at: at });
      return { session, refreshToken: token, updatedUser: await reloadUser(trx, user.id) };
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

  /**
   * A client refused again and again (past its per-IP limit, and told so twice already) waits
   * REFUSAL_PAUSE_MS for its next 429: a client looping on a refused sign-in then sends about one
   * request a second per connection, instead of as many as the server can answer, each costing the
   * event loop what any answer costs (finding 2). At most MAX_PAUSED_REFUSALS wait at once; past
   * them the refusal is immediate (no memory held without bound).
   */
  private async pauseRepeatedRefusal(): Promise<void> {
    if (this.pausedRefusals >= MAX_PAUSED_REFUSALS) return;
    this.pausedRefusals += 1;
    try {
      await this.sleep(REFUSAL_PAUSE_MS);
    } finally {
      this.pausedRefusals -= 1;
    }
  }

  /** Audits a sign-in refused by a limit (counted into the client's record of the window) and throws its 429. */
  private async refuseSignIn(event: SignInEvent, reason: RefusalReason, state: WindowState): Promise<never> {
    await this.signInAudit.refused(event, reason, this.now() + state.resetInMs);
    throw rateLimited(retryAfterSeconds(state));
  }

  /** Deletes the user's sessions past their absolute lifetime or inactivity timeout. */
  private async deleteEndedSessions(db: users.Db, userId: string): Promise<number> {
    const now = this.now();
    const limits = sessionLimits(this.config);
    const iso = (ms: number) => new Date(ms).toISOString();
    return sessions.deleteExpiredSessions(db, userId, iso(now - limits.maxAgeSeconds * 1000), iso(now - limits.inactivitySeconds * 1000));
  }

  /** Stores a new refresh token of the session (its hash only) and returns the token itself. Also used by mfa.ts. */
  async issueRefreshToken(db: users.Db, session: Pick<sessions.SessionRow, 'id' | 'user_id'>, parentId: string | null, at: string, token = newRefreshToken()): Promise<string> {
    await refreshTokens.insertRefreshToken(db, {
      id: randomUUID(),
      token_hash: hashRefreshToken(token),
      session_id: session.id,
      user_id: session.user_id,
      parent_id: parentId,
      revoked_at: null,
      created_at: at,
      updated_at: at,
    });
    return token;
  }

  /**
   * A session answer: an access token whose `aal`/`amr` are recomputed from the session row, and the
   * user with its factors. Reads through this.db, so call it after the transaction. Also used by mfa.ts.
   */
  async sessionResponse(user: users.AdminUserRow, session: SessionForToken, refreshToken: string): Promise<SessionResponse> {
    const issuedAt = Math.floor(this.now() / 1000);
    const expiresIn = this.config.jwtExpirySeconds;
    const { token, expiresAt } = await signAccessToken(this.db, {
      userId: user.id,
      email: user.email,
      sessionId: session.id,
      userMetadata: parseJsonObject(user.user_metadata),
      role: user.role,
      ...sessionAssurance(session),
      issuedAt,
      expiresInSeconds: expiresIn,
    });
    return {
      access_token: token,
      token_type: 'bearer',
      expires_in: expiresIn,
      expires_at: expiresAt,
      refresh_token: refreshToken,
      user: userJson(user, await listUserFactors(this.db, user.id)),
    };
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

  /**
   * POST /token?grant_type=refresh_token: rotation with GoTrue's reuse rules (§6.2, §6.4), made
   * strict for issue 8:
   * 1. An active token is rotated: revoked, and its child (refresh-chain.ts) issued.
   * 2. A token rotated within AUTH_REFRESH_REUSE_SECONDS (several tabs refreshing at once, a lost
   *    response retried) gets the session's current token, the same one the first caller got, so
   *    every tab ends with a usable token and the session keeps one chain.
   * 3. Any other reuse, the parent of the active token included, is theft: the session is deleted,
   *    every time (GoTrue lets the parent of the active token through forever).
   * A session past its lifetime or inactivity timeout is deleted and answered 400 `session_expired`.
   */
  async refresh(body: RefreshGrantBody, client: ClientInfo): Promise<SessionResponse> {
    const presented = body.refresh_token ?? '';
    if (presented.length < REFRESH_TOKEN_MIN || presented.length > REFRESH_TOKEN_MAX) {
      throw new AuthApiError(400, 'validation_failed', 'Refresh token is not valid');
    }
    const found = await refreshTokens.findRefreshTokenByHash(this.db, hashRefreshToken(presented));
    if (!found) throw tokenNotFound();

    type Outcome =
      | { kind: 'issued'; user: users.AdminUserRow; session: sessions.SessionRow; refreshToken: string }
      | { kind: 'not_found' }
      | { kind: 'expired'; reason: 'timebox' | 'inactivity' }
      | { kind: 'already_used' };

    const outcome = await this.serialised(() => this.db.transaction().execute(async (trx): Promise<Outcome> => {
      const session = await sessions.lockSession(trx, found.session_id);
      if (!session) return { kind: 'not_found' };
      const row = await refreshTokens.findRefreshToken(trx, found.id);
      if (!row) return { kind: 'not_found' };
      const user = await users.findUserById(trx, session.user_id);
      if (!user) return { kind: 'not_found' };
      const state = sessionState(session, sessionLimits(this.config), this.now());
      if (state !== 'valid') {
        await sessions.deleteSessions(trx, session.user_id, { only: session.id });
        return { kind: 'expired', reason: state };
      }
      const at = this.nowIso();

      let refreshToken: string;
      if (row.revoked_at === null) {
        await refreshTokens.revokeRefreshToken(trx, row.id, at);
        refreshToken = await this.issueRefreshToken(trx, session, row.id, at, this.chain.child(presented));
      } else {
        // updated_at is the revocation time, as GoTrue's token.UpdatedAt.
        const revokedForMs = this.now() - new Date(toIsoTimestamp(row.updated_at)).getTime();
        if (revokedForMs > this.config.refreshReuseIntervalSeconds * 1000) {
          await refreshTokens.deleteSessionRefreshTokens(trx, session.id);
          await sessions.deleteSessions(trx, session.user_id, { only: session.id });
          return { kind: 'already_used' };
        }
        // The current token down the chain; a token issued outside the chain (a rotation by MFA
        // verification) cannot be derived, so such a caller gets a branch as in GoTrue.
        refreshToken = (await this.currentChainToken(trx, session.id, row.id, presented)) ?? (await this.issueRefreshToken(trx, session, row.id, at));
      }
      const updatedSession: sessions.SessionRow = {
        ...session,
        updated_at: at,
        ip_address: client.ip ?? session.ip_address,
        user_agent: client.userAgent?.slice(0, MAX_USER_AGENT) ?? session.user_agent,
      };
      await sessions.updateSession(trx, session.id, {
        updated_at: at,
        ip_address: updatedSession.ip_address,
        user_agent: updatedSession.user_agent,
      });
      return { kind: 'issued', user, session: updatedSession, refreshToken };
    }));

    if (outcome.kind === 'not_found') throw tokenNotFound();
    if (outcome.kind === 'expired') {
      const suffix = outcome.reason === 'inactivity' ? ' (Inactivity)' : '';
      throw new AuthApiError(400, 'session_expired', `Invalid Refresh Token: Session Expired${suffix}`);
    }
    if (outcome.kind === 'already_used') {
      throw new AuthApiError(400, 'refresh_token_already_used', 'Invalid Refresh Token: Already Used');
    }
    return this.sessionResponse(outcome.user, outcome.session, outcome.refreshToken);
  }

  /**
   * Follows the chain from a revoked token to the session's active token and returns that token,
   * or null when a link was not issued by the chain (or the chain is unusually long).
   */
  private async currentChainToken(db: users.Db, sessionId: string, fromId: string, fromToken: string): Promise<string | null> {
    let token = fromToken;
    let id = fromId;
    for (let hop = 0; hop < MAX_CHAIN_HOPS; hop++) {
      const childToken = this.chain.child(token);
      const child = await refreshTokens.findRefreshTokenRowByHash(db, hashRefreshToken(childToken));
      if (!child || child.session_id !== sessionId || child.parent_id !== id) return null;
      if (child.revoked_at === null) return childToken;
      token = childToken;
      id = child.id;
    }
    return null;
  }

  /**
   * POST /logout?scope=…. Security review, finding 4: a session without the second factor (aal1) of
   * an admin who has a verified factor is what a password alone gets, so it may end only itself:
   * `global` and `others` are carried out as `local`, and answered 204 like any sign-out (auth-js
   * ignores a 401/403/404 here and clears its session anyway, so a refusal would tell nobody
   * anything while the caller's own session is what must go). The audit entry says so.
   */
  async logout(auth: AuthSuccess, scopeInput: LogoutScope, client: ClientInfo): Promise<void> {
    const scope = scopeInput === undefined || scopeInput === '' ? 'global' : scopeInput;
    const selection = typeof scope === 'string' && Object.hasOwn(LOGOUT_SCOPES, scope) ? LOGOUT_SCOPES[scope] : undefined;
    if (typeof scope !== 'string' || !selection) {
      const shown = typeof scope === 'string' ? scope.slice(0, 64) : String(scope);
      throw new AuthApiError(400, 'validation_failed', `Unsupported logout scope "${shown}"`);
    }
    const limited = scope !== 'local' && !isAal2(auth) && (await hasVerifiedFactor(this.db, auth.user.id));
    const ended = await sessions.deleteSessions(this.db, auth.user.id, limited ? { only: auth.session.id } : selection(auth.session.id));
    await recordAudit(this.db, {
      action: 'sign_out',
      actorEmail: auth.user.email,
      actorId: auth.user.id,
      ip: client.ip,
      detail: { scope, session_id: auth.session.id, sessions_ended: ended, ...(limited ? { scope_applied: 'local', reason: 'aal1_session' } : {}) },
    });
  }

  /** PUT /user */
  async updateUser(auth: AuthSuccess, body: UpdateUserBody): Promise<GoTrueUser> {
    // Per session (a new session takes the password, and MFA where enrolled), counted before
    // anything is checked: it bounds guesses of current_password from a stolen session.
    const updateLimit = await this.limits.hit(limitKey('user_update', auth.session.id), this.config.userUpdateLimit);
    if (updateLimit.count > this.config.userUpdateLimit.max) throw rateLimited(retryAfterSeconds(updateLimit));
    const updates = await userUpdates(auth.user, body);
    if (updates.user_metadata === undefined && updates.password_hash === undefined) return userJson(auth.user);
    const user = await this.db.transaction().execute(async (trx) => {
      await users.updateUser(trx, auth.user.id, { ...updates, updated_at: this.nowIso() });
      if (updates.password_hash !== undefined) {
        // A new password signs every other device out; this session stays.
        await sessions.deleteSessions(trx, auth.user.id, { except: auth.session.id });
      }
      return reloadUser(trx, auth.user.id);
    });
    return userJson(user);
  }
}
