import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { recordAudit, type AuditAction } from '../audit/audit-log.js';
import { isUniqueViolation, toIsoTimestamp } from '../db/database.js';
import type { Database } from '../db/schema.js';
import type { MailService, OutboxMessage } from '../mail/index.js';
import { limitKey, retryAfterSeconds, type Limit, type RateLimitStore } from '../rate-limit/index.js';
import { AdminAccountError } from './admins.js';
import { isAal2, type AuthSuccess } from './authenticate.js';
import { AuthApiError } from './errors.js';
import * as factors from './factors-repository.js';
import { deleteUserRefreshTokens, deleteSessionRefreshTokens } from './refresh-tokens-repository.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { AuthService, ClientInfo } from './service.js';
import { deleteSessions, findUserSession } from './sessions-repository.js';
import { matchTotpStep, newTotp } from './totp.js';
import { storedAmr, UUID_RE, type AmrEntry } from './tokens.js';
import { findUserById, findUserIdByEmail } from './users-repository.js';
import type {
  ChallengeResponse,
  EnrollFactorBody,
  EnrollFactorResponse,
  SessionResponse,
  VerifyFactorBody,
} from './auth-api.js';

/** GoTrue's MFA defaults (auth-mfa.md). */
const MAX_FACTORS = 10;
const CHALLENGE_LIFETIME_SECONDS = 300;
const UNVERIFIED_FACTOR_LIFETIME_SECONDS = 300;
/** Challenge and verify: 15 per minute each, per user. */
const MFA_LIMIT: Limit = { max: 15, windowMs: 60_000 };
/** Wrong codes a challenge takes before it is used up (a new challenge is needed). */
export const MAX_CHALLENGE_FAILURES = 5;
/** Wrong codes an account takes within FAILURE_WINDOW_MS before its verification is refused. */
export const MAX_ACCOUNT_FAILURES = 10;
/** The wrong code within FAILURE_WINDOW_MS at which the admin is warned by e-mail. */
export const ALERT_AT_FAILURES = 5;
export const FAILURE_WINDOW_MS = 60 * 60_000;
/** Our own caps (GoTrue has none): these strings end up in the database and the QR code. */
const MAX_NAME_LENGTH = 256;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

export interface MfaServiceOptions {
  db: Kysely<Database>;
  secretBox: SecretBox;
  /** The shared rate-limit store (app.rateLimits.signIn), with keys of its own. */
  limits: RateLimitStore;
  /** Mints the session answers and refresh tokens. */
  auth: AuthService;
  /** app.mail: the wrong-codes warning goes through the outbox (none when e-mail is off). */
  mail?: Pick<MailService, 'enabled' | 'enqueue'>;
  now?: () => number;
}

const factorNotFound = () => new AuthApiError(404, 'mfa_factor_not_found', 'Factor not found');
const ipMismatch = () => new AuthApiError(422, 'mfa_ip_address_mismatch', 'Challenge and verify IP addresses mismatch.');
const verificationFailed = () => new AuthApiError(422, 'mfa_verification_failed', 'Invalid TOTP code entered');
/** GoTrue's answer to an expired challenge, also given once a challenge has taken MAX_CHALLENGE_FAILURES wrong codes. */
const challengeExpired = (id: string) =>
  new AuthApiError(422, 'mfa_challenge_expired', `MFA challenge ${id} has expired, verify against another challenge or create a new challenge.`);
/** GoTrue's answer to too many requests (429 over_request_rate_limit), with Retry-After. */
const accountLocked = (retryAfter: number) =>
  new AuthApiError(
    429,
    'over_request_rate_limit',
    `Too many invalid codes: two-factor verification is locked for this account for ${Math.ceil(retryAfter / 60)} more minute(s).`,
    {},
    { 'retry-after': String(retryAfter) },
  );

/**
 * The warning to the admin at the ALERT_AT_FAILURES-th wrong code within an hour: only someone who
 * knows the password gets as far as the code step.
 */
