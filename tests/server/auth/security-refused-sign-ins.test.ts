import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthService } from '../../../src/server/auth/service.js';
import { SIGN_IN_AUDIT_ROWS_PER_CLIENT } from '../../../src/server/auth/sign-in-audit.js';
import { rawSqliteOf } from '../../../src/server/db/database.js';
import { hitUnlessOver, memoryStore, overLimitMemo, type RateLimitStore } from '../../../src/server/rate-limit/index.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Security review, finding 2: a refused sign-in costs no write. A client over its limit is refused
 * from a read (no rate-limit upsert, no audit insert), its refusals of one window are one audit
 * record with a count, and a client's share of the audit log has a bound.
 */

let current: TestApp | null = null;
afterEach(async () => {
  await current?.close();
  current = null;
});

const IP = '198.51.100.44';

function attempt(app: FastifyInstance, email: string, ip = IP) {
  return app.inject({
    method: 'POST',
    url: '/auth/v1/token?grant_type=password',
    remoteAddress: ip,
    headers: { 'content-type': 'application/json', 'x-supabase-api-version': '2024-01-01' },
    payload: JSON.stringify({ email, password: 'wrong-password-x', gotrue_meta_security: {} }),
  });
}

/** What a write would change: the counters as stored, the audit rows, and on SQLite the connection's total of changed rows. */
async function snapshot(app: FastifyInstance) {
  const db = app.database.db;
  const limits = await db.selectFrom('auth_rate_limits').select(['key', 'count', 'window_start_ms']).orderBy('key').execute();
  const audit = await db.selectFrom('audit_log').select(['id', 'action', 'detail']).orderBy('id').execute();
  const sqlite = rawSqliteOf(db);
  const changes = sqlite ? (sqlite.prepare('SELECT total_changes() AS n').get() as { n: number }).n : null;
  return { limits: limits.map((r) => ({ ...r, count: Number(r.count), window_start_ms: Number(r.window_start_ms) })), audit, changes };
}

