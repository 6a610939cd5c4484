import { randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { decodeJwt, SignJWT, type JWTPayload } from 'jose';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { getKeyRing } from '../../../src/server/auth/keys.js';
import { totpSecretContext } from '../../../src/server/auth/mfa.js';
import { run as adminCli } from '../../../src/server/cli/admin.js';
import { ADMIN_WAITLIST_PATH } from '../../../src/shared/admin/waitlist-api.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { runCliInProcess } from '../../support/server-process.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const PASSWORD = 'correct-Horse-battery-42';
const CLIENT_IP = '198.51.100.20';
const OTHER_IP = '203.0.113.99';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Session {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  user: { id: string; email: string; factors?: Array<Record<string, unknown>> };
}
interface Enrolled {
  id: string;
  type: string;
  friendly_name: string;
  totp: { qr_code: string; secret: string; uri: string };
}
interface Claims extends JWTPayload {
  aal: string;
  amr: Array<{ method: string; timestamp: number }>;
  session_id: string;
}

/** The code an authenticator app shows for `secret`, `steps` time steps from now. */
function codeFor(secret: string, steps = 0): string {
  return new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + steps * 30_000 });
}

/** A code that is none of the accepted ones (previous, current, next step). */
function wrongCode(secret: string): string {
  const valid = new Set([-1, 0, 1].map((s) => codeFor(secret, s)));
  for (let n = 0; ; n += 1) {
    const candidate = String(n).padStart(6, '0');
    if (!valid.has(candidate)) return candidate;
  }
}