function wrongCodesAlert(email: string, ip: string | null, at: string): OutboxMessage {
  return {
    kind: 'mfa_alert',
    to: email,
    subject: 'Someone is trying codes to sign in to your admin account',
    text: [
      `${ALERT_AT_FAILURES} wrong two-factor codes were entered for the admin account ${email} within an hour, the last one at ${at}${ip ? ` from ${ip}` : ''}.`,
      '',
      'Only someone who knows your password can get as far as the code. If that was not you, someone who knows your password is trying codes: change it now.',
      `After ${MAX_ACCOUNT_FAILURES} wrong codes within an hour, two-factor verification is refused for the rest of that hour.`,
      '',
    ].join('\n'),
  };
}

/** The sealing context of a factor's secret: a sealed secret copied to another row does not open. */
export const totpSecretContext = (factorId: string) => `totp:${factorId}`;

/** Whether the user has a verified factor, and so needs aal2 for the admin API. */
export function userHasVerifiedFactor(db: Kysely<Database>, userId: string): Promise<boolean> {
  return factors.hasVerifiedFactor(db, userId);
}

/**
 * The /auth/v1/factors endpoints, GoTrue's TOTP rules (reference: ../shared/docs/auth-mfa.md from
 * the repository root; GoTrue's internal/api/mfa.go). The SQL is in factors-repository.ts.
 */
export class MfaService {
  private readonly db: Kysely<Database>;
  private readonly box: SecretBox;
  private readonly limits: RateLimitStore;
  private readonly auth: AuthService;
  private readonly mail: Pick<MailService, 'enabled' | 'enqueue'> | undefined;
  private readonly now: () => number;

  constructor(options: MfaServiceOptions) {
    this.db = options.db;
    this.box = options.secretBox;
    this.limits = options.limits;
    this.auth = options.auth;
    this.mail = options.mail;
    this.now = options.now ?? Date.now;
  }

  private isoAgo(seconds: number): string {
    return new Date(this.now() - seconds * 1000).toISOString();
  }

  private async limit(kind: 'challenge' | 'verify', userId: string): Promise<void> {
    const state = await this.limits.hit(limitKey('account', `mfa_${kind}:${userId}`), MFA_LIMIT);
    if (state.count > MFA_LIMIT.max) {
      throw new AuthApiError(429, 'over_request_rate_limit', 'Request rate limit reached', {}, { 'retry-after': String(retryAfterSeconds(state)) });
    }
  }

  /** GoTrue's loadFactor: the caller's own factor, by the id in the path. */
  private async ownFactor(auth: AuthSuccess, factorId: string): Promise<factors.FactorRow> {
    if (!UUID_RE.test(factorId)) throw new AuthApiError(404, 'validation_failed', 'factor_id must be an UUID');
    // Ids are stored lower-case (SQLite compares text case-sensitively, PostgreSQL's uuid does not).
    const factor = await factors.findUserFactor(this.db, factorId.toLowerCase(), auth.user.id);
    if (!factor) throw factorNotFound();
    return factor;
  }

