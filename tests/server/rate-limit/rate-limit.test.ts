import { randomBytes } from 'node:crypto';
import net from 'node:net';
import rateLimit from '@fastify/rate-limit';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/server/config.js';
import { openDatabase, type DatabaseHandle } from '../../../src/server/db/database.js';
import { migrateToLatest } from '../../../src/server/db/migrate.js';
import {
  createRateLimitStores,
  databaseStore,
  DEFAULT_REDIS_PREFIX,
  limitKey,
  memoryStore,
  redisStore,
  retryAfterSeconds,
  withFallback,
  type RateLimitStore,
} from '../../../src/server/rate-limit/index.js';
import { clientRateLimitHook } from '../../../src/server/rate-limit/hook.js';
import { SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { createScratchPostgres, describeWhen, itWhen, TEST_DIALECTS, TEST_REDIS_URL, type TestDialect } from '../../support/databases.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/** Redis suites run when TEST_REDIS_URL names a server; every key this file writes carries a per-run prefix and is deleted afterwards. */
const REDIS_URL = TEST_REDIS_URL ?? '';
const redisUp = TEST_REDIS_URL !== null;
const RUN_PREFIX = `test:rl:${randomBytes(6).toString('hex')}:`;

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const silentLog = { error: () => undefined, info: () => undefined };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Harness {
  store: RateLimitStore;
  /** Long enough for a test's hits to land in one window, short enough to wait out on Redis. */
  windowMs: number;
  /** Lets `ms` pass for the store (a fake clock, or a real wait on Redis). */
  advance(ms: number): Promise<void>;
  cleanUp(): Promise<void>;
}

async function openMigrated(dialect: TestDialect): Promise<{ handle: DatabaseHandle; drop(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const handle = openDatabase({ dialect: 'sqlite', filename: ':memory:' });
    await migrateToLatest(handle.db);
    return { handle, drop: () => handle.close() };
  }
  const scratch = await createScratchPostgres();
  const handle = openDatabase({ dialect: 'postgres', connectionString: scratch.url });
  return {
    handle,
    drop: async () => {
      await handle.close();
      await scratch.drop();
    },
  };
}

function fakeClock() {
  let at = 1_700_000_000_000;
  return { now: () => at, advance: async (ms: number) => void (at += ms) };
}

const harnesses: Array<[string, () => Promise<Harness>]> = [
  [
    'memory',
    async () => {
      const clock = fakeClock();
      return { store: memoryStore({ now: clock.now }), windowMs: 60_000, advance: clock.advance, cleanUp: async () => {} };
    },
  ],
  ...TEST_DIALECTS.map((dialect): [string, () => Promise<Harness>] => [
    `database (${dialect})`,
    async () => {
      const clock = fakeClock();
      const { handle, drop } = await openMigrated(dialect);
      return { store: databaseStore(handle.db, { now: clock.now }), windowMs: 60_000, advance: clock.advance, cleanUp: drop };
    },
  ]),
  ...(redisUp
    ? [
        [
          'redis',
          async (): Promise<Harness> => {
            const prefix = `${RUN_PREFIX}${randomBytes(4).toString('hex')}:`;
            const store = await redisStore(REDIS_URL, { prefix, log: silentLog });
            return {
              store,
              windowMs: 400,
              advance: async (ms) => {
                await sleep(ms);
              },
              cleanUp: async () => {
                await store.close();
                await deleteKeys(`${prefix}*`);
              },
            };
          },
        ] as [string, () => Promise<Harness>],
      ]
    : []),
];

async function deleteKeys(pattern: string): Promise<void> {
  const client = new Redis(REDIS_URL);
  try {
    for await (const keys of client.scanStream({ match: pattern, count: 500 }) as AsyncIterable<string[]>) {
      if (keys.length > 0) await client.del(...keys);
    }
  } finally {
    client.disconnect();
  }
}

afterAll(async () => {
  if (redisUp) await deleteKeys(`${RUN_PREFIX}*`);
});

describe.each(harnesses)('rate-limit store: %s', (_name, open) => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.cleanUp();
    h = undefined;
  });
  const start = async () => (h = await open());

  it('counts hits per key in a fixed window and tells when it ends', async () => {
    const { store, windowMs } = await start();
    const limit = { max: 3, windowMs };
    const first = await store.hit('ip:a', limit);
    expect(first.count).toBe(1);
    expect(first.resetInMs).toBeGreaterThan(0);
    expect(first.resetInMs).toBeLessThanOrEqual(windowMs);
    expect((await store.hit('ip:a', limit)).count).toBe(2);
    const third = await store.hit('ip:a', limit);
    expect(third.count).toBe(3);
    expect(third.resetInMs).toBeLessThanOrEqual(first.resetInMs);
    expect((await store.hit('ip:b', limit)).count).toBe(1);
    expect(retryAfterSeconds(third)).toBeGreaterThanOrEqual(1);
  });

  it('starts a new window once the old one has passed', async () => {
    const { store, windowMs, advance } = await start();
    const limit = { max: 1, windowMs };
    await store.hit('account:x', limit);
    await store.hit('account:x', limit);
    await advance(windowMs + 50);
    const next = await store.hit('account:x', limit);
    expect(next.count).toBe(1);
    expect(next.resetInMs).toBeGreaterThan(windowMs / 2);
  });

  it('peek reads without counting; reset forgets the key', async () => {
    const { store, windowMs, advance } = await start();
    const limit = { max: 5, windowMs };
    expect(await store.peek('signup:p', limit)).toEqual({ count: 0, resetInMs: 0 });
    await store.hit('signup:p', limit);
    await store.hit('signup:p', limit);
    const seen = await store.peek('signup:p', limit);
    expect(seen.count).toBe(2);
    expect(seen.resetInMs).toBeGreaterThan(0);
    expect((await store.peek('signup:p', limit)).count).toBe(2);
    await store.reset('signup:p');
    expect((await store.peek('signup:p', limit)).count).toBe(0);
    expect((await store.hit('signup:p', limit)).count).toBe(1);
    await advance(windowMs + 50);
    expect((await store.peek('signup:p', limit)).count).toBe(0);
    await store.reset('never-seen'); // not an error
  });

  it('is atomic: concurrent hits each get their own count', async () => {
    const { store, windowMs } = await start();
    const limit = { max: 100, windowMs: Math.max(windowMs, 5_000) };
    const states = await Promise.all(Array.from({ length: 40 }, () => store.hit('ip:burst', limit)));
    expect(states.map((s) => s.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });
});