describe.each(TEST_DIALECTS)('TOTP MFA (%s)', (dialect: TestDialect) => {
  let t: TestApp;
  let app: FastifyInstance;
  let admins = 0;

  beforeAll(async () => {
    t = await createTestApp({ AUTH_IP_MAX_ATTEMPTS: '1000' }, { dialect });
    app = t.app;
  });
  afterAll(async () => {
    await t?.close();
  });

  function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, options: { token?: string; body?: unknown; ip?: string } = {}) {
    return app.inject({
      method,
      url,
      remoteAddress: options.ip ?? CLIENT_IP,
      headers: {
        'content-type': 'application/json',
        'x-supabase-api-version': '2024-01-01',
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      },
      ...(options.body === undefined ? {} : { payload: JSON.stringify(options.body) }),
    });
  }

  function expectError(res: LightMyRequestResponse, status: number, code: string, message?: string | RegExp) {
    expect(res.statusCode, res.body).toBe(status);
    const body = res.json() as { code: string; message: string };
    expect(body.code).toBe(code);
    if (message instanceof RegExp) expect(body.message).toMatch(message);
    else if (message !== undefined) expect(body.message).toBe(message);
  }

  async function newAdmin(): Promise<string> {
    admins += 1;
    const email = `mfa${admins}@example.com`;
    await createAdmin(app.database.db, email, PASSWORD);
    return email;
  }

  async function signIn(email: string, ip = CLIENT_IP): Promise<Session> {
    const res = await call('POST', '/auth/v1/token?grant_type=password', { body: { email, password: PASSWORD }, ip });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Session;
  }

  async function enroll(token: string, body: Record<string, unknown> = { factor_type: 'totp' }): Promise<Enrolled> {
    const res = await call('POST', '/auth/v1/factors', { token, body });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Enrolled;
  }

  async function challenge(token: string, factorId: string, ip = CLIENT_IP): Promise<string> {
    const res = await call('POST', `/auth/v1/factors/${factorId}/challenge`, { token, body: { factorId }, ip });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { id: string }).id;
  }

  function verify(token: string, factorId: string, challengeId: string, code: string, ip = CLIENT_IP) {
    return call('POST', `/auth/v1/factors/${factorId}/verify`, { token, body: { challenge_id: challengeId, code }, ip });
  }

  /** Challenge and verify with the current code; the factor's last accepted step is forgotten first, so tests can verify again. */
  async function verifyOk(token: string, factor: { id: string; secret: string }): Promise<Session> {
    await app.database.db.updateTable('admin_mfa_factors').set({ last_verified_step: null }).where('id', '=', factor.id).execute();
    const res = await verify(token, factor.id, await challenge(token, factor.id), codeFor(factor.secret));
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Session;
  }

  /** An admin with a verified factor, signed in at aal2. */
  async function mfaAdmin(): Promise<{ email: string; factor: { id: string; secret: string }; session: Session }> {
    const email = await newAdmin();
    const first = await signIn(email);
    const enrolled = await enroll(first.access_token);
    const factor = { id: enrolled.id, secret: enrolled.totp.secret };
    return { email, factor, session: await verifyOk(first.access_token, factor) };
  }

  function sessionsOf(userId: string) {
    return app.database.db.selectFrom('admin_sessions').select(['id', 'aal']).where('user_id', '=', userId).execute();
  }

  describe('POST /factors', () => {
    it('enrols an unverified TOTP factor: GoTrue answer, QR code as SVG, secret sealed at rest', async () => {
      const email = await newAdmin();
      const s = await signIn(email);
      const before = await call('GET', '/auth/v1/user', { token: s.access_token });
      expect(before.json()).not.toHaveProperty('factors');

      const res = await call('POST', '/auth/v1/factors', { token: s.access_token, body: { factor_type: 'totp', friendly_name: 'Phone', issuer: 'Meridian' } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      const body = res.json() as Enrolled;
      expect(Object.keys(body)).toEqual(['id', 'type', 'friendly_name', 'totp']);
      expect(body).toMatchObject({ type: 'totp', friendly_name: 'Phone' });
      expect(body.id).toMatch(UUID);
      expect(body.totp.qr_code).toMatch(/^<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      // auth-js puts the SVG unencoded into a data: URL, where `#` would cut it short.
      expect(body.totp.qr_code).not.toContain('#');
      expect(body.totp.secret).toMatch(/^[A-Z2-7]{32}$/);
      const uri = new URL(body.totp.uri);
      expect(uri.protocol).toBe('otpauth:');
      expect(uri.host).toBe('totp');
      expect(decodeURIComponent(uri.pathname)).toBe(`/Meridian:${email}`);
      expect(Object.fromEntries(uri.searchParams)).toEqual({ issuer: 'Meridian', secret: body.totp.secret, algorithm: 'SHA1', digits: '6', period: '30' });

      const row = await app.database.db.selectFrom('admin_mfa_factors').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ user_id: s.user.id, friendly_name: 'Phone', factor_type: 'totp', status: 'unverified' });
      expect(app.secretBox.isSealed(row.secret)).toBe(true);
      expect(row.secret).not.toContain(body.totp.secret);
      expect(app.secretBox.open(row.secret, totpSecretContext(body.id))).toBe(body.totp.secret);
      expect(() => app.secretBox.open(row.secret, totpSecretContext(randomUUID()))).toThrow();

      const user = await call('GET', '/auth/v1/user', { token: s.access_token });
      expect((user.json() as Session['user']).factors).toEqual([
        { id: body.id, friendly_name: 'Phone', factor_type: 'totp', status: 'unverified', created_at: expect.any(String), updated_at: expect.any(String) },
      ]);
    });

    it('defaults the issuer to the host, and refuses other factor types and missing tokens', async () => {
      const s = await signIn(await newAdmin());
      const body = await enroll(s.access_token);
      expect(body.friendly_name).toBe('');
      expect(new URL(body.totp.uri).searchParams.get('issuer')).toBe('localhost:80');
      expectError(await call('POST', '/auth/v1/factors', { token: s.access_token, body: {} }), 400, 'validation_failed', 'factor_type needs to be totp, phone, or webauthn');
      expectError(await call('POST', '/auth/v1/factors', { token: s.access_token, body: { factor_type: 'phone' } }), 422, 'mfa_phone_enroll_not_enabled');
      expectError(await call('POST', '/auth/v1/factors', { body: { factor_type: 'totp' } }), 401, 'no_authorization');
      expectError(await call('POST', '/auth/v1/factors', { token: s.access_token, body: { factor_type: 7 } }), 400, 'bad_json');
    });

    it('refuses a friendly name the user already has, and an eleventh factor', async () => {
      const s = await signIn(await newAdmin());
      await enroll(s.access_token, { factor_type: 'totp', friendly_name: 'Key 0' });
      expectError(
        await call('POST', '/auth/v1/factors', { token: s.access_token, body: { factor_type: 'totp', friendly_name: 'Key 0' } }),
        422,
        'mfa_factor_name_conflict',
        'A factor with the friendly name "Key 0" for this user already exists',
      );
      // Another admin may use the same name.
      await enroll((await signIn(await newAdmin())).access_token, { factor_type: 'totp', friendly_name: 'Key 0' });
      for (let i = 1; i < 10; i += 1) await enroll(s.access_token, { factor_type: 'totp', friendly_name: `Key ${i}` });
      expectError(
        await call('POST', '/auth/v1/factors', { token: s.access_token, body: { factor_type: 'totp', friendly_name: 'Key 10' } }),
        422,
        'too_many_enrolled_mfa_factors',
      );
    });

    it('purges unverified factors older than 300 s that were never challenged', async () => {
      const s = await signIn(await newAdmin());
      const stale = await enroll(s.access_token, { factor_type: 'totp', friendly_name: 'stale' });
      const challenged = await enroll(s.access_token, { factor_type: 'totp', friendly_name: 'challenged' });
      await challenge(s.access_token, challenged.id);
      const old = new Date(Date.now() - 301_000).toISOString();
      await app.database.db.updateTable('admin_mfa_factors').set({ created_at: old }).where('id', 'in', [stale.id, challenged.id]).execute();
      // The stale factor's name is free again once it is purged.
      await enroll(s.access_token, { factor_type: 'totp', friendly_name: 'stale' });
      const names = (await app.database.db.selectFrom('admin_mfa_factors').select(['id', 'friendly_name']).where('user_id', '=', s.user.id).execute()).map((r) => r.id);
      expect(names).not.toContain(stale.id);
      expect(names).toContain(challenged.id);
    });

    it('needs aal2 to enrol another factor once one is verified', async () => {
      const { email } = await mfaAdmin();
      const aal1 = await signIn(email);
      expectError(await call('POST', '/auth/v1/factors', { token: aal1.access_token, body: { factor_type: 'totp', friendly_name: 'second' } }), 403, 'insufficient_aal', 'AAL2 required to enroll a new factor');
    });
  });

  it('hostile input to the factor routes is a 4xx, never a 5xx', async () => {
    const s = await signIn(await newAdmin());
    const f = await enroll(s.access_token);
    const c = await challenge(s.access_token, f.id);
    const bodies: unknown[] = [
      { factor_type: 'totp', friendly_name: 'a\u0000b' },
      { factor_type: 'totp', issuer: 'x\u0000' },
      { factor_type: 'totp', friendly_name: 'x'.repeat(10_000) },
      { factor_type: ['totp'] },
      [],
      'null',
    ];
    for (const body of bodies) {
      const res = await call('POST', '/auth/v1/factors', { token: s.access_token, body });
      expect(res.statusCode, `${JSON.stringify(body).slice(0, 60)}: ${res.body}`).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
    }
    const verifyBodies: unknown[] = [
      { challenge_id: c, code: ['123456'] },
      { challenge_id: c, code: '\u0000\u0000\u0000\u0000\u0000\u0000' },
      { challenge_id: c, code: '1'.repeat(100_000) },
      { challenge_id: `${c}\u0000`, code: '123456' },
      { challenge_id: 12, code: '123456' },
      { challenge_id: null, code: '123456' },
    ];
    for (const body of verifyBodies) {
      const res = await call('POST', `/auth/v1/factors/${f.id}/verify`, { token: s.access_token, body });
      expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
    }
    for (const id of ['%00', '..%2f..', `${f.id}%00`, 'x'.repeat(5000)]) {
      for (const url of [`/auth/v1/factors/${id}/challenge`, `/auth/v1/factors/${id}/verify`, `/auth/v1/factors/${id}`]) {
        const res = await call(url.endsWith(id) ? 'DELETE' : 'POST', url, { token: s.access_token, body: {} });
        expect(res.statusCode, `${url}: ${res.body}`).toBeGreaterThanOrEqual(400);
        expect(res.statusCode).toBeLessThan(500);
      }
    }
  });

  describe('challenge and verify', () => {
    it('a challenge lives 300 s; an unknown, foreign or malformed factor is not found', async () => {
      const s = await signIn(await newAdmin());
      const factor = await enroll(s.access_token);
      const res = await call('POST', `/auth/v1/factors/${factor.id}/challenge`, { token: s.access_token, body: { factorId: factor.id } });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as { id: string; type: string; expires_at: number };
      expect(Object.keys(body)).toEqual(['id', 'type', 'expires_at']);
      expect(body.id).toMatch(UUID);
      expect(body.type).toBe('totp');
      expect(Math.abs(body.expires_at - (Math.floor(Date.now() / 1000) + 300))).toBeLessThanOrEqual(2);
      const row = await app.database.db.selectFrom('admin_mfa_challenges').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ factor_id: factor.id, ip_address: CLIENT_IP, verified_at: null });

      expectError(await call('POST', `/auth/v1/factors/${randomUUID()}/challenge`, { token: s.access_token }), 404, 'mfa_factor_not_found');
      expectError(await call('POST', '/auth/v1/factors/not-a-uuid/challenge', { token: s.access_token }), 404, 'validation_failed');
      const stranger = await signIn(await newAdmin());
      expectError(await call('POST', `/auth/v1/factors/${factor.id}/challenge`, { token: stranger.access_token }), 404, 'mfa_factor_not_found');
      expectError(await call('DELETE', `/auth/v1/factors/${factor.id}`, { token: stranger.access_token }), 404, 'mfa_factor_not_found');
    });

    it('verify answers an aal2 session: claims, factors, rotated refresh token, other aal1 sessions and unverified factors gone', async () => {
      const email = await newAdmin();
      const other = await signIn(email);
      const s = await signIn(email);
      const spare = await enroll(s.access_token, { factor_type: 'totp', friendly_name: 'spare' });
      const enrolled = await enroll(s.access_token, { factor_type: 'totp', friendly_name: 'main' });
      const challengeId = await challenge(s.access_token, enrolled.id);
      const res = await verify(s.access_token, enrolled.id, challengeId, codeFor(enrolled.totp.secret));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      const session = res.json() as Session & { token_type: string; expires_at: number };
      expect(Object.keys(session)).toEqual(['access_token', 'token_type', 'expires_in', 'expires_at', 'refresh_token', 'user']);
      expect(session.user.factors).toEqual([
        { id: enrolled.id, friendly_name: 'main', factor_type: 'totp', status: 'verified', created_at: expect.any(String), updated_at: expect.any(String) },
      ]);

      const claims = decodeJwt(session.access_token) as Claims;
      const before = decodeJwt(s.access_token) as Claims;
      expect(before).toMatchObject({ aal: 'aal1', amr: [{ method: 'password' }] });
      expect(claims.session_id).toBe(before.session_id);
      expect(claims.aal).toBe('aal2');
      expect(claims.amr.map((a) => a.method)).toEqual(['totp', 'password']);
      expect(claims.amr[0]!.timestamp).toBeGreaterThanOrEqual(claims.amr[1]!.timestamp);
      expect(claims.iss).toBe('waitlist-auth');

      // The aal1 refresh token of the session cannot mint an aal2 session.
      expectError(await call('POST', '/auth/v1/token?grant_type=refresh_token', { body: { refresh_token: s.refresh_token } }), 400, 'refresh_token_not_found');
      // A refresh keeps aal2 (recomputed from the session).
      const refreshed = await call('POST', '/auth/v1/token?grant_type=refresh_token', { body: { refresh_token: session.refresh_token } });
      expect(refreshed.statusCode, refreshed.body).toBe(200);
      const refreshedClaims = decodeJwt((refreshed.json() as Session).access_token) as Claims;
      expect(refreshedClaims).toMatchObject({ aal: 'aal2', session_id: claims.session_id });
      expect(refreshedClaims.amr).toEqual(claims.amr);
      expect((refreshed.json() as Session).user.factors).toHaveLength(1);

      // The other (aal1) session is signed out; the unverified factor is deleted.
      expect(await sessionsOf(s.user.id)).toEqual([{ id: claims.session_id, aal: 'aal2' }]);
      expectError(await call('GET', '/auth/v1/user', { token: other.access_token }), 403, 'session_not_found');
      const remaining = await app.database.db.selectFrom('admin_mfa_factors').select('id').where('user_id', '=', s.user.id).execute();
      expect(remaining.map((r) => r.id)).toEqual([enrolled.id]);
      expect(remaining.map((r) => r.id)).not.toContain(spare.id);

      const audit = await app.database.db.selectFrom('audit_log').selectAll().where('action', '=', 'mfa_verify').where('actor_id', '=', s.user.id).execute();
      expect(audit).toHaveLength(1);
      expect(JSON.parse(audit[0]!.detail)).toMatchObject({ factor_id: enrolled.id, challenge_id: challengeId, session_id: claims.session_id, sessions_ended: 1 });
      expect(audit[0]!.detail).not.toContain(enrolled.totp.secret);
    });

    it('refuses an empty code, an unknown challenge, a wrong code and a malformed challenge id', async () => {
      const s = await signIn(await newAdmin());
      const f = await enroll(s.access_token);
      const c = await challenge(s.access_token, f.id);
      expectError(await verify(s.access_token, f.id, c, ''), 400, 'validation_failed', 'Code needs to be non-empty');
      expectError(await verify(s.access_token, f.id, randomUUID(), codeFor(f.totp.secret)), 422, 'mfa_factor_not_found', 'MFA factor with the provided challenge ID not found');
      expectError(await verify(s.access_token, f.id, c, wrongCode(f.totp.secret)), 422, 'mfa_verification_failed', 'Invalid TOTP code entered');
      expectError(await verify(s.access_token, f.id, c, 'abcdef'), 422, 'mfa_verification_failed');
      expectError(await verify(s.access_token, f.id, 'not-a-uuid', codeFor(f.totp.secret)), 400, 'bad_json');
      const failures = await app.database.db.selectFrom('audit_log').select('id').where('action', '=', 'mfa_verify_failed').where('actor_id', '=', s.user.id).execute();
      expect(failures).toHaveLength(2);
      // A wrong code does not use the challenge up.
      expect((await verify(s.access_token, f.id, c, codeFor(f.totp.secret))).statusCode).toBe(200);
    });

    it('a challenge is bound to the client IP and used once; an expired one is deleted', async () => {
      const s = await signIn(await newAdmin());
      const f = await enroll(s.access_token);
      const c = await challenge(s.access_token, f.id);
      expectError(await verify(s.access_token, f.id, c, codeFor(f.totp.secret), OTHER_IP), 422, 'mfa_ip_address_mismatch', 'Challenge and verify IP addresses mismatch.');
      const ok = await verify(s.access_token, f.id, c, codeFor(f.totp.secret));
      expect(ok.statusCode, ok.body).toBe(200);
      const aal2 = (ok.json() as Session).access_token;
      expectError(await verify(aal2, f.id, c, codeFor(f.totp.secret, 1)), 422, 'mfa_ip_address_mismatch');

      const expiring = await challenge(aal2, f.id);
      await app.database.db
        .updateTable('admin_mfa_challenges')
        .set({ created_at: new Date(Date.now() - 301_000).toISOString() })
        .where('id', '=', expiring)
        .execute();
      expectError(await verify(aal2, f.id, expiring, codeFor(f.totp.secret, 1)), 422, 'mfa_challenge_expired', new RegExp(`^MFA challenge ${expiring} has expired`));
      expect(await app.database.db.selectFrom('admin_mfa_challenges').select('id').where('id', '=', expiring).execute()).toEqual([]);
    });

    it('a code is accepted once: the same code on a new challenge is refused', async () => {
      const s = await signIn(await newAdmin());
      const f = await enroll(s.access_token);
      const code = codeFor(f.totp.secret);
      const first = await verify(s.access_token, f.id, await challenge(s.access_token, f.id), code);
      expect(first.statusCode, first.body).toBe(200);
      const token = (first.json() as Session).access_token;
      expectError(await verify(token, f.id, await challenge(token, f.id), code), 422, 'mfa_verification_failed');
      // The log tells a reused code from a wrong one (ASVS 2.8.5).
      const failure = await app.database.db.selectFrom('audit_log').select('detail').where('action', '=', 'mfa_verify_failed').where('actor_id', '=', s.user.id).executeTakeFirstOrThrow();
      expect(JSON.parse(failure.detail)).toMatchObject({ reason: 'code_reused' });
      // The next time step's code works.
      expect((await verify(token, f.id, await challenge(token, f.id), codeFor(f.totp.secret, 1))).statusCode).toBe(200);
    });

    it('challenge and verify are rate limited per user (15 a minute) with Retry-After', async () => {
      const s = await signIn(await newAdmin());
      const f = await enroll(s.access_token);
      let c = '';
      for (let i = 0; i < 15; i += 1) c = await challenge(s.access_token, f.id);
      const limited = await call('POST', `/auth/v1/factors/${f.id}/challenge`, { token: s.access_token });
      expectError(limited, 429, 'over_request_rate_limit');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      // Wrong codes use a challenge up after 5 and lock the account after 10 (security-mfa.test.ts);
      // requests for an unknown challenge count toward the per-minute limit all the same.
      for (let i = 0; i < 15; i += 1) expectError(await verify(s.access_token, f.id, randomUUID(), wrongCode(f.totp.secret)), 422, 'mfa_factor_not_found');
      const verifyLimited = await verify(s.access_token, f.id, c, codeFor(f.totp.secret));
      expectError(verifyLimited, 429, 'over_request_rate_limit');
      expect(Number(verifyLimited.headers['retry-after'])).toBeGreaterThan(0);
    });
  });

  describe('DELETE /factors/{id}', () => {
    it('a verified factor needs aal2; its sessions fall back to aal1', async () => {
      const { email, factor, session } = await mfaAdmin();
      const aal1 = await signIn(email);
      expectError(await call('DELETE', `/auth/v1/factors/${factor.id}`, { token: aal1.access_token }), 422, 'insufficient_aal', 'AAL2 required to unenroll verified factor');
      const res = await call('DELETE', `/auth/v1/factors/${factor.id}`, { token: session.access_token });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ id: factor.id });
      const refreshed = await call('POST', '/auth/v1/token?grant_type=refresh_token', { body: { refresh_token: session.refresh_token } });
      expect(refreshed.statusCode, refreshed.body).toBe(200);
      const body = refreshed.json() as Session;
      expect(decodeJwt(body.access_token)).toMatchObject({ aal: 'aal1', amr: [{ method: 'password' }] });
      expect(body.user).not.toHaveProperty('factors');
      expectError(await call('DELETE', `/auth/v1/factors/${factor.id}`, { token: body.access_token }), 404, 'mfa_factor_not_found');
    });

    it('an unverified factor can be removed at aal1', async () => {
      const s = await signIn(await newAdmin());
      const f = await enroll(s.access_token);
      const res = await call('DELETE', `/auth/v1/factors/${f.id}`, { token: s.access_token });
      expect(res.statusCode, res.body).toBe(200);
      expect(await app.database.db.selectFrom('admin_mfa_factors').select('id').where('id', '=', f.id).execute()).toEqual([]);
    });
  });

  describe('enforcement', () => {
    it('the admin API refuses an aal1 session of an admin with a verified factor, and accepts aal2', async () => {
      const { email, session } = await mfaAdmin();
      const aal1 = await signIn(email);
      const refused = await call('GET', ADMIN_WAITLIST_PATH, { token: aal1.access_token });
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.json()).toEqual({ error: { code: 'insufficient_aal', message: expect.stringMatching(/code/) } });
      // The aal2 session of the verify was kept (only sessions below aal2 went at verify; this one is new).
      expect((await call('GET', ADMIN_WAITLIST_PATH, { token: session.access_token })).statusCode).toBe(200);
      // An admin without a factor is unaffected.
      const plain = await signIn(await newAdmin());
      expect((await call('GET', ADMIN_WAITLIST_PATH, { token: plain.access_token })).statusCode).toBe(200);
      // The aal1 session can still read its user and reach the code step.
      const user = await call('GET', '/auth/v1/user', { token: aal1.access_token });
      expect((user.json() as Session['user']).factors).toEqual([expect.objectContaining({ status: 'verified' })]);
    });

    it("the admin API refuses a session's aal1 token from before its code was entered, and takes the aal2 one", async () => {
      const { email, factor } = await mfaAdmin();
      const aal1 = await signIn(email);
      const raised = await verifyOk(aal1.access_token, factor);
      // The same session, now aal2 in its row: the token issued before the code still says aal1.
      expect((decodeJwt(raised.access_token) as Claims).session_id).toBe((decodeJwt(aal1.access_token) as Claims).session_id);
      const refused = await call('GET', ADMIN_WAITLIST_PATH, { token: aal1.access_token });
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.json().error.code).toBe('insufficient_aal');
      expect((await call('GET', ADMIN_WAITLIST_PATH, { token: raised.access_token })).statusCode).toBe(200);
    });

    it('changing the password with MFA on needs aal2', async () => {
      const { email } = await mfaAdmin();
      const aal1 = await signIn(email);
      expectError(
        await call('PUT', '/auth/v1/user', { token: aal1.access_token, body: { password: 'another-Long-passphrase-77', current_password: PASSWORD } }),
        401,
        'insufficient_aal',
        'AAL2 session is required to update email or password when MFA is enabled.',
      );
    });

    it('ADMIN_MFA=required: an admin without a factor can only enrol, then uses the admin API at aal2', async () => {
      const strict = await createTestApp({ ADMIN_MFA: 'required', AUTH_IP_MAX_ATTEMPTS: '1000' }, { dialect });
      try {
        const req = (method: 'GET' | 'POST' | 'PUT', url: string, token: string, body?: unknown) =>
          strict.app.inject({
            method,
            url,
            remoteAddress: CLIENT_IP,
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
          });
        await createAdmin(strict.app.database.db, 'strict@example.com', PASSWORD);
        const signInRes = await strict.app.inject({
          method: 'POST',
          url: '/auth/v1/token?grant_type=password',
          remoteAddress: CLIENT_IP,
          payload: { email: 'strict@example.com', password: PASSWORD },
        });
        expect(signInRes.statusCode, signInRes.body).toBe(200);
        const s = signInRes.json() as Session;

        const refused = await req('GET', ADMIN_WAITLIST_PATH, s.access_token);
        expect(refused.statusCode).toBe(403);
        expect(refused.json()).toEqual({ error: { code: 'insufficient_aal', message: expect.stringMatching(/authenticator app/) } });
        expect((await req('PUT', '/auth/v1/user', s.access_token, { data: { a: 1 } })).json()).toMatchObject({ code: 'insufficient_aal' });
        expect((await req('GET', '/auth/v1/user', s.access_token)).statusCode).toBe(200);

        const enrolled = (await req('POST', '/auth/v1/factors', s.access_token, { factor_type: 'totp' })).json() as Enrolled;
        const c = (await req('POST', `/auth/v1/factors/${enrolled.id}/challenge`, s.access_token)).json() as { id: string };
        const verified = await req('POST', `/auth/v1/factors/${enrolled.id}/verify`, s.access_token, { challenge_id: c.id, code: codeFor(enrolled.totp.secret) });
        expect(verified.statusCode, verified.body).toBe(200);
        const aal2 = (verified.json() as Session).access_token;
        expect((await req('GET', ADMIN_WAITLIST_PATH, aal2)).statusCode).toBe(200);
      } finally {
        await strict.close();
      }
    });
  });

  describe('npm run admin -- reset-mfa', () => {
    it('deletes the factors and signs every session out', async () => {
      const { email, factor, session } = await mfaAdmin();
      const cli = (args: string[]) => runCliInProcess(adminCli, args, { env: { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' } });
      const res = await cli(['reset-mfa', email.toUpperCase()]);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toBe(`Removed 1 two-factor factor of ${email}; 1 session signed out.\n`);
      expect(await app.database.db.selectFrom('admin_mfa_factors').select('id').where('id', '=', factor.id).execute()).toEqual([]);
      expectError(await call('GET', '/auth/v1/user', { token: session.access_token }), 403, 'session_not_found');
      // The password alone is enough again.
      const fresh = await signIn(email);
      expect((await call('GET', ADMIN_WAITLIST_PATH, { token: fresh.access_token })).statusCode).toBe(200);
      const audit = await app.database.db.selectFrom('audit_log').select('detail').where('action', '=', 'mfa_reset').where('actor_id', '=', session.user.id).execute();
      expect(JSON.parse(audit[0]!.detail)).toMatchObject({ factors_deleted: 1, sessions_ended: 1 });

      const unknown = await cli(['reset-mfa', 'nobody@example.com']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/No admin with the e-mail nobody@example.com/);
      expect((await cli(['reset-mfa'])).code).toBe(2);
    });
  });

  describe('access-token claims are checked tightly (iss, aud, lifetime, iat)', () => {
    async function forge(session: Session, overrides: JWTPayload): Promise<string> {
      const ring = await getKeyRing(app.database.db);
      const claims = { ...decodeJwt(session.access_token), ...overrides };
      for (const [key, value] of Object.entries(claims)) if (value === undefined) delete claims[key];
      return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: ring.signing.kid, typ: 'JWT' }).sign(ring.signing.privateKey);
    }
    const now = () => Math.floor(Date.now() / 1000);

    it('accepts our own claims, and an iat a few seconds ahead (clock skew)', async () => {
      const s = await signIn(await newAdmin());
      expect((await call('GET', '/auth/v1/user', { token: await forge(s, {}) })).statusCode).toBe(200);
      expect((await call('GET', '/auth/v1/user', { token: await forge(s, { iat: now() + 10, exp: now() + 3000 }) })).statusCode).toBe(200);
    });

    const refusals: Array<[string, () => JWTPayload]> = [
      ['another issuer', () => ({ iss: 'https://evil.example/auth/v1' })],
      ['no issuer', () => ({ iss: undefined })],
      ['another audience', () => ({ aud: 'anon' })],
      ['a lifetime longer than configured', () => ({ iat: now() - 60, exp: now() + 3600 })],
      ['an iat in the future', () => ({ iat: now() + 120, exp: now() + 600 })],
      ['no iat', () => ({ iat: undefined })],
    ];
    for (const [name, overrides] of refusals) {
      it(`refuses ${name} on /auth/v1 (403 bad_jwt) and on the admin API (401)`, async () => {
        const s = await signIn(await newAdmin());
        const token = await forge(s, overrides());
        expectError(await call('GET', '/auth/v1/user', { token }), 403, 'bad_jwt');
        const admin = await call('GET', ADMIN_WAITLIST_PATH, { token });
        expect(admin.statusCode).toBe(401);
        expect(admin.json()).toMatchObject({ error: { code: 'unauthorized' } });
      });
    }
  });
});
