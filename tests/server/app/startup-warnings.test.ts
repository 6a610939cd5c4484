import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig, proxyTrustWarning } from '../../../src/server/config.js';
import { createTestApp } from '../../support/test-app.js';

/** Builds the real app with a logger writing into a list, and returns the warnings it logged at start. */
async function startupWarnings(env: Record<string, string>): Promise<string[]> {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const t = await createTestApp(env, { logger: { level: 'warn', stream } });
  await t.close();
  return lines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((l) => l.level === 40).map((l) => l.msg);
}

describe('TRUST_PROXY as a hop count on every interface', () => {
  it.each([
    { TRUST_PROXY: '1', HOST: '0.0.0.0', warns: true },
    { TRUST_PROXY: '2', HOST: '::', warns: true },
    { TRUST_PROXY: 'true', HOST: '0.0.0.0', warns: true },
    { TRUST_PROXY: '1', HOST: '127.0.0.1', warns: false },
    { TRUST_PROXY: '127.0.0.1', HOST: '0.0.0.0', warns: false },
    { TRUST_PROXY: '10.0.0.0/8,127.0.0.1', HOST: '::', warns: false },
    { TRUST_PROXY: '', HOST: '0.0.0.0', warns: false },
  ])('TRUST_PROXY=$TRUST_PROXY HOST=$HOST: warning $warns', ({ warns, ...env }) => {
    const warning = proxyTrustWarning(loadConfig(env));
    if (warns) expect(warning).toMatch(/can forge its address.*TRUST_PROXY=127\.0\.0\.1/);
    else expect(warning).toBeNull();
  });

  it('the server logs the warning at start', async () => {
    const warnings = await startupWarnings({ TRUST_PROXY: '1', HOST: '0.0.0.0' });
    expect(warnings.filter((m) => m.includes('can forge its address'))).toHaveLength(1);
  });

  it('and not with the address form', async () => {
    const warnings = await startupWarnings({ TRUST_PROXY: '127.0.0.1', HOST: '0.0.0.0' });
    expect(warnings.filter((m) => m.includes('can forge its address'))).toEqual([]);
  });
});

describe('files that others can read', () => {
  it('the server warns about a key file or database others can read, and leaves their modes alone', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loose-files-'));
    try {
      const keyFile = path.join(dir, 'auth-secret.key');
      const dbFile = path.join(dir, 'waitlist.db');
      fs.writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`);
      fs.chmodSync(keyFile, 0o644);
      fs.writeFileSync(dbFile, '');
      fs.chmodSync(dbFile, 0o640);
      const warnings = await startupWarnings({ AUTH_SECRET_KEY_FILE: keyFile, DATABASE_URL: `file:${dbFile}` });
      expect(warnings).toContain(`${keyFile} is readable or writable by other users (mode 644); restrict it with: chmod 600 "${keyFile}"`);
      expect(warnings).toContain(`${dbFile} is readable or writable by other users (mode 640); restrict it with: chmod 600 "${dbFile}"`);
      expect(fs.statSync(keyFile).mode & 0o777).toBe(0o644);
      expect(fs.statSync(dbFile).mode & 0o777).toBe(0o640);

      fs.chmodSync(keyFile, 0o600);
      fs.chmodSync(dbFile, 0o600);
      expect((await startupWarnings({ AUTH_SECRET_KEY_FILE: keyFile, DATABASE_URL: `file:${dbFile}` })).filter((m) => m.includes('other users'))).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