describe('memory store', () => {
  it('keeps at most maxKeys windows, dropping the oldest', async () => {
    const store = memoryStore({ maxKeys: 3 });
    const limit = { max: 10, windowMs: 60_000 };
    for (const key of ['a', 'b', 'c', 'd']) await store.hit(key, limit);
    expect((await store.peek('a', limit)).count).toBe(0);
    expect((await store.peek('d', limit)).count).toBe(1);
    expect((await store.peek('b', limit)).count).toBe(1);
  });
});

describe.each(TEST_DIALECTS)('database store (%s)', (dialect) => {
  it('keeps its windows in auth_rate_limits, under the hashed key', async () => {
    const { handle, drop } = await openMigrated(dialect);
    try {
      const store = databaseStore(handle.db);
      const key = limitKey('signup', '198.51.100.7');
      await store.hit(key, { max: 2, windowMs: 60_000 });
      const rows = await handle.db.selectFrom('auth_rate_limits').selectAll().execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]!.key).toBe(key);
      expect(rows[0]!.key).toMatch(/^signup:[\w-]{43}$/);
      expect(Number(rows[0]!.count)).toBe(1);
    } finally {
      await drop();
    }
  });
});

describeWhen(redisUp)('redis store', () => {
  it('prefixes keys and gives every window an expiry', async () => {
    const prefix = `${RUN_PREFIX}expiry:`;
    const store = await redisStore(REDIS_URL, { prefix, log: silentLog });
    const client = new Redis(REDIS_URL);
    try {
      await store.hit('ip:e', { max: 5, windowMs: 30_000 });
      const ttl = await client.pttl(`${prefix}ip:e`);
      expect(ttl).toBeGreaterThan(25_000);
      expect(ttl).toBeLessThanOrEqual(30_000);
      // A key left without an expiry (by hand, or by an older client) gets one on the next hit.
      await client.set(`${prefix}ip:stuck`, '7');
      const state = await store.hit('ip:stuck', { max: 5, windowMs: 30_000 });
      expect(state.count).toBe(8);
      expect(await client.pttl(`${prefix}ip:stuck`)).toBeGreaterThan(0);
    } finally {
      await store.close();
      client.disconnect();
    }
  });
});

describe('redis store, server unreachable', () => {
  it('starts anyway and fails every call fast instead of queueing it', async () => {
    const errors: unknown[] = [];
    const store = await redisStore(`redis://127.0.0.1:${await closedPort()}`, {
      log: { error: (obj: unknown) => void errors.push(obj), info: () => undefined },
    });
    try {
      const started = Date.now();
      await expect(store.hit('ip:z', { max: 1, windowMs: 1000 })).rejects.toThrow();
      await expect(store.reset('ip:z')).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(500);
      expect(errors).toHaveLength(1); // the connection failure, once, not once per retry
    } finally {
      await store.close();
    }
  });
});

