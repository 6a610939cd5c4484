import { isAuthWeakPasswordError } from '@supabase/auth-js';
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as zxcvbnCommon from '@zxcvbn-ts/language-common';
import * as zxcvbnEn from '@zxcvbn-ts/language-en';
import { afterAll, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { isBreachedPassword } from '../../../src/server/auth/guess-estimate.js';
import { stopGuessEstimator } from '../../../src/server/auth/guess-estimator.js';
import { checkPasswordStrength } from '../../../src/server/auth/passwords.js';
import { run as adminCli } from '../../../src/server/cli/admin.js';
import { authBaseUrl, authJsClient } from '../../support/auth-js-client.js';
import { runCliInProcess } from '../../support/server-process.js';
import { createTestApp } from '../../support/test-app.js';

/**
 * Security review, finding 11 (ASVS 2.1.7): the most common breached passwords are refused from an
 * offline list, even where zxcvbn's estimate alone would let them through.
 */

/** Breached passwords (fxa-common-password-list) that zxcvbn alone scores 4: each was accepted before. */
const BREACHED = ['perasperaadastra', 'PerAsperaAdAstra', 'ytpfdbcbvjcnm', 'gankutsuou1989', 'czps5nyndwcksc'];
const PWNED = { message: 'Password is known to be weak and easy to guess, please choose a different one.', reasons: ['pwned'] };

afterAll(() => stopGuessEstimator({ idleMs: 60_000 }));

describe('breached passwords', () => {
  it('are on the list, in any case, and zxcvbn alone would have accepted them', () => {
    const zxcvbn = new ZxcvbnFactory({ dictionary: { ...zxcvbnCommon.dictionary, ...zxcvbnEn.dictionary }, graphs: zxcvbnCommon.adjacencyGraphs });
    for (const password of BREACHED) {
      expect(isBreachedPassword(password), password).toBe(true);
      expect(zxcvbn.check(password).score, password).toBe(4);
    }
    expect(isBreachedPassword('correct-Horse-battery-42')).toBe(false);
  });

  it.each(BREACHED)('the password policy refuses %j as pwned', async (password) => {
    expect(await checkPasswordStrength(password, ['admin@example.com'])).toEqual(PWNED);
  });

  it('PUT /user (auth-js updateUser) answers 422 weak_password with reason pwned', async () => {
    const t = await createTestApp({ AUTH_IP_MAX_ATTEMPTS: '1000' });
    try {
      await createAdmin(t.app.database.db, 'breach@example.com', 'correct-Horse-battery-42');
      const { auth } = authJsClient(await authBaseUrl(t.app));
      expect((await auth.signInWithPassword({ email: 'breach@example.com', password: 'correct-Horse-battery-42' })).error).toBeNull();
      const { error } = await auth.updateUser({ password: 'PerAsperaAdAstra', current_password: 'correct-Horse-battery-42' } as Parameters<typeof auth.updateUser>[0]);
      expect(isAuthWeakPasswordError(error)).toBe(true);
      expect(error).toMatchObject({ status: 422, code: 'weak_password', reasons: ['pwned'] });
    } finally {
      await t.close();
    }
  });

  it('npm run admin -- create refuses one too', async () => {
    const t = await createTestApp();
    try {
      const res = await runCliInProcess(adminCli, ['create', 'cli-breach@example.com'], { env: { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' }, stdin: 'perasperaadastra\n' });
      expect(res.code).not.toBe(0);
      expect(res.stderr).toMatch(/known to be weak/);
      expect(await t.app.database.db.selectFrom('admin_users').select('id').where('email', '=', 'cli-breach@example.com').execute()).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
