import { randomUUID } from 'node:crypto';
import { isAuthApiError } from '@supabase/auth-js';
import type { LightMyRequestResponse } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { totpSecretContext } from '../../../src/server/auth/mfa.js';
import { run as adminCli } from '../../../src/server/cli/admin.js';
import { authBaseUrl, authJsClient } from '../../support/auth-js-client.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { runCliInProcess } from '../../support/server-process.js';
import { startSmtpServer } from '../../support/smtp.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Security review, findings 1 and 8: a 6-digit code cannot be guessed (5 wrong codes use a challenge
 * up, 10 within an hour lock the account's verification, the admin is warned by e-mail at the
 * fifth), and a second factor cannot be slipped in from a password-only session or by a race.
 */

const PASSWORD = 'correct-Horse-battery-42';
const IP = '198.51.100.30';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface Session {
  access_token: string;
  user: { id: string };
}

const totpOf = (secret: string) => new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) });
const codeFor = (secret: string) => totpOf(secret).generate();
/** A code none of the accepted steps (previous, current, next) shows. */
function wrongCode(secret: string): string {
  const valid = new Set([-1, 0, 1].map((s) => totpOf(secret).generate({ timestamp: Date.now() + s * 30_000 })));
  for (let n = 0; ; n += 1) if (!valid.has(String(n).padStart(6, '0'))) return String(n).padStart(6, '0');
}