  /** POST /factors */
  async enroll(auth: AuthSuccess, body: EnrollFactorBody, client: ClientInfo, host: string): Promise<EnrollFactorResponse> {
    const factorType = body.factor_type ?? '';
    if (factorType === 'phone') throw new AuthApiError(422, 'mfa_phone_enroll_not_enabled', 'MFA enroll is disabled for Phone');
    if (factorType === 'webauthn') throw new AuthApiError(422, 'mfa_web_authn_enroll_not_enabled', 'MFA enroll is disabled for WebAuthn');
    if (factorType !== 'totp') throw new AuthApiError(400, 'validation_failed', 'factor_type needs to be totp, phone, or webauthn');
    const friendlyName = body.friendly_name ?? '';
    const issuer = body.issuer || host;
    if (friendlyName.length > MAX_NAME_LENGTH || issuer.length > MAX_NAME_LENGTH) {
      throw new AuthApiError(400, 'validation_failed', `friendly_name and issuer cannot be longer than ${MAX_NAME_LENGTH} characters`);
    }
    // PostgreSQL text refuses NUL, and control characters have no place in a name shown to the admin.
    if (CONTROL_CHARS.test(friendlyName) || CONTROL_CHARS.test(issuer)) {
      throw new AuthApiError(400, 'validation_failed', 'friendly_name and issuer cannot contain control characters');
    }

    const totp = await newTotp(issuer, auth.user.email);
    const id = randomUUID();
    const at = new Date(this.now()).toISOString();
    try {
      await this.db.transaction().execute(async (trx) => {
        await factors.lockUserFactors(trx, auth.user.id);
        await factors.deleteExpiredFactors(trx, this.isoAgo(UNVERIFIED_FACTOR_LIFETIME_SECONDS));
        const existing = await factors.listUserFactors(trx, auth.user.id);
        if (existing.some((f) => f.friendly_name === friendlyName)) throw nameConflict(friendlyName);
        if (existing.length >= MAX_FACTORS) {
          throw new AuthApiError(422, 'too_many_enrolled_mfa_factors', 'Maximum number of verified factors reached, unenroll to continue');
        }
        if (existing.some((f) => f.status === 'verified') && !isAal2(auth)) {
          throw new AuthApiError(403, 'insufficient_aal', 'AAL2 required to enroll a new factor');
        }
        await factors.insertFactor(trx, {
          id,
          user_id: auth.user.id,
          friendly_name: friendlyName,
          factor_type: 'totp',
          status: 'unverified',
          secret: this.box.seal(totp.secret, totpSecretContext(id)),
          created_at: at,
          updated_at: at,
          last_challenged_at: null,
          last_verified_step: null,
        });
        await recordAudit(trx, { action: 'mfa_enroll', actorEmail: auth.user.email, actorId: auth.user.id, ip: client.ip, detail: { factor_id: id } });
      });
    } catch (err) {
      // Two enrolments with one name at once: the unique index decides.
      if (isUniqueViolation(err)) throw nameConflict(friendlyName);
      throw err;
    }
    return { id, type: 'totp', friendly_name: friendlyName, totp: { qr_code: totp.qrCode, secret: totp.secret, uri: totp.uri } };
  }

  /** POST /factors/{id}/challenge: the body is ignored for TOTP. */
  async challenge(auth: AuthSuccess, factorId: string, client: ClientInfo): Promise<ChallengeResponse> {
    await this.limit('challenge', auth.user.id);
    const factor = await this.ownFactor(auth, factorId);
    const createdAt = this.now();
    const id = randomUUID();
    await factors.insertChallenge(this.db, { id, factor_id: factor.id, ip_address: client.ip ?? '', created_at: new Date(createdAt).toISOString(), verified_at: null });
    return { id, type: 'totp', expires_at: Math.floor(createdAt / 1000) + CHALLENGE_LIFETIME_SECONDS };
  }

