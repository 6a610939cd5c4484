import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { checkPasswordStrength, hashPassword } from '../../../src/server/auth/passwords.js';
import { run as runAdminCli } from '../../../src/server/cli/admin.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { runCliInProcess } from '../../support/server-process.js';
import { postPasswordGrant, signIn } from '../../support/sign-in.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/** Issue 8 point 10: each of these was accepted before. */
const GUESSABLE = ['1q2w3e4r5t6y', 'Pa$$w0rd1234', 'passwordpassword', 'Summer2024!!'];
/** More breached or pattern passwords of a legal length. */
const ALSO_GUESSABLE = ['password12345', 'qwertyuiopasdf', 'aaaaaaaaaaaa', '123456789012', 'iloveyou2024!', 'Welcome12345', 'Michael1985!!'];
/** The passwords the other suites (and the e2e admin) use: strong passphrases stay accepted. */
const ACCEPTED = [
  'correct-Horse-battery-42',
  'correct horse battery staple',
  'correct horse battery staple 42',
  'another-Long-passphrase-7',
  'a-Brand-new-passphrase-9',
  'fuzzing-Horse-battery-42',
  'review-Horse-battery-42',
  'Wrong-secret-passphrase-lynx',
  'wrong-password-123',
];
const PWNED_MESSAGE = 'Password is known to be weak and easy to guess, please choose a different one.';

describe('password policy', () => {
  it.each([...GUESSABLE, ...ALSO_GUESSABLE])('refuses %j as pwned', async (password) => {
    expect(await checkPasswordStrength(password)).toEqual({ message: PWNED_MESSAGE, reasons: ['pwned'] });
  });

  it.each(ACCEPTED)('accepts %j', async (password) => {
    expect(await checkPasswordStrength(password)).toBeNull();
  });

  it('reports only the length of a short password, as GoTrue does', async () => {
    expect(await checkPasswordStrength('short')).toMatchObject({ reasons: ['length'] });
    expect(await checkPasswordStrength('password')).toMatchObject({ reasons: ['length'] });
  });

  it('counts the account address and site words as known words', async () => {
    const password = 'Jane.Doe.Waitlist';
    expect(await checkPasswordStrength(password, ['jane.doe@example.com'])).toMatchObject({ reasons: ['pwned'] });
    expect(await checkPasswordStrength('waitlistadmin1')).toMatchObject({ reasons: ['pwned'] });
    expect(await checkPasswordStrength('FundingPortal2024')).toMatchObject({ reasons: ['pwned'] });
  });

  it('estimates a very long password by its beginning, and refuses one that starts guessable', async () => {
    expect(await checkPasswordStrength(`${'a'.repeat(100)}-xQ7#mLp2!vR9`)).toMatchObject({ reasons: ['pwned'] });
    expect(await checkPasswordStrength(`ochre-Lantern-quiet-77-${'x'.repeat(200)}`)).toBeNull();
  });
});

describe.each(TEST_DIALECTS)('weak passwords are refused everywhere (%s)', (dialect: TestDialect) => {
  const EMAIL = 'policy@example.com';
  const PASSWORD = 'correct-Horse-battery-42';
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({}, { dialect });
    await createAdmin(t.app.database.db, EMAIL, PASSWORD);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('PUT /user answers 422 weak_password with the reason pwned', async () => {
    const session = await signIn(t.app, { email: EMAIL, password: PASSWORD });
    for (const password of GUESSABLE) {
      const res = await t.app.inject({
        method: 'PUT',
        url: '/auth/v1/user',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${session.access_token}` },
        payload: JSON.stringify({ password, current_password: PASSWORD }),
      });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.headers['x-sb-error-code']).toBe('weak_password');
      expect(res.json()).toEqual({ code: 'weak_password', message: PWNED_MESSAGE, weak_password: { reasons: ['pwned'] } });
    }
    // Nothing changed: the old password still signs in.
    expect((await postPasswordGrant(t.app, { email: EMAIL, password: PASSWORD })).statusCode).toBe(200);
  });

  it('createAdmin refuses them', async () => {
    for (const password of GUESSABLE) {
      await expect(createAdmin(t.app.database.db, 'new@example.com', password)).rejects.toMatchObject({ kind: 'weak_password', message: PWNED_MESSAGE });
    }
  });

  it('a sign-in with a stored guessable password succeeds but reports weak_password (pwned)', async () => {
    const now = new Date().toISOString();
    await t.app.database.db
      .insertInto('admin_users')
      .values({ id: crypto.randomUUID(), email: 'legacy@example.com', password_hash: await hashPassword('Summer2024!!'), user_metadata: '{}', created_at: now, updated_at: now, last_sign_in_at: null })
      .execute();
    const res = await postPasswordGrant(t.app, { email: 'legacy@example.com', password: 'Summer2024!!' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ weak_password: { message: PWNED_MESSAGE, reasons: ['pwned'] } });
  });

  it('npm run admin -- create and set-password refuse them', async () => {
    const env = { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' };
    for (const password of GUESSABLE) {
      const created = await runCliInProcess(runAdminCli, ['create', 'cli@example.com'], { env, stdin: `${password}\n` });
      expect(created.code).toBe(1);
      expect(created.stderr).toContain(PWNED_MESSAGE);
      const set = await runCliInProcess(runAdminCli, ['set-password', EMAIL], { env, stdin: `${password}\n` });
      expect(set.code).toBe(1);
      expect(set.stderr).toContain(PWNED_MESSAGE);
    }
    expect(await t.app.database.db.selectFrom('admin_users').select('email').where('email', '=', 'cli@example.com').execute()).toEqual([]);
    expect((await postPasswordGrant(t.app, { email: EMAIL, password: PASSWORD })).statusCode).toBe(200);
  });
});
