import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTsxScript } from '../../support/tsx-script.js';
import { createScratchPostgres, itWhen, TEST_REDIS_URL, type ScratchPostgres } from '../../support/databases.js';

/**
 * What a server holds in memory: the clients only some configurations need are loaded only by
 * those (runtime/optional-module.ts), and the password estimate's dictionaries never enter the
 * server's own thread (auth/guess-estimator.ts), even after an admin is created and signs in.
 */
const OPTIONAL = ['pg', 'ioredis', 'nodemailer', 'qrcode'];
const ESTIMATE = ['@zxcvbn-ts/core', '@zxcvbn-ts/language-common', '@zxcvbn-ts/language-en'];

async function loadedPackages(env: Record<string, string>): Promise<{ packages: string[]; checkpointThread: boolean }> {
  return runTsxScript('tests/support/loaded-packages.ts', [], {
    // SIGNUP_CHECK_MX off: no test depends on the network's DNS (the script signs up at example.com).
    env: { LOG_LEVEL: 'warn', AUTH_SECRET_KEY: randomBytes(32).toString('base64'), SIGNUP_CHECK_MX: 'off', ...env },
  });
}

describe('a server loads what its configuration uses', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lean-start-'));
  let scratch: ScratchPostgres | null = null;
  afterAll(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await scratch?.drop();
  });

  it('on SQLite without Redis or SMTP: none of the optional clients, no password dictionaries; checkpoints in their thread', async () => {
    const { packages, checkpointThread } = await loadedPackages({ DATABASE_URL: `file:${path.join(dir, 'lean.db')}` });
    expect(checkpointThread).toBe(true);
    expect(packages).toContain('fastify');
    expect(packages).toContain('better-sqlite3');
    expect(packages.filter((p) => OPTIONAL.includes(p) || ESTIMATE.includes(p))).toEqual([]);
  });

  itWhen(Boolean(process.env.TEST_DATABASE_URL && TEST_REDIS_URL))('on PostgreSQL with Redis: pg and ioredis, still no password dictionaries', async () => {
    scratch = await createScratchPostgres();
    const { packages, checkpointThread } = await loadedPackages({ DATABASE_URL: scratch.url, REDIS_URL: TEST_REDIS_URL! });
    expect(checkpointThread).toBe(false);
    expect(packages).toEqual(expect.arrayContaining(['pg', 'ioredis']));
    expect(packages.filter((p) => ESTIMATE.includes(p))).toEqual([]);
  });
});
