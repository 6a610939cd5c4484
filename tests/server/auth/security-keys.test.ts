import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { decodeProtectedHeader } from 'jose';
import { Secret, TOTP } from 'otpauth';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { clearKeyCache, getKeyRing } from '../../../src/server/auth/keys.js';
import { totpSecretContext } from '../../../src/server/auth/mfa.js';
import { createSecretBox } from '../../../src/server/crypto/secret-box.js';
import { run as adminCli } from '../../../src/server/cli/admin.js';
import { openDatabase } from '../../../src/server/db/database.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { runCliInProcess } from '../../support/server-process.js';
import { signIn } from '../../support/sign-in.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Security review, finding 9: a signing key an earlier version stored in clear is replaced at the
 * first start after the upgrade, and AUTH_SECRET_KEY can be changed (`npm run admin -- rotate-secret`
 * with AUTH_SECRET_KEY_PREVIOUS during the overlap).
 */

const EMAIL = 'keys@example.com';
const PASSWORD = 'correct-Horse-battery-42';
const IP = '198.51.100.40';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const kidOf = (token: string) => decodeProtectedHeader(token).kid;
const key = () => randomBytes(32).toString('base64');
const codeFor = (secret: string) => new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate();

describe.each(TEST_DIALECTS)('signing and secret keys (%s)', (dialect: TestDialect) => {
  async function app(env: Record<string, string>): Promise<TestApp> {
    const t = await createTestApp({ AUTH_IP_MAX_ATTEMPTS: '1000', ...env }, { dialect });
    cleanups.push(() => t.close());
    return t;
  }
  const keyRows = (t: TestApp) => t.app.database.db.selectFrom('auth_signing_keys').selectAll().orderBy('generation').execute();
  const getUser = (t: TestApp, token: string) => t.app.inject({ method: 'GET', url: '/auth/v1/user', headers: { authorization: `Bearer ${token}` } });
  function call(t: TestApp, url: string, token: string, body: unknown): Promise<LightMyRequestResponse> {
    return t.app.inject({ method: 'POST', url, remoteAddress: IP, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  }
  /** Challenges and verifies the factor's current code on `t` (the last accepted step forgotten first). */
  async function verifyCode(t: TestApp, token: string, factor: { id: string; secret: string }): Promise<LightMyRequestResponse> {
    await t.app.database.db.updateTable('admin_mfa_factors').set({ last_verified_step: null }).where('id', '=', factor.id).execute();
    const c = (await call(t, `/auth/v1/factors/${factor.id}/challenge`, token, {})).json() as { id: string };
    return call(t, `/auth/v1/factors/${factor.id}/verify`, token, { challenge_id: c.id, code: codeFor(factor.secret) });
  }

  it('a signing key found in clear is sealed and replaced at the next start, once however many instances start', async () => {
    const secretKey = key();
    const t = await app({ AUTH_SECRET_KEY: secretKey });
    await createAdmin(t.app.database.db, EMAIL, PASSWORD);
    const before = await signIn(t.app, { email: EMAIL, password: PASSWORD });
    const [row] = await keyRows(t);
    const clear = t.app.secretBox.open(row!.private_jwk, `jwk:${row!.kid}`);
    // As an earlier version left it: the private JWK in clear.
    await t.app.database.db.updateTable('auth_signing_keys').set({ private_jwk: clear }).where('kid', '=', row!.kid).execute();

    // Two instances start at once on the upgraded database.
    const handles = [openDatabase(t.config.database), openDatabase(t.config.database)];
    cleanups.push(async () => void (await Promise.all(handles.map((h) => h.close()))));
    const warnings: string[] = [];
    const options = { secretBox: t.app.secretBox, tokenLifetimeSeconds: t.config.auth.jwtExpirySeconds, warn: (m: string) => void warnings.push(m) };
    await Promise.all(handles.map((h) => getKeyRing(h.db, options)));

    const rows = await keyRows(t);
    expect(rows.map((r) => [r.kid, r.generation, r.retired_at])).toEqual([
      [row!.kid, 1, null],
      [expect.any(String), 2, null],
    ]);
    expect(rows.every((r) => t.app.secretBox.isSealed(r.private_jwk))).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(clear);
    expect(warnings.filter((w) => /stored in clear/.test(w))).toHaveLength(1);

    clearKeyCache(t.app.database.db); // as a restart would
    const after = await signIn(t.app, { email: EMAIL, password: PASSWORD });
    expect(kidOf(after.access_token)).toBe(rows[1]!.kid);
    // The replaced key verifies the tokens it signed until they expire.
    expect((await getUser(t, before.access_token)).statusCode).toBe(200);
  });

  it('rotate-secret: servers run with the new key and the old one as AUTH_SECRET_KEY_PREVIOUS, the CLI re-seals, then the old key can go', async () => {
    const oldKey = key();
    const newKey = key();
    const first = await app({ AUTH_SECRET_KEY: oldKey });
    const db = first.app.database.db;
    await createAdmin(db, EMAIL, PASSWORD);
    const s = await signIn(first.app, { email: EMAIL, password: PASSWORD });
    const enrolled = (await call(first, '/auth/v1/factors', s.access_token, { factor_type: 'totp' })).json() as { id: string; totp: { secret: string } };
    const factor = { id: enrolled.id, secret: enrolled.totp.secret };
    const verified = await verifyCode(first, s.access_token, factor);
    expect(verified.statusCode, verified.body).toBe(200);
    const aal2Token = (verified.json() as { access_token: string }).access_token;
    const hashBefore = first.app.secretBox.hmac('erased@example.com', 'waitlist suppression');

    // Step 1: the servers restart with the new key, the old one still accepted.
    const overlap = await app({ DATABASE_URL: first.databaseUrl, AUTH_SECRET_KEY: newKey, AUTH_SECRET_KEY_PREVIOUS: oldKey });
    const during = await signIn(overlap.app, { email: EMAIL, password: PASSWORD });
    expect((await verifyCode(overlap, during.access_token, factor)).statusCode).toBe(200);
    expect(overlap.app.secretBox.hmac('erased@example.com', 'waitlist suppression')).toBe(hashBefore);

    // Step 2: the CLI, with the same two settings.
    const env = { DATABASE_URL: first.databaseUrl, LOG_LEVEL: 'silent' };
    const missing = await runCliInProcess(adminCli, ['rotate-secret'], { env: { ...env, AUTH_SECRET_KEY: newKey } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/AUTH_SECRET_KEY_PREVIOUS to the old one.*Nothing was changed/);
    const rotated = await runCliInProcess(adminCli, ['rotate-secret'], { env: { ...env, AUTH_SECRET_KEY: newKey, AUTH_SECRET_KEY_PREVIOUS: oldKey } });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toMatch(/^Re-sealed 1 signing key and 1 TOTP secret with the new AUTH_SECRET_KEY; the hashing key is stored, sealed with the new key\.\n/);
    expect(rotated.stdout).toMatch(/New signing key \S+ \(generation 2\) signs from now on/);
    expect(rotated.stdout).toContain('remove AUTH_SECRET_KEY_PREVIOUS from every server');

    // Every sealed value opens with the new key alone, none with the old one (what old backups hold).
    const newBox = createSecretBox(Buffer.from(newKey, 'base64'));
    const oldBox = createSecretBox(Buffer.from(oldKey, 'base64'));
    const sealed = [
      ...(await db.selectFrom('auth_signing_keys').select(['kid', 'private_jwk']).execute()).map((r) => [r.private_jwk, `jwk:${r.kid}`] as const),
      ...(await db.selectFrom('admin_mfa_factors').select(['id', 'secret']).execute()).map((r) => [r.secret, totpSecretContext(r.id)] as const),
      ...(await db.selectFrom('auth_secret_box_keys').select('sealed_key').execute()).map((r) => [r.sealed_key, 'secret-box:hmac'] as const),
    ];
    expect(sealed).toHaveLength(4);
    for (const [value, context] of sealed) {
      expect(() => newBox.open(value, context), context).not.toThrow();
      expect(() => oldBox.open(value, context), context).toThrow();
    }

    // Step 3: AUTH_SECRET_KEY_PREVIOUS removed.
    const after = await app({ DATABASE_URL: first.databaseUrl, AUTH_SECRET_KEY: newKey });
    const fresh = await signIn(after.app, { email: EMAIL, password: PASSWORD });
    expect(kidOf(fresh.access_token)).toBe((await keyRows(after)).at(-1)!.kid);
    expect((await verifyCode(after, fresh.access_token, factor)).statusCode).toBe(200);
    // Hashes made before still match (the suppression list, link tokens already sent).
    expect(after.app.secretBox.hmac('erased@example.com', 'waitlist suppression')).toBe(hashBefore);
    // Tokens signed with the previous signing key verify until they expire.
    expect((await getUser(after, aal2Token)).statusCode).toBe(200);
    const audit = await db.selectFrom('audit_log').select('detail').where('action', '=', 'secret_rotated').execute();
    expect(audit.map((a) => JSON.parse(a.detail))).toEqual([expect.objectContaining({ signing_keys: 1, totp_secrets: 1, hashing_key: 'stored', unopenable: 0 })]);

    // A value that opens with neither key is reported, and the command fails.
    const stray = createSecretBox(randomBytes(32)).seal(factor.secret, totpSecretContext(factor.id));
    await db.updateTable('admin_mfa_factors').set({ secret: stray }).where('id', '=', factor.id).execute();
    const third = key();
    const partial = await runCliInProcess(adminCli, ['rotate-secret'], { env: { ...env, AUTH_SECRET_KEY: third, AUTH_SECRET_KEY_PREVIOUS: newKey } });
    expect(partial.code).toBe(1);
    expect(partial.stderr).toContain(`1 sealed value open with neither key: totp:${factor.id}.`);
  });
});