  /**
   * POST /factors/{id}/verify: a new aal2 session answer (auth-mfa.md "Verify"). Everything runs
   * under the user's lock, the one enrolment takes (finding 8), so two verifications, or a
   * verification and an enrolment, never decide on the same state at once. Beyond GoTrue
   * (finding 1): a challenge is used up after MAX_CHALLENGE_FAILURES wrong codes (answered as
   * expired: a new challenge is needed), and after MAX_ACCOUNT_FAILURES wrong codes within an hour
   * the account's verification is refused (429) until the hour has passed or `npm run admin --
   * unlock`; at the ALERT_AT_FAILURES-th wrong code within an hour the admin is warned by e-mail
   * (queued in the same transaction). Each of these is an audit entry.
   */
  async verify(auth: AuthSuccess, factorId: string, body: VerifyFactorBody, client: ClientInfo): Promise<SessionResponse> {
    await this.limit('verify', auth.user.id);
    await this.ownFactor(auth, factorId);
    const code = body.code ?? '';
    if (code === '') throw new AuthApiError(400, 'validation_failed', 'Code needs to be non-empty');

    type Outcome = { ok: true; refreshToken: string } | { ok: false; error: AuthApiError };
    const outcome = await this.db.transaction().execute(async (trx): Promise<Outcome> => {
      await factors.lockUserFactors(trx, auth.user.id);
      const nowMs = this.now();
      const at = new Date(nowMs).toISOString();
      const windowStart = new Date(nowMs - FAILURE_WINDOW_MS).toISOString();
      const audit = (action: AuditAction, detail: Record<string, unknown>) =>
        recordAudit(trx, { action, actorEmail: auth.user.email, actorId: auth.user.id, ip: client.ip, detail });

      const recent = await factors.accountFailuresSince(trx, auth.user.id, windowStart);
      if (recent.length >= MAX_ACCOUNT_FAILURES) {
        // The lock lifts when the oldest of the last MAX_ACCOUNT_FAILURES leaves the hour.
        const liftsAt = Date.parse(recent[recent.length - MAX_ACCOUNT_FAILURES]!) + FAILURE_WINDOW_MS;
        await audit('mfa_verify_refused', { factor_id: factorId.toLowerCase(), reason: 'too_many_failures', failures: recent.length, until: new Date(liftsAt).toISOString() });
        return { ok: false, error: accountLocked(Math.max(1, Math.ceil((liftsAt - nowMs) / 1000))) };
      }

      // Read again under the lock: another request may have verified or deleted it meanwhile.
      const factor = await factors.findUserFactor(trx, factorId.toLowerCase(), auth.user.id);
      if (!factor) return { ok: false, error: factorNotFound() };
      const challenge = body.challenge_id ? await factors.findChallenge(trx, body.challenge_id, factor.id) : undefined;
      if (!challenge) return { ok: false, error: new AuthApiError(422, 'mfa_factor_not_found', 'MFA factor with the provided challenge ID not found') };
      if (challenge.verified_at !== null || challenge.ip_address !== (client.ip ?? '')) return { ok: false, error: ipMismatch() };
      const expiresAtMs = new Date(toIsoTimestamp(challenge.created_at)).getTime() + CHALLENGE_LIFETIME_SECONDS * 1000;
      if (nowMs > expiresAtMs) {
        await factors.deleteChallenge(trx, challenge.id);
        return { ok: false, error: challengeExpired(challenge.id) };
      }
      const challengeFailures = await factors.countChallengeFailures(trx, challenge.id);
      if (challengeFailures >= MAX_CHALLENGE_FAILURES) return { ok: false, error: challengeExpired(challenge.id) };
      // A second factor is added only from a session that has passed the first one (finding 8).
      if (factor.status !== 'verified' && !isAal2(auth) && (await factors.hasVerifiedFactor(trx, auth.user.id))) {
        return { ok: false, error: new AuthApiError(403, 'insufficient_aal', 'AAL2 required to enroll a new factor') };
      }

      const step = matchTotpStep(this.box.open(factor.secret, totpSecretContext(factor.id)), code, nowMs);
      const lastStep = factor.last_verified_step === null ? null : Number(factor.last_verified_step);
      if (step === null || (lastStep !== null && step <= lastStep)) {
        // A code is good once: a step at or before the last accepted one is refused like a wrong code.
        await factors.insertFailure(trx, { id: randomUUID(), user_id: auth.user.id, factor_id: factor.id, challenge_id: challenge.id, ip_address: client.ip, created_at: at }, windowStart);
        const accountFailures = recent.length + 1;
        const ids = { factor_id: factor.id, challenge_id: challenge.id };
        // ASVS 2.8.5: a reused code is told apart from a wrong one in the log.
        await audit('mfa_verify_failed', { ...ids, reason: step === null ? 'wrong_code' : 'code_reused', challenge_failures: challengeFailures + 1, account_failures: accountFailures });
        if (challengeFailures + 1 === MAX_CHALLENGE_FAILURES) await audit('mfa_challenge_exhausted', { ...ids, failures: MAX_CHALLENGE_FAILURES });
        if (accountFailures === ALERT_AT_FAILURES && this.mail?.enabled) {
          const queued = await this.mail.enqueue(trx, wrongCodesAlert(auth.user.email, client.ip, at));
          await audit('mfa_alert_queued', { ...ids, failures: accountFailures, message_id: queued?.messageId ?? null });
        }
        if (accountFailures === MAX_ACCOUNT_FAILURES) {
          await audit('mfa_locked', { ...ids, failures: accountFailures, until: new Date(Date.parse(recent[0] ?? at) + FAILURE_WINDOW_MS).toISOString() });
        }
        return { ok: false, error: verificationFailed() };
      }

      if (!(await factors.consumeChallenge(trx, challenge.id, at))) return { ok: false, error: ipMismatch() };
      if (!(await factors.acceptFactorStep(trx, factor.id, step, at))) return { ok: false, error: verificationFailed() };
      const session = await findUserSession(trx, auth.session.id, auth.user.id);
      if (!session) return { ok: false, error: new AuthApiError(403, 'session_not_found', 'Session from session_id claim in JWT does not exist') };
      const amr: AmrEntry[] = [
        { method: 'totp', timestamp: Math.floor(nowMs / 1000) },
        ...storedAmr(session.amr).filter((entry) => entry.method !== 'totp'),
      ];
      await factors.raiseSession(trx, session.id, factor.id, JSON.stringify(amr), at);
      // The aal1 refresh tokens of this session must not mint aal2 sessions: they go, a new one comes.
      await deleteSessionRefreshTokens(trx, session.id);
      const token = await this.auth.issueRefreshToken(trx, session, null, at);
      const ended = await factors.deleteOtherAal1Sessions(trx, auth.user.id, session.id);
      await factors.deleteOtherUnverifiedFactors(trx, auth.user.id, factor.id);
      await audit('mfa_verify', { factor_id: factor.id, challenge_id: challenge.id, session_id: session.id, sessions_ended: ended });
      return { ok: true, refreshToken: token };
    });
    if (!outcome.ok) throw outcome.error;

    const [user, session] = await Promise.all([findUserById(this.db, auth.user.id), findUserSession(this.db, auth.session.id, auth.user.id)]);
    if (!user || !session) throw new AuthApiError(403, 'session_not_found', 'Session from session_id claim in JWT does not exist');
    return this.auth.sessionResponse(user, session, outcome.refreshToken);
  }