describe('withFallback', () => {
  function failing(): RateLimitStore {
    const boom = () => Promise.reject(new Error('redis down'));
    return { kind: 'redis', hit: boom, peek: boom, reset: boom, resetPrefix: boom, close: async () => {} };
  }

  it('counts in the fallback while the primary fails, logging once per interval', async () => {
    const errors: unknown[] = [];
    const log = { error: (obj: unknown) => void errors.push(obj), info: () => undefined };
    const fallback = memoryStore();
    const store = withFallback(failing(), fallback, log, 'signups');
    const limit = { max: 2, windowMs: 60_000 };
    expect((await store.hit('k', limit)).count).toBe(1);
    expect((await store.hit('k', limit)).count).toBe(2);
    expect((await store.hit('k', limit)).count).toBe(3);
    expect((await store.peek('k', limit)).count).toBe(3);
    await store.reset('k');
    expect((await fallback.peek('k', limit)).count).toBe(0);
    expect(errors).toHaveLength(1);
    expect(String((errors[0] as { err: Error }).err.message)).toBe('redis down');
  });

  it('leaves the fallback alone while the primary works', async () => {
    const primary = memoryStore();
    const fallback = memoryStore();
    const store = withFallback(primary, fallback, silentLog, 'signups');
    await store.hit('k', { max: 1, windowMs: 60_000 });
    expect((await primary.peek('k', { max: 1, windowMs: 60_000 })).count).toBe(1);
    expect((await fallback.peek('k', { max: 1, windowMs: 60_000 })).count).toBe(0);
  });
});

describe('createRateLimitStores: which store counts what', () => {
  it('SQLite: signups in memory, sign-in attempts in the database', async () => {
    const { handle, drop } = await openMigrated('sqlite');
    try {
      const stores = await createRateLimitStores(loadConfig({}), handle, silentLog);
      expect([stores.signups.kind, stores.signIn.kind]).toEqual(['memory', 'database']);
      await stores.close();
    } finally {
      await drop();
    }
  });

  itWhen(TEST_DIALECTS.includes('postgres'))('PostgreSQL: the database for both', async () => {
    const { handle, drop } = await openMigrated('postgres');
    try {
      const stores = await createRateLimitStores(loadConfig({}), handle, silentLog);
      expect([stores.signups.kind, stores.signIn.kind]).toEqual(['database', 'database']);
      await stores.close();
    } finally {
      await drop();
    }
  });

  it('REDIS_URL set: Redis for both, whatever the database', async () => {
    const { handle, drop } = await openMigrated('sqlite');
    try {
      const url = `redis://127.0.0.1:${await closedPort()}`;
      const stores = await createRateLimitStores(loadConfig({ REDIS_URL: url }), handle, silentLog);
      expect([stores.signups.kind, stores.signIn.kind]).toEqual(['redis', 'redis']);
      // Unreachable: sign-in attempts are counted in the database meanwhile.
      const limit = { max: 3, windowMs: 60_000 };
      expect((await stores.signIn.hit(limitKey('ip', '192.0.2.1'), limit)).count).toBe(1);
      expect(await handle.db.selectFrom('auth_rate_limits').select('key').execute()).toEqual([{ key: limitKey('ip', '192.0.2.1') }]);
      await stores.close();
    } finally {
      await drop();
    }
  });

  it('rejects a REDIS_URL that is not a redis:// URL', () => {
    expect(() => loadConfig({ REDIS_URL: 'localhost:6379' })).toThrow(/REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL/);
    expect(loadConfig({ REDIS_URL: '  ' }).redisUrl).toBeNull();
    expect(loadConfig({ REDIS_URL: 'rediss://cache.internal:6380/2' }).redisUrl).toBe('rediss://cache.internal:6380/2');
  });
});

