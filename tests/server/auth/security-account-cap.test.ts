import { afterEach, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import type { AuthApiError } from '../../../src/server/auth/errors.js';
import { AuthService } from '../../../src/server/auth/service.js';
import { memoryStore } from '../../../src/server/rate-limit/index.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Security review, finding 3: a per-account cap on failed sign-ins per hour from all clients
 * together slows a distributed guess down as a whole (the account's slowed checks wait in one line),
 * without letting a stranger lock the owner out (it delays, and the owner's usual address skips
 * the line).
 */

const PASSWORD = 'correct-Horse-battery-42';

let current: TestApp | null = null;
afterEach(async () => {
  await current?.close();
  current = null;
});

describe.each(TEST_DIALECTS)('the account-wide cap on failed sign-ins (%s)', (dialect: TestDialect) => {

  async function service(options: { sleep?: (ms: number) => Promise<void>; now?: () => number; max?: number } = {}) {
    current = await createTestApp({}, { dialect });
    const { app, config } = current;
    await createAdmin(app.database.db, 'target@example.com', PASSWORD);
    const now = options.now ?? Date.now;
    return new AuthService({
      db: app.database.db,
      // The per-client window stays 15 minutes; the account-wide count is per hour regardless.
      config: { ...config.auth, accountFailureLimit: { max: options.max ?? 2, windowMs: 900_000 }, ipAttemptLimit: { max: 1000, windowMs: 300_000 } },
      limits: memoryStore({ now }),
      now,
      sleep: options.sleep ?? (async () => undefined),
    });
  }
  const attempt = (auth: AuthService, ip: string, password = 'wrong-password-x') =>
    auth.signInWithPassword({ email: 'target@example.com', password }, { ip, userAgent: null }).then(
      () => 'signed in',
      (err: AuthApiError) => err.code,
    );

  it('counts failures from every client over the hour: guesses 20 and 50 minutes later are still slowed', async () => {
    let now = Date.parse('2026-12-01T10:00:00.000Z');
    const sleeps: number[] = [];
    const auth = await service({ now: () => now, sleep: async (ms) => void sleeps.push(ms) });
    for (let i = 0; i < 3; i++) expect(await attempt(auth, `198.51.100.${i}`)).toBe('invalid_credentials');
    expect(sleeps).toEqual([250]);
    now += 20 * 60_000; // past the 15-minute per-client window
    expect(await attempt(auth, '198.51.100.20')).toBe('invalid_credentials');
    now += 30 * 60_000;
    expect(await attempt(auth, '198.51.100.50')).toBe('invalid_credentials');
    expect(sleeps).toEqual([250, 500, 1000]);
    // The right password is slowed, never refused.
    expect(await attempt(auth, '198.51.100.51', PASSWORD)).toBe('signed in');
    expect(sleeps).toEqual([250, 500, 1000, 2000]);
    now += 11 * 60_000; // the hour is over
    expect(await attempt(auth, '198.51.100.52')).toBe('invalid_credentials');
    expect(sleeps).toHaveLength(4);
    await auth.close();
  });

  it('guesses sent at once from many addresses are checked one at a time, each after its pause', async () => {
    let inPause = 0;
    let mostAtOnce = 0;
    const pauses: number[] = [];
    const auth = await service({
      sleep: async (ms) => {
        pauses.push(ms);
        inPause += 1;
        mostAtOnce = Math.max(mostAtOnce, inPause);
        await new Promise((resolve) => setTimeout(resolve, 20));
        inPause -= 1;
      },
    });
    for (let i = 0; i < 2; i++) expect(await attempt(auth, `198.51.100.${i}`)).toBe('invalid_credentials');
    const started = Date.now();
    const answers = await Promise.all([10, 11, 12, 13, 14].map((n) => attempt(auth, `203.0.113.${n}`)));
    expect(answers).toEqual(Array(5).fill('invalid_credentials'));
    expect(pauses).toEqual([250, 250, 250, 250, 250]); // each counted the failures before any of them
    expect(mostAtOnce).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(5 * 20);
    await auth.close();
  });

  it('a full line turns strangers away with Retry-After; the owner from a known address gets through; nothing is locked', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    const auth = await service({ max: 1, sleep: async () => (holding ? held : undefined) });
    expect(await attempt(auth, '192.0.2.1', PASSWORD)).toBe('signed in'); // the owner's usual address
    for (let i = 0; i < 8; i++) expect(await attempt(auth, `198.51.100.${i}`)).toBe('invalid_credentials');
    // Now every check pauses 5 s: one waits in line (held here), the next would wait past 8 s.
    holding = true;
    const first = attempt(auth, '203.0.113.1');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const turnedAway = await auth
      .signInWithPassword({ email: 'target@example.com', password: 'wrong-password-y' }, { ip: '203.0.113.2', userAgent: null })
      .catch((err: AuthApiError) => err);
    expect(turnedAway).toMatchObject({ statusCode: 429, code: 'over_request_rate_limit', headers: { 'retry-after': '5' } });
    // The owner's address skips the line (its own pause only): in while strangers are turned away.
    holding = false;
    expect(await attempt(auth, '192.0.2.1', PASSWORD)).toBe('signed in');
    release();
    expect(await first).toBe('invalid_credentials');
    // Once the line is free, the right password works from a new address too: slowed, never locked.
    expect(await attempt(auth, '203.0.113.3', PASSWORD)).toBe('signed in');
    await auth.close();
    const refused = await current!.app.database.db.selectFrom('audit_log').select(['detail']).where('action', '=', 'sign_in_refused').execute();
    expect(refused.map((r) => JSON.parse(r.detail) as object)).toEqual([{ reason: 'account_slowed', count: 1 }]);
  });
});