describe.each(TEST_DIALECTS)('second-factor codes (%s)', (dialect: TestDialect) => {
  let t: TestApp;
  let admins = 0;

  async function start(env: Record<string, string> = {}): Promise<void> {
    t = await createTestApp({ AUTH_IP_MAX_ATTEMPTS: '1000', ...env }, { dialect, mailWorker: { pollIntervalMs: 3_600_000 } });
    cleanups.push(() => t.close());
  }

  function call(method: 'POST' | 'GET', url: string, token?: string, body?: unknown): Promise<LightMyRequestResponse> {
    return t.app.inject({
      method,
      url,
      remoteAddress: IP,
      headers: { 'content-type': 'application/json', 'x-supabase-api-version': '2024-01-01', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  }
  async function signIn(email: string): Promise<Session> {
    const res = await call('POST', '/auth/v1/token?grant_type=password', undefined, { email, password: PASSWORD });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Session;
  }
  async function enroll(token: string, name = ''): Promise<{ id: string; secret: string }> {
    const res = await call('POST', '/auth/v1/factors', token, { factor_type: 'totp', friendly_name: name });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { id: string; totp: { secret: string } };
    return { id: body.id, secret: body.totp.secret };
  }
  async function challenge(token: string, factorId: string): Promise<string> {
    const res = await call('POST', `/auth/v1/factors/${factorId}/challenge`, token, {});
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { id: string }).id;
  }
  const verify = (token: string, factorId: string, challengeId: string, code: string) =>
    call('POST', `/auth/v1/factors/${factorId}/verify`, token, { challenge_id: challengeId, code });
  function expectError(res: LightMyRequestResponse, status: number, code: string): void {
    expect(res.statusCode, res.body).toBe(status);
    expect(res.headers['x-supabase-api-version']).toBe('2024-01-01');
    expect((res.json() as { code: string }).code).toBe(code);
  }
  /** Forget the last accepted step, so the current code can be entered again in the same 30 s. */
  const forgetStep = (factorId: string) => t.app.database.db.updateTable('admin_mfa_factors').set({ last_verified_step: null }).where('id', '=', factorId).execute();

  /** An admin with a verified factor, and a fresh password-only (aal1) session of it. */
  async function mfaAdmin(): Promise<{ email: string; factor: { id: string; secret: string }; aal1: Session; aal2: Session }> {
    admins += 1;
    const email = `codes${admins}@example.com`;
    await createAdmin(t.app.database.db, email, PASSWORD);
    const first = await signIn(email);
    const factor = await enroll(first.access_token);
    const ok = await rightCode(first, factor);
    expect(ok.statusCode, ok.body).toBe(200);
    await forgetStep(factor.id);
    return { email, factor, aal1: await signIn(email), aal2: ok.json() as Session };
  }
  /** A new challenge answered with the factor's current code. */
  const rightCode = async (session: Session, factor: { id: string; secret: string }) =>
    verify(session.access_token, factor.id, await challenge(session.access_token, factor.id), codeFor(factor.secret));
  /** Two challenges, five wrong codes each: the account's limit within the hour. */
  async function tenWrongCodes(session: Session, factor: { id: string; secret: string }): Promise<void> {
    for (let round = 0; round < 2; round += 1) {
      const c = await challenge(session.access_token, factor.id);
      for (let i = 0; i < 5; i += 1) expectError(await verify(session.access_token, factor.id, c, wrongCode(factor.secret)), 422, 'mfa_verification_failed');
    }
  }
  async function auditOf(userId: string, action: string) {
    const rows = await t.app.database.db.selectFrom('audit_log').select('detail').where('action', '=', action).where('actor_id', '=', userId).orderBy('created_at').execute();
    return rows.map((r) => JSON.parse(r.detail) as Record<string, unknown>);
  }

  it('a challenge takes 5 wrong codes, then it is used up (mfa_challenge_expired) and a new one is needed', async () => {
    await start();
    const { factor, aal1 } = await mfaAdmin();
    const c = await challenge(aal1.access_token, factor.id);
    for (let i = 0; i < 5; i += 1) expectError(await verify(aal1.access_token, factor.id, c, wrongCode(factor.secret)), 422, 'mfa_verification_failed');
    // Even the right code no longer opens it.
    expectError(await verify(aal1.access_token, factor.id, c, codeFor(factor.secret)), 422, 'mfa_challenge_expired');
    expect((await auditOf(aal1.user.id, 'mfa_verify_failed')).map((d) => d.challenge_failures)).toEqual([1, 2, 3, 4, 5]);
    expect(await auditOf(aal1.user.id, 'mfa_challenge_exhausted')).toEqual([{ factor_id: factor.id, challenge_id: c, failures: 5 }]);
    // A new challenge with the right code works (5 wrong codes are below the account's limit).
    const fresh = await rightCode(aal1, factor);
    expect(fresh.statusCode, fresh.body).toBe(200);
  });

  it('10 wrong codes within an hour lock verification (429, Retry-After) until the hour has passed', async () => {
    await start();
    const { email, factor, aal1 } = await mfaAdmin();
    await tenWrongCodes(aal1, factor);
    const locked = await rightCode(aal1, factor);
    expectError(locked, 429, 'over_request_rate_limit');
    const retryAfter = Number(locked.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(await auditOf(aal1.user.id, 'mfa_locked')).toEqual([expect.objectContaining({ factor_id: factor.id, failures: 10, until: expect.any(String) })]);
    expect(await auditOf(aal1.user.id, 'mfa_verify_refused')).toEqual([expect.objectContaining({ reason: 'too_many_failures', failures: 10 })]);
    // Another session of the same account is refused too (the count is the account's).
    const other = await signIn(email);
    expectError(await rightCode(other, factor), 429, 'over_request_rate_limit');

    // An hour later (the failures' times moved back), the right code works again.
    await t.app.database.db.updateTable('admin_mfa_failures').set({ created_at: new Date(Date.now() - 3_601_000).toISOString() }).where('user_id', '=', aal1.user.id).execute();
    const later = await rightCode(other, factor);
    expect(later.statusCode, later.body).toBe(200);
  });

  it('npm run admin -- unlock opens a locked verification at once', async () => {
    await start();
    const { email, factor, aal1 } = await mfaAdmin();
    await tenWrongCodes(aal1, factor);
    expectError(await rightCode(aal1, factor), 429, 'over_request_rate_limit');
    const res = await runCliInProcess(adminCli, ['unlock', email], { env: { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe(`Sign-in counters cleared for ${email} in the database.\n10 wrong two-factor codes forgotten: code verification is open again.\n`);
    expect(await auditOf(aal1.user.id, 'unlock')).toEqual([{ by: 'cli', mfa_failures_cleared: 10 }]);
    const ok = await rightCode(aal1, factor);
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('with SMTP, the fifth wrong code within an hour queues one warning to the admin, in the same transaction, and it is sent', async () => {
    const smtp = await startSmtpServer();
    cleanups.push(() => smtp.close());
    await start({ SMTP_URL: smtp.url, MAIL_FROM: 'Product <hello@example.com>', PUBLIC_URL: 'https://waitlist.example.com' });
    const { email, factor, aal1 } = await mfaAdmin();
    const alerts = () => t.app.database.db.selectFrom('mail_outbox').select(['to_address', 'subject', 'text_body', 'kind']).where('kind', '=', 'mfa_alert').execute();
    const c1 = await challenge(aal1.access_token, factor.id);
    for (let i = 0; i < 4; i += 1) await verify(aal1.access_token, factor.id, c1, wrongCode(factor.secret));
    expect(await alerts()).toEqual([]);
    // The fifth: its failure, its audit entry and the message are one transaction (the row is there when the answer is).
    expectError(await verify(aal1.access_token, factor.id, c1, wrongCode(factor.secret)), 422, 'mfa_verification_failed');
    const queued = await alerts();
    expect(queued).toEqual([{ kind: 'mfa_alert', to_address: email, subject: 'Someone is trying codes to sign in to your admin account', text_body: expect.stringContaining('someone who knows your password is trying codes: change it') }]);
    expect(queued[0]!.text_body).toContain(IP);
    expect(await auditOf(aal1.user.id, 'mfa_alert_queued')).toEqual([expect.objectContaining({ factor_id: factor.id, failures: 5, message_id: expect.stringMatching(/^<.+@waitlist\.example\.com>$/) })]);
    // Further wrong codes in the hour do not repeat it.
    const c2 = await challenge(aal1.access_token, factor.id);
    for (let i = 0; i < 3; i += 1) await verify(aal1.access_token, factor.id, c2, wrongCode(factor.secret));
    expect(await alerts()).toHaveLength(1);

    for (let i = 0; i < 5 && (await t.app.mail.worker!.runOnce()) > 0; i += 1);
    expect(smtp.messages.map((m) => [m.to, m.header('subject')])).toEqual([[[email], 'Someone is trying codes to sign in to your admin account']]);
  });

  it('without SMTP, no warning is queued (and the limits hold the same)', async () => {
    await start();
    const { factor, aal1 } = await mfaAdmin();
    const c = await challenge(aal1.access_token, factor.id);
    for (let i = 0; i < 5; i += 1) await verify(aal1.access_token, factor.id, c, wrongCode(factor.secret));
    expect(await t.app.database.db.selectFrom('mail_outbox').select('id').execute()).toEqual([]);
    expect(await auditOf(aal1.user.id, 'mfa_alert_queued')).toEqual([]);
  });

  it('auth-js sees GoTrue errors: 422 mfa_challenge_expired for a used-up challenge, 429 over_request_rate_limit when locked', async () => {
    await start();
    const { email, factor } = await mfaAdmin();
    const { auth } = authJsClient(await authBaseUrl(t.app));
    expect((await auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    const c = await auth.mfa.challenge({ factorId: factor.id });
    for (let i = 0; i < 5; i += 1) {
      const { error } = await auth.mfa.verify({ factorId: factor.id, challengeId: c.data!.id, code: wrongCode(factor.secret) });
      expect(isAuthApiError(error) && [error.status, error.code]).toEqual([422, 'mfa_verification_failed']);
    }
    const used = await auth.mfa.verify({ factorId: factor.id, challengeId: c.data!.id, code: codeFor(factor.secret) });
    expect(isAuthApiError(used.error) && [used.error.status, used.error.code]).toEqual([422, 'mfa_challenge_expired']);
    for (let i = 0; i < 5; i += 1) await auth.mfa.challengeAndVerify({ factorId: factor.id, code: wrongCode(factor.secret) });
    const locked = await auth.mfa.challengeAndVerify({ factorId: factor.id, code: codeFor(factor.secret) });
    expect(isAuthApiError(locked.error) && [locked.error.status, locked.error.code]).toEqual([429, 'over_request_rate_limit']);
    expect(locked.error?.message).toMatch(/Too many invalid codes/);
  });

  describe('finding 8: a second factor', () => {
    it('an unverified factor cannot be confirmed from an aal1 session while a verified one exists', async () => {
      await start();
      const { factor, aal1, aal2 } = await mfaAdmin();
      // A factor left unverified (enrolled before the first was verified, say): inserted as it would be.
      const leftover = { id: randomUUID(), secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP' };
      const at = new Date().toISOString();
      await t.app.database.db
        .insertInto('admin_mfa_factors')
        .values({ id: leftover.id, user_id: aal1.user.id, friendly_name: 'leftover', factor_type: 'totp', status: 'unverified', secret: t.app.secretBox.seal(leftover.secret, totpSecretContext(leftover.id)), created_at: at, updated_at: at, last_challenged_at: null, last_verified_step: null })
        .execute();
      const refused = await rightCode(aal1, leftover);
      expectError(refused, 403, 'insufficient_aal');
      const verified = await t.app.database.db.selectFrom('admin_mfa_factors').select('id').where('user_id', '=', aal1.user.id).where('status', '=', 'verified').execute();
      expect(verified.map((f) => f.id)).toEqual([factor.id]);
      // Nor may that session enrol one (GoTrue's rule, unchanged); an aal2 session may do both.
      expectError(await call('POST', '/auth/v1/factors', aal1.access_token, { factor_type: 'totp', friendly_name: 'second' }), 403, 'insufficient_aal');
      const ok = await rightCode(aal2, leftover);
      expect(ok.statusCode, ok.body).toBe(200);
    });

    it('two factors verified at the same time: one wins, the other is gone', async () => {
      await start();
      admins += 1;
      const email = `race${admins}@example.com`;
      await createAdmin(t.app.database.db, email, PASSWORD);
      for (let round = 0; round < 3; round += 1) {
        const s = await signIn(email);
        const [one, two] = [await enroll(s.access_token, `one-${round}`), await enroll(s.access_token, `two-${round}`)];
        const [c1, c2] = [await challenge(s.access_token, one.id), await challenge(s.access_token, two.id)];
        const answers = await Promise.all([verify(s.access_token, one.id, c1, codeFor(one.secret)), verify(s.access_token, two.id, c2, codeFor(two.secret))]);
        expect(answers.filter((r) => r.statusCode === 200), answers.map((r) => r.body).join('\n')).toHaveLength(1);
        const verified = await t.app.database.db.selectFrom('admin_mfa_factors').select('id').where('user_id', '=', s.user.id).where('status', '=', 'verified').execute();
        expect(verified).toHaveLength(1);
        // Start over for the next round.
        await t.app.database.db.deleteFrom('admin_mfa_factors').where('user_id', '=', s.user.id).execute();
      }
    });
  });
});