describe('signup limit through the chosen store', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  /** A client address of its own per call, so runs sharing a Redis never share a bucket. */
  const randomAddress = () => `10.${[0, 0, 0].map(() => randomBytes(1)[0]! % 250).join('.')}`;
  const signUp = (app: TestApp['app'], n: number, ip: string, form = false) =>
    app.inject({
      method: 'POST',
      url: SIGNUP_PATH,
      remoteAddress: ip,
      headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' },
      payload: form ? `email=limit${n}%40example.com` : JSON.stringify({ email: `limit${n}@example.com` }),
    });

  async function expectLimitedAfter(app: TestApp['app'], max: number, ip: string) {
    for (let i = 0; i < max; i++) expect((await signUp(app, i, ip)).statusCode).toBe(201);
    const limited = await signUp(app, max, ip);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ error: { code: 'rate_limited', message: 'Too many signup attempts. Please wait a minute and try again.' } });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    const form = await signUp(app, max + 1, ip, true);
    expect(form.statusCode).toBe(429);
    expect(form.headers['content-type']).toBe('text/html; charset=utf-8');
  }

  itWhen(TEST_DIALECTS.includes('postgres'))('PostgreSQL: counted in auth_rate_limits (hashed key), 429 after the limit', async () => {
    t = await createTestApp({ SIGNUP_RATE_LIMIT_MAX: '2' }, { dialect: 'postgres' });
    await expectLimitedAfter(t.app, 2, '198.51.100.20');
    const rows = await t.app.database.db.selectFrom('auth_rate_limits').selectAll().execute();
    expect(rows.map((r) => [r.key, Number(r.count)])).toEqual([[limitKey('signup', '198.51.100.20'), 4]]);
  });

  itWhen(redisUp)('Redis: counted under waitlist:rl:signup:<hash>, 429 after the limit; nothing in the database', async () => {
    t = await createTestApp({ SIGNUP_RATE_LIMIT_MAX: '2', REDIS_URL });
    const ip = randomAddress();
    const key = `${DEFAULT_REDIS_PREFIX}${limitKey('signup', ip)}`;
    const client = new Redis(REDIS_URL);
    try {
      await expectLimitedAfter(t.app, 2, ip);
      expect(await client.get(key)).toBe('4');
      expect(await client.pttl(key)).toBeGreaterThan(0);
      expect(await t.app.database.db.selectFrom('auth_rate_limits').selectAll().execute()).toEqual([]);
    } finally {
      await client.del(key);
      client.disconnect();
    }
  });

  it('Redis unreachable: signups still answer, limited per instance meanwhile', async () => {
    t = await createTestApp({ SIGNUP_RATE_LIMIT_MAX: '2', REDIS_URL: `redis://127.0.0.1:${await closedPort()}` });
    await expectLimitedAfter(t.app, 2, '198.51.100.30');
  });
});

describe('memory store under churn', () => {
  it('sweeps expired windows, skips reset ones and still drops the oldest live window past maxKeys', async () => {
    const clock = fakeClock();
    const store = memoryStore({ maxKeys: 3, now: clock.now });
    const limit = { max: 10, windowMs: 1_000 };
    await store.hit('a', limit);
    await store.hit('b', limit);
    await store.reset('a'); // its queued window is now stale
    await store.hit('c', limit);
    await store.hit('d', limit); // 3 live keys (b, c, d): nothing dropped yet
    expect((await store.peek('b', limit)).count).toBe(1);
    await store.hit('e', limit); // past maxKeys: b, the oldest live window, goes (stale a is skipped)
    expect((await store.peek('b', limit)).count).toBe(0);
    expect((await store.peek('c', limit)).count).toBe(1);
    await clock.advance(1_000);
    expect((await store.hit('c', limit)).count).toBe(1); // a new window once the old one has passed
    for (let i = 0; i < 5_000; i++) await store.hit(`k${i}`, limit);
    expect((await store.peek('k4999', limit)).count).toBe(1);
    expect((await store.peek('k0', limit)).count).toBe(0);
  });
});

describe('clientRateLimitHook: the signup limit as @fastify/rate-limit answered it', () => {
  const MAX = 3;
  async function apps() {
    const plugin = Fastify();
    await plugin.register(rateLimit, { global: false });
    plugin.post('/x', { config: { rateLimit: { max: MAX, timeWindow: 60_000, ipv6Subnet: 64 } } }, async () => 'ok');
    const hook = Fastify();
    hook.post('/x', { onRequest: clientRateLimitHook({ store: memoryStore(), kind: 'signup', max: MAX, windowMs: 60_000, error: () => Object.assign(new Error('Rate limit exceeded'), { statusCode: 429 }) }) }, async () => 'ok');
    return [plugin, hook] as const;
  }
  const limitHeaders = (res: { statusCode: number; headers: Record<string, unknown> }) => ({
    status: res.statusCode,
    limit: res.headers['x-ratelimit-limit'],
    remaining: res.headers['x-ratelimit-remaining'],
    reset: res.headers['x-ratelimit-reset'],
    retryAfter: res.headers['retry-after'],
  });

  it('counts per client address (mapped IPv4 folded, IPv6 per /64) with the same headers', async () => {
    const [plugin, hook] = await apps();
    try {
      // One client as IPv4 and mapped; two hosts of one IPv6 /64; a neighbouring /64 is another client.
      const sequence = ['198.51.100.9', '::ffff:198.51.100.9', '198.51.100.9', '198.51.100.9', '2001:db8:1:2::1', '2001:db8:1:2:ffff::9', '2001:DB8:1:2::3', '2001:db8:1:2::4', '2001:db8:1:3::1'];
      for (const remoteAddress of sequence) {
        const [a, b] = await Promise.all([plugin, hook].map((app) => app.inject({ method: 'POST', url: '/x', remoteAddress })));
        expect(limitHeaders(b!), remoteAddress).toEqual(limitHeaders(a!));
      }
    } finally {
      await Promise.all([plugin.close(), hook.close()]);
    }
  });
});
