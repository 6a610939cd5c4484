import { Secret, TOTP } from 'otpauth';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { authBaseUrl, authJsClient } from '../../support/auth-js-client.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Security review, finding 4: a session signed in with the password alone (aal1) of an admin who has
 * a verified factor may end only itself. Driven with the real auth-js client, whose signOut() sends
 * scope=global by default.
 */

const PASSWORD = 'correct-Horse-battery-42';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe.each(TEST_DIALECTS)('logout scopes of an aal1 session (%s)', (dialect: TestDialect) => {
  let t: TestApp;
  let baseUrl: string;

  async function start(): Promise<void> {
    t = await createTestApp({ AUTH_IP_MAX_ATTEMPTS: '1000' }, { dialect });
    cleanups.push(() => t.close());
    baseUrl = await authBaseUrl(t.app);
  }

  async function browser(email: string) {
    const { auth, storage } = authJsClient(baseUrl);
    const { data, error } = await auth.signInWithPassword({ email, password: PASSWORD });
    expect(error).toBeNull();
    return { auth, storage, sessionId: JSON.parse(Buffer.from(data.session!.access_token.split('.')[1]!, 'base64url').toString()).session_id as string };
  }

  /** An admin with a verified factor, and the browser that enrolled it (now aal2). */
  async function mfaAdmin(email: string) {
    await createAdmin(t.app.database.db, email, PASSWORD);
    const owner = await browser(email);
    const enrolled = await owner.auth.mfa.enroll({ factorType: 'totp' });
    const factor = enrolled.data!;
    const code = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(factor.totp.secret) }).generate();
    const verified = await owner.auth.mfa.challengeAndVerify({ factorId: factor.id, code });
    expect(verified.error).toBeNull();
    expect((await owner.auth.mfa.getAuthenticatorAssuranceLevel()).data?.currentLevel).toBe('aal2');
    return owner;
  }

  async function liveSessions(email: string): Promise<string[]> {
    const rows = await t.app.database.db
      .selectFrom('admin_sessions')
      .innerJoin('admin_users', 'admin_users.id', 'admin_sessions.user_id')
      .select('admin_sessions.id')
      .where('admin_users.email', '=', email)
      .execute();
    return rows.map((r) => r.id).sort();
  }

  it('signOut() (scope global) from a password-only session ends that session only; the aal2 one stays', async () => {
    await start();
    const email = 'global@example.com';
    const owner = await mfaAdmin(email);
    const thief = await browser(email);
    expect((await thief.auth.mfa.getAuthenticatorAssuranceLevel()).data).toMatchObject({ currentLevel: 'aal1', nextLevel: 'aal2' });
    expect(await liveSessions(email)).toEqual([owner.sessionId, thief.sessionId].sort());

    const { error } = await thief.auth.signOut();
    expect(error).toBeNull();
    // auth-js signed the thief's browser out, and the server ended its session, and only it.
    expect(thief.storage.map.size).toBe(0);
    expect(await liveSessions(email)).toEqual([owner.sessionId]);
    const ownerUser = await owner.auth.getUser();
    expect(ownerUser.error).toBeNull();

    const audit = await t.app.database.db.selectFrom('audit_log').select('detail').where('action', '=', 'sign_out').execute();
    expect(audit.map((a) => JSON.parse(a.detail))).toEqual([
      { scope: 'global', session_id: thief.sessionId, sessions_ended: 1, scope_applied: 'local', reason: 'aal1_session' },
    ]);
  });

  it("signOut({ scope: 'others' }) from a password-only session ends no other session", async () => {
    await start();
    const email = 'others@example.com';
    const owner = await mfaAdmin(email);
    const thief = await browser(email);
    expect((await thief.auth.signOut({ scope: 'others' })).error).toBeNull();
    expect(await liveSessions(email)).toEqual([owner.sessionId]);
    expect((await owner.auth.getUser()).error).toBeNull();
  });

  it('an aal2 session still signs the admin out everywhere, and an admin without a factor too', async () => {
    await start();
    const email = 'owner@example.com';
    const owner = await mfaAdmin(email);
    await browser(email);
    expect(await liveSessions(email)).toHaveLength(2);
    expect((await owner.auth.signOut()).error).toBeNull();
    expect(await liveSessions(email)).toEqual([]);

    const plain = 'plain@example.com';
    await createAdmin(t.app.database.db, plain, PASSWORD);
    const first = await browser(plain);
    await browser(plain);
    expect((await first.auth.signOut()).error).toBeNull();
    expect(await liveSessions(plain)).toEqual([]);
  });
});
