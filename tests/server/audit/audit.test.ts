import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { auditEmailHash, listAudit, purgeExpiredAudit, recordAudit, startAuditRetention } from '../../../src/server/audit/audit-log.js';
import { createSecretBox } from '../../../src/server/crypto/secret-box.js';
import { run as runAdminCli } from '../../../src/server/cli/admin.js';
import { loadConfig } from '../../../src/server/config.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { runCliInProcess } from '../../support/server-process.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const DAY_MS = 24 * 60 * 60 * 1000;

describe.each(TEST_DIALECTS)('audit log (%s)', (dialect: TestDialect) => {
  let t: TestApp;
  const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString();
  const insertAt = (createdAt: string, action = 'sign_in') =>
    t.app.database.db
      .insertInto('audit_log')
      .values({ id: randomUUID(), created_at: createdAt, action, actor_email: null, actor_id: null, ip_address: null, detail: '{}' })
      .execute();
  const ages = async () =>
    (await t.app.database.db.selectFrom('audit_log').select('created_at').execute()).map((r) => Math.round((Date.now() - new Date(r.created_at).getTime()) / DAY_MS)).sort((a, b) => a - b);

  beforeAll(async () => {
    t = await createTestApp({}, { dialect });
  });
  afterAll(async () => {
    await t?.close();
  });
  afterEach(async () => {
    vi.useRealTimers();
    await t.app.database.db.deleteFrom('audit_log').execute();
  });

  it('AUDIT_RETENTION_DAYS defaults to 365 and is checked', () => {
    expect(loadConfig({}).auditRetentionDays).toBe(365);
    expect(loadConfig({ AUDIT_RETENTION_DAYS: '30' }).auditRetentionDays).toBe(30);
    expect(() => loadConfig({ AUDIT_RETENTION_DAYS: '0' })).toThrow(/AUDIT_RETENTION_DAYS/);
  });

  it('a server deletes the entries older than the retention when it starts', async () => {
    for (const days of [1, 29, 31, 400]) await insertAt(daysAgo(days));
    const server = await createTestApp({ DATABASE_URL: t.databaseUrl, AUDIT_RETENTION_DAYS: '30' });
    try {
      expect(await ages()).toEqual([1, 29]);
    } finally {
      await server.close();
    }
  });

  it('then once a day, until it stops', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const timersBefore = vi.getTimerCount();
    const onError = vi.fn();
    const stop = await startAuditRetention(t.app.database.db, 30, onError);
    expect(vi.getTimerCount()).toBe(timersBefore + 1);
    await insertAt(daysAgo(45));
    await insertAt(daysAgo(2));
    vi.advanceTimersByTime(DAY_MS);
    await vi.waitFor(async () => expect(await ages()).toEqual([2]));
    stop();
    expect(vi.getTimerCount()).toBe(timersBefore);
    expect(onError).not.toHaveBeenCalled();
  });

  it('purgeExpiredAudit counts what it deleted', async () => {
    await insertAt(daysAgo(10));
    await insertAt(daysAgo(3));
    expect(await purgeExpiredAudit(t.app.database.db, 5)).toBe(1);
    expect(await ages()).toEqual([3]);
  });

  it('e-mail hashes are keyed: the same address matches, a dump without the secret key cannot recompute them', () => {
    const hash = auditEmailHash(t.app.secretBox, 'Someone@Example.com');
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(auditEmailHash(t.app.secretBox, ' someone@example.com')).toBe(hash);
    expect(auditEmailHash(createSecretBox(randomBytes(32)), 'someone@example.com')).not.toBe(hash);
    expect(t.app.secretBox.hmac('someone@example.com', 'another:context')).not.toBe(hash);
  });

  it('npm run admin -- audit prints control and bidirectional characters escaped', async () => {
    const hostile = 'evil\u001b[2J\u001b]0;pwned\u0007@example.com\r\u202eredli\u2066x\u2069\u200f\u009b31m';
    await recordAudit(t.app.database.db, {
      action: 'sign_in_failed',
      actorEmail: hostile,
      actorId: null,
      ip: '203.0.113.9\u0085',
      detail: { note: 'a\u202eb\u200ec\u061cd\u0000e', path: 'C:\\x' },
    });
    const [entry] = await listAudit(t.app.database.db, 1);
    expect(entry!.actorEmail).toBe(hostile); // stored as received; only the display is escaped

    const out = await runCliInProcess(runAdminCli, ['audit', '--limit', '1'], { env: { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' } });
    expect(out.code, out.stderr).toBe(0);
    // eslint-disable-next-line no-control-regex
    expect(out.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
    const line = out.stdout.trim().split('\n')[2]!;
    expect(line).toContain('evil\\u001b[2J\\u001b]0;pwned\\u0007@example.com\\u000d\\u202eredli\\u2066x\\u2069\\u200f\\u009b31m');
    expect(line).toContain('203.0.113.9\\u0085');
    const detail = line.slice(line.indexOf('{'));
    // The detail column stays valid JSON and reads back to the stored value.
    expect(JSON.parse(detail)).toEqual({ note: 'a\u202eb\u200ec\u061cd\u0000e', path: 'C:\\x' });
  });
});