describe.each(TEST_DIALECTS)('refused sign-ins (%s)', (dialect: TestDialect) => {
  it('past the per-IP limit, a refusal writes nothing: no counter, no audit row, no change at all', async () => {
    current = await createTestApp({ AUTH_IP_MAX_ATTEMPTS: '2', AUTH_ACCOUNT_MAX_FAILURES: '1000' }, { dialect });
    const { app } = current;
    expect((await attempt(app, 'a@example.com')).statusCode).toBe(400);
    expect((await attempt(app, 'b@example.com')).statusCode).toBe(400);
    // The first refusal of the window writes its audit record.
    expect((await attempt(app, 'c@example.com')).statusCode).toBe(429);
    const before = await snapshot(app);
    // From the third refusal on, each waits a second before its 429 (a looping client is slowed down): a few suffice here.
    for (let i = 0; i < 6; i++) {
      const res = await attempt(app, `guess${i}@example.com`);
      expect(res.statusCode).toBe(429);
      expect(res.json()).toEqual({ code: 'over_request_rate_limit', message: 'Request rate limit reached' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(await snapshot(app)).toEqual(before);
    const refused = before.audit.filter((r) => r.action === 'sign_in_refused');
    expect(refused.map((r) => JSON.parse(r.detail))).toEqual([{ reason: 'ip_rate_limited', count: 1 }]);
    // Another client is not affected.
    expect((await attempt(app, 'a@example.com', '198.51.100.45')).statusCode).toBe(400);
  });

  it('past the per-account-and-client limit, a refusal writes no counter of the account', async () => {
    current = await createTestApp({ AUTH_IP_MAX_ATTEMPTS: '1000', AUTH_ACCOUNT_MAX_FAILURES: '2' }, { dialect });
    const { app } = current;
    for (let i = 0; i < 2; i++) expect((await attempt(app, 'target@example.com')).statusCode).toBe(400);
    expect((await attempt(app, 'target@example.com')).statusCode).toBe(429);
    const accountRows = async () =>
      (await snapshot(app)).limits.filter((r) => r.key.startsWith('account:')).map((r) => ({ key: r.key, count: r.count, start: r.window_start_ms }));
    const before = await accountRows();
    const auditBefore = (await snapshot(app)).audit.length;
    for (let i = 0; i < 10; i++) expect((await attempt(app, 'target@example.com')).statusCode).toBe(429);
    expect(await accountRows()).toEqual(before);
    expect((await snapshot(app)).audit.length).toBe(auditBefore);
  });

  it("a window's refusals are one audit record with their count; the next window starts another", async () => {
    current = await createTestApp({}, { dialect });
    const { app, config } = current;
    let now = Date.parse('2026-12-01T10:00:00.000Z');
    const pauses: number[] = [];
    const service = new AuthService({
      db: app.database.db,
      config: { ...config.auth, ipAttemptLimit: { max: 1, windowMs: 60_000 }, accountFailureLimit: { max: 1000, windowMs: 900_000 } },
      limits: memoryStore({ now: () => now }),
      now: () => now,
      sleep: async (ms) => void pauses.push(ms),
    });
    const signIn = (email: string) =>
      service.signInWithPassword({ email, password: 'wrong-password-x' }, { ip: IP, userAgent: null }).then(
        () => 'signed in',
        (err: { code: string }) => err.code,
      );
    expect(await signIn('first@example.com')).toBe('invalid_credentials');
    for (let i = 0; i < 25; i++) {
      now += 1000;
      expect(await signIn(`guess${i}@example.com`)).toBe('over_request_rate_limit');
    }
    now += 60_000; // a new window: one attempt counts, the next refusals are a record of their own
    expect(await signIn('second@example.com')).toBe('invalid_credentials');
    for (let i = 0; i < 3; i++) expect(await signIn(`again${i}@example.com`)).toBe('over_request_rate_limit');
    // From its third refusal in a window, a client waits a second for each 429: a looping client is slowed to about one a second.
    expect(pauses).toEqual(Array<number>(23 + 1).fill(1000)); // 23 in the first window, 1 in the second
    await service.close(); // writes the counts

    const rows = await app.database.db.selectFrom('audit_log').select(['action', 'actor_email', 'ip_address', 'detail']).where('action', '=', 'sign_in_refused').orderBy('created_at').execute();
    expect(rows.map((r) => ({ email: r.actor_email, ip: r.ip_address, ...(JSON.parse(r.detail) as object) }))).toEqual([
      { email: 'guess0@example.com', ip: IP, reason: 'ip_rate_limited', count: 25, last_at: new Date(Date.parse('2026-12-01T10:00:25.000Z')).toISOString() },
      { email: 'again0@example.com', ip: IP, reason: 'ip_rate_limited', count: 3, last_at: new Date(now).toISOString() },
    ]);
  });

  it(`a client adds at most ${SIGN_IN_AUDIT_ROWS_PER_CLIENT} + 3 audit rows a day, however long it keeps trying; the counts are all there`, async () => {
    current = await createTestApp({}, { dialect });
    const { app, config } = current;
    let now = Date.parse('2026-12-01T00:00:00.000Z');
    const windows = SIGN_IN_AUDIT_ROWS_PER_CLIENT * 3;
    const service = new AuthService({
      db: app.database.db,
      // A limit of 0: every attempt is refused, each 10-second window is a new record until the budget is spent.
      config: { ...config.auth, ipAttemptLimit: { max: 0, windowMs: 10_000 } },
      limits: memoryStore({ now: () => now }),
      now: () => now,
      sleep: async () => undefined,
    });
    let refused = 0;
    for (let w = 0; w < windows; w++) {
      for (let i = 0; i < 3; i++) {
        await service.signInWithPassword({ email: `w${w}@example.com`, password: 'x-password' }, { ip: IP, userAgent: null }).catch(() => (refused += 1));
      }
      now += 10_000;
    }
    // Another client keeps a budget of its own.
    await service.signInWithPassword({ email: 'other@example.com', password: 'x-password' }, { ip: '203.0.113.9', userAgent: null }).catch(() => undefined);
    await service.close();
    expect(refused).toBe(windows * 3);

    const rows = await app.database.db.selectFrom('audit_log').select(['ip_address', 'detail']).where('action', '=', 'sign_in_refused').execute();
    const mine = rows.filter((r) => r.ip_address === IP).map((r) => JSON.parse(r.detail) as { count: number; over_budget?: boolean });
    expect(mine.length).toBeLessThanOrEqual(SIGN_IN_AUDIT_ROWS_PER_CLIENT + 3);
    expect(mine.filter((d) => !d.over_budget)).toHaveLength(SIGN_IN_AUDIT_ROWS_PER_CLIENT);
    expect(mine.filter((d) => d.over_budget)).toHaveLength(1);
    // No refusal goes uncounted.
    expect(mine.reduce((sum, d) => sum + d.count, 0)).toBe(windows * 3);
    expect(rows.filter((r) => r.ip_address === '203.0.113.9')).toHaveLength(1);
  });

  it('a client refused again and again is answered from memory after its second refusal: no read either, until its window ends', async () => {
    let now = 1_000_000;
    const store = memoryStore({ now: () => now });
    const calls: string[] = [];
    const counted: RateLimitStore = {
      ...store,
      peek: (key, limit) => (calls.push('peek'), store.peek(key, limit)),
      hit: (key, limit) => (calls.push('hit'), store.hit(key, limit)),
    };
    const memo = { memo: overLimitMemo(), now: () => now };
    const limit = { max: 2, windowMs: 60_000 };
    const overs: boolean[] = [];
    for (let i = 0; i < 10; i++) overs.push((await hitUnlessOver(counted, 'ip:x', limit, memo)).over);
    expect(overs).toEqual([false, false, true, true, true, true, true, true, true, true]);
    expect(calls).toEqual(['peek', 'hit', 'peek', 'hit', 'peek', 'peek']);
    const state = await hitUnlessOver(counted, 'ip:x', limit, memo);
    expect(state.resetInMs).toBe(60_000);
    now += 60_000; // the window is over: counted again
    expect((await hitUnlessOver(counted, 'ip:x', limit, memo)).over).toBe(false);
    expect(calls.slice(6)).toEqual(['peek', 'hit']);
  });
});