  /** DELETE /factors/{id} */
  async unenroll(auth: AuthSuccess, factorId: string, client: ClientInfo): Promise<{ id: string }> {
    const factor = await this.ownFactor(auth, factorId);
    if (factor.status === 'verified' && auth.session.aal !== 'aal2') {
      throw new AuthApiError(422, 'insufficient_aal', 'AAL2 required to unenroll verified factor');
    }
    await this.db.transaction().execute(async (trx) => {
      await factors.deleteFactor(trx, factor.id);
      await factors.downgradeFactorSessions(trx, factor.id);
      await recordAudit(trx, {
        action: 'mfa_unenroll',
        actorEmail: auth.user.email,
        actorId: auth.user.id,
        ip: client.ip,
        detail: { factor_id: factor.id, factor_status: factor.status, session_id: auth.session.id },
      });
    });
    return { id: factor.id };
  }
}

function nameConflict(name: string): AuthApiError {
  return new AuthApiError(422, 'mfa_factor_name_conflict', `A factor with the friendly name ${JSON.stringify(name)} for this user already exists`);
}

/**
 * `npm run admin -- reset-mfa EMAIL`: the recovery path when an admin lost the authenticator. Deletes
 * every factor of the admin and signs all of its sessions out, in one transaction.
 */
export async function resetMfa(db: Kysely<Database>, email: string): Promise<{ factors: number; sessions: number }> {
  return db.transaction().execute(async (trx) => {
    const id = await findUserIdByEmail(trx, email);
    if (id === undefined) throw new AdminAccountError('not_found', `No admin with the e-mail ${email}.`);
    const removed = await factors.deleteUserFactors(trx, id);
    await deleteUserRefreshTokens(trx, id);
    const ended = await deleteSessions(trx, id, 'all');
    await recordAudit(trx, { action: 'mfa_reset', actorEmail: email, actorId: id, ip: null, detail: { factors_deleted: removed, sessions_ended: ended, by: 'cli' } });
    return { factors: removed, sessions: ended };
  });
}
