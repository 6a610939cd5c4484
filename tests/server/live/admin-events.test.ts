import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createParser } from 'eventsource-parser';
import type { FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/server/app.js';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { signAccessToken } from '../../../src/server/auth/tokens.js';
import { loadConfig } from '../../../src/server/config.js';
import { LISTENER_APPLICATION_NAME, MAX_MESSAGE_BYTES, memoryPubSub, postgresPubSub, redisPubSub, type PubSub } from '../../../src/server/pubsub/index.js';
import { openDatabase } from '../../../src/server/db/database.js';
import { createLinkToken } from '../../../src/server/consent/links.js';
import { signupMessages } from '../../../src/server/live/updates.js';
import { findWaitlistEntryByEmail } from '../../../src/server/db/waitlist-entries.js';
import { ADMIN_DELETE_MATCHING_PATH, ADMIN_DELETE_PATH, ADMIN_EVENTS_PATH, ADMIN_INVITE_PATH, waitlistEventSchemas } from '../../../src/shared/admin/waitlist-api.js';
import { ERASE_API_PATH, UNSUBSCRIBE_API_PATH } from '../../../src/shared/waitlist/consent-contract.js';
import { NO_ATTRIBUTION } from '../../../src/shared/waitlist/attribution.js';
import { NO_CONSENT_RECORD, type WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { createScratchPostgres, describeWhen, TEST_DIALECTS, TEST_REDIS_URL, type ScratchPostgres, type TestDialect } from '../../support/databases.js';
import { signIn } from '../../support/sign-in.js';
import { startSmtpServer } from '../../support/smtp.js';
import { createTestApp, noGeolocation, type TestApp } from '../../support/test-app.js';

/**
 * The admin's live updates (issue 10 point 4) over real HTTP: the stream's guard and headers, the
 * events a signup or a change produces, the stream's end (sign-out, idle session, token expiry,
 * shutdown), and delivery across two instances through PostgreSQL LISTEN/NOTIFY and Redis.
 */

const ADMIN = { email: 'admin@example.com', password: 'correct horse battery staple' };
/** Only a bound for a wait that should end much sooner: a failure shows up as this timeout. */
const WAIT_MS = 20_000;
/** Short intervals, so the tests wait for heartbeats and session checks in milliseconds. */
const FAST = { heartbeatMs: 50, sessionCheckMs: 50 };

type Received = { type: string; data: unknown };

/** A text/event-stream reader over fetch (the way the admin page reads it: EventSource cannot send a Bearer token). */
class EventStream {
  readonly events: Received[] = [];
  comments = 0;
  ended = false;
  private taken = 0;
  private wake: Array<() => void> = [];
  readonly closed: Promise<void>;

  private constructor(
    readonly response: Response,
    private readonly abort: AbortController,
  ) {
    const parser = createParser({
      onEvent: (message) => {
        this.events.push({ type: message.event ?? 'message', data: JSON.parse(message.data) });
        this.notify();
      },
      onComment: () => {
        this.comments += 1;
        this.notify();
      },
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    this.closed = (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parser.feed(decoder.decode(value, { stream: true }));
        }
      } catch {
        // aborted by close()
      } finally {
        this.ended = true;
        this.notify();
      }
    })();
  }

  static async open(base: string, token: string | null, headers: Record<string, string> = {}): Promise<{ response: Response; stream: EventStream | null }> {
    const abort = new AbortController();
    const response = await fetch(`${base}${ADMIN_EVENTS_PATH}`, {
      headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...headers },
      signal: abort.signal,
    });
    if (response.status !== 200) return { response, stream: null };
    return { response, stream: new EventStream(response, abort) };
  }

  /** Opens a stream that must succeed, and waits for its `ready`. */
  static async ready(base: string, token: string): Promise<EventStream> {
    const { response, stream } = await EventStream.open(base, token);
    expect(response.status, await (stream ? Promise.resolve('') : response.text())).toBe(200);
    const first = await stream!.next();
    expect(first.type).toBe('ready');
    return stream!;
  }

  private notify(): void {
    for (const wake of this.wake.splice(0)) wake();
  }

  private async until<T>(what: string, ready: () => T | undefined): Promise<T> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const value = ready();
      if (value !== undefined) return value;
      if (this.ended) throw new Error(`stream ended while waiting for ${what}; got ${JSON.stringify(this.events)}`);
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`no ${what} within ${WAIT_MS} ms; got ${JSON.stringify(this.events)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The next event not taken yet, in order. */
  next(): Promise<Received> {
    return this.until('event', () => (this.taken < this.events.length ? this.events[this.taken++] : undefined));
  }

  /** Waits until `count` heartbeat comments have arrived in all. */
  heartbeats(count: number): Promise<true> {
    return this.until(`${count} heartbeats`, () => (this.comments >= count ? true : undefined));
  }

  /** Waits for the server to end the stream. */
  async end(): Promise<void> {
    await this.until('the end of the stream', () => (this.ended ? true : undefined)).catch((err: unknown) => {
      if (!this.ended) throw err;
    });
  }

  /** Disconnects, as a closed tab does. */
  close(): void {
    this.abort.abort();
  }
}

/** Takes signup events until every id in `ids` arrived; fails on a duplicate or on another event type. */
async function collectSignups(stream: EventStream, ids: readonly string[]): Promise<WaitlistEntry[][]> {
  const missing = new Set(ids);
  const seen = new Set<string>();
  const batches: WaitlistEntry[][] = [];
  while (missing.size > 0) {
    const event = await stream.next();
    expect(event.type).toBe('signup');
    const { entries } = waitlistEventSchemas.signup.parse(event.data);
    for (const entry of entries) {
      expect(seen.has(entry.id), `${entry.id} sent twice`).toBe(false);
      seen.add(entry.id);
      missing.delete(entry.id);
    }
    batches.push(entries);
  }
  return batches;
}

function signUp(base: string, email: string): Promise<Response> {
  return fetch(`${base}${SIGNUP_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}`;
}

/** Polls a condition (for what only a query can show, like a new listener connection) until it holds. */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let seq = 0;
function entry(createdAt: string): WaitlistEntry {
  seq += 1;
  return { id: randomUUID(), email: `live${seq}@example.com`, created_at: createdAt, ip_address: null, country: null, city: null, region: null, ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION };
}

describe.each(TEST_DIALECTS)('admin event stream (%s)', (dialect: TestDialect) => {
  let t: TestApp | undefined;
  let base: string;
  let token: string;

  beforeEach(async () => {
    t = await createTestApp({ SIGNUP_RATE_LIMIT_MAX: '1000' }, { dialect, adminEvents: FAST });
    await createAdmin(t.app.database.db, ADMIN.email, ADMIN.password);
    base = await listen(t.app);
    token = (await signIn(base, ADMIN)).access_token;
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('answers 401 without a token, with a bad one and with a signed-out one', async () => {
    const { token: other } = { token: (await signIn(base, ADMIN)).access_token };
    expect((await fetch(`${base}/auth/v1/logout?scope=local`, { method: 'POST', headers: { authorization: `Bearer ${other}` } })).status).toBe(204);
    for (const [name, auth] of [
      ['no token', null],
      ['a garbage token', 'not-a-jwt'],
      ['a forged token', `${token.split('.').slice(0, 2).join('.')}.${Buffer.from('forged').toString('base64url')}`],
      ['a signed-out session', other],
    ] as const) {
      const { response, stream } = await EventStream.open(base, auth);
      expect(response.status, name).toBe(401);
      expect(stream).toBeNull();
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(await response.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    }
  });

  it('sends ready first, uncompressed and unbuffered, then heartbeat comments', async () => {
    const { response, stream } = await EventStream.open(base, token, { 'accept-encoding': 'br, gzip' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    expect(response.headers.get('content-encoding')).toBeNull();
    const ready = await stream!.next();
    expect(ready.type).toBe('ready');
    const { asOf } = waitlistEventSchemas.ready.parse(ready.data);
    expect(new Date(asOf).toISOString()).toBe(asOf);
    await stream!.heartbeats(3);
    stream!.close();
  });

  it('sends a signup as a signup event holding the stored entry', async () => {
    const stream = await EventStream.ready(base, token);
    expect((await signUp(base, 'ada@example.com')).status).toBe(201);
    const event = await stream.next();
    expect(event.type).toBe('signup');
    const stored = await findWaitlistEntryByEmail(t!.app.database.db, 'ada@example.com');
    expect(event.data).toEqual({ entries: [stored] });
    stream.close();
  });

  it('delivers many concurrent signups, each exactly once, to every open stream', async () => {
    const streams = [await EventStream.ready(base, token), await EventStream.ready(base, token)];
    const emails = Array.from({ length: 40 }, (_, i) => `many${i}@example.com`);
    const answers = await Promise.all(emails.map((email) => signUp(base, email)));
    expect(answers.map((a) => a.status)).toEqual(emails.map(() => 201));
    const stored = await Promise.all(emails.map((email) => findWaitlistEntryByEmail(t!.app.database.db, email)));
    const byId = new Map(stored.map((e) => [e!.id, e]));
    for (const stream of streams) {
      const batches = await collectSignups(stream, [...byId.keys()]);
      for (const batch of batches) for (const e of batch) expect(e).toEqual(byId.get(e.id));
      stream.close();
    }
  });

  it('coalesces the ids of one window into as few messages as fit the payload limit, newest first', async () => {
    const rows = Array.from({ length: 450 }, (_, i) => entry(new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString()));
    for (let i = 0; i < rows.length; i += 100) await t!.app.database.db.insertInto('waitlist').values(rows.slice(i, i + 100)).execute();
    const stream = await EventStream.ready(base, token);
    // Reported in one tick, as the signups of one busy window are.
    const shuffled = [...rows].sort(() => Math.random() - 0.5);
    for (const row of shuffled) t!.app.liveWaitlist.signedUp(row.id);

    const expected = signupMessages('origin-id', shuffled.map((r) => r.id));
    expect(expected.length).toBe(3);
    expect(expected.every((m) => Buffer.byteLength(m.message) <= MAX_MESSAGE_BYTES)).toBe(true);
    const batches = await collectSignups(stream, rows.map((r) => r.id));
    expect(batches.length).toBe(3);
    for (const batch of batches) {
      const times = batch.map((e) => e.created_at);
      expect(times).toEqual([...times].sort().reverse());
    }
    stream.close();
  });

  it('coalesces changes per reason and sends them as change events', async () => {
    const stream = await EventStream.ready(base, token);
    for (let i = 0; i < 5; i++) t!.app.liveWaitlist.changed('invited');
    t!.app.liveWaitlist.changed('imported');
    t!.app.liveWaitlist.changed('invited');
    // A signup after them marks the end: nothing else may come before it.
    expect((await signUp(base, 'marker@example.com')).status).toBe(201);
    expect(await stream.next()).toEqual({ type: 'change', data: { reason: 'invited' } });
    expect(await stream.next()).toEqual({ type: 'change', data: { reason: 'imported' } });
    expect((await stream.next()).type).toBe('signup');
    stream.close();
  });

  it('sends change events for an admin delete, an unsubscribe, an erasure and a delete of every match', async () => {
    const rows = [entry('2026-01-01T00:00:00.000Z'), entry('2026-01-02T00:00:00.000Z'), entry('2026-01-03T00:00:00.000Z'), entry('2026-01-04T00:00:00.000Z')];
    await t!.app.database.db.insertInto('waitlist').values(rows).execute();
    const stream = await EventStream.ready(base, token);
    const post = (url: string, body: unknown, auth = false) =>
      fetch(`${base}${url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
    const link = (entryId: string, purpose: 'manage' | 'erase' = 'manage') =>
      createLinkToken(t!.app.secretBox, { entryId, purpose, expiresAt: Math.floor(Date.now() / 1000) + 3600 });

    expect((await post(ADMIN_DELETE_PATH, { ids: [rows[0]!.id] }, true)).status).toBe(200);
    expect(await stream.next()).toEqual({ type: 'change', data: { reason: 'deleted' } });
    expect((await post(UNSUBSCRIBE_API_PATH, { token: link(rows[1]!.id) })).status).toBe(200);
    expect(await stream.next()).toEqual({ type: 'change', data: { reason: 'unsubscribed' } });
    // An erasure takes the erasure link (security review, finding 6).
    expect((await post(ERASE_API_PATH, { token: link(rows[2]!.id, 'erase') })).status).toBe(200);
    expect(await stream.next()).toEqual({ type: 'change', data: { reason: 'deleted' } });
    const matching = await post(ADMIN_DELETE_MATCHING_PATH, { filter: { q: rows[3]!.email } }, true);
    expect(await matching.json()).toEqual({ deleted: 1 });
    expect(await stream.next()).toEqual({ type: 'change', data: { reason: 'deleted' } });
    stream.close();
  });

  it('sends a change event for invites', async () => {
    const smtp = await startSmtpServer();
    const mailApp = await createTestApp({ SMTP_URL: smtp.url, MAIL_FROM: 'Product <hello@example.com>', PUBLIC_URL: 'https://waitlist.example.com' }, {
      dialect,
      adminEvents: FAST,
      // The invite stays queued: this test is about the event, not the sending.
      mailWorker: { pollIntervalMs: 3_600_000 },
    });
    try {
      await createAdmin(mailApp.app.database.db, ADMIN.email, ADMIN.password);
      const mailBase = await listen(mailApp.app);
      const mailToken = (await signIn(mailBase, ADMIN)).access_token;
      const row = entry('2026-01-01T00:00:00.000Z');
      await mailApp.app.database.db.insertInto('waitlist').values(row).execute();
      const stream = await EventStream.ready(mailBase, mailToken);
      const invited = await fetch(`${mailBase}${ADMIN_INVITE_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${mailToken}` },
        body: JSON.stringify({ ids: [row.id] }),
      });
      expect(await invited.json()).toMatchObject({ invited: 1 });
      expect(await stream.next()).toEqual({ type: 'change', data: { reason: 'invited' } });
      // Left open: the app's close ends it.
    } finally {
      await mailApp.close();
      await smtp.close();
    }
  });

  it('ends the stream when its session is signed out', async () => {
    const stream = await EventStream.ready(base, token);
    expect((await fetch(`${base}/auth/v1/logout?scope=local`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })).status).toBe(204);
    await stream.end();
    expect(stream.events.map((e) => e.type)).toEqual(['ready']);
  });

  it('checks the session without counting the stream as use, and ends it once the session is idle-expired', async () => {
    const { session_id: sessionId } = decodeJwt(token) as { session_id: string };
    const db = t!.app.database.db;
    // Opening the stream is use (the admin guard); after that, idle for 10 minutes, within the
    // 30-minute limit. A session check that counted as use would move this.
    const stream = await EventStream.ready(base, token);
    const tenMinutesAgo = new Date(Date.now() - 10 * 60_000).toISOString();
    await db.updateTable('admin_sessions').set({ last_active_at: tenMinutesAgo }).where('id', '=', sessionId).execute();
    await stream.heartbeats(stream.comments + 10); // about as many session checks went by
    const row = await db.selectFrom('admin_sessions').select('last_active_at').where('id', '=', sessionId).executeTakeFirstOrThrow();
    expect(new Date(row.last_active_at as string | Date).toISOString()).toBe(tenMinutesAgo);
    expect(stream.ended).toBe(false);

    await db.updateTable('admin_sessions').set({ last_active_at: new Date(Date.now() - 2 * 3600_000).toISOString() }).where('id', '=', sessionId).execute();
    await stream.end();
  });

  it('ends the stream when its access token expires', async () => {
    const claims = decodeJwt(token) as { sub: string; email: string; session_id: string };
    const now = Math.floor(Date.now() / 1000);
    // Issued an hour ago (the configured lifetime), so it expires in two seconds.
    const expiring = await signAccessToken(t!.app.database.db, {
      userId: claims.sub,
      email: claims.email,
      sessionId: claims.session_id,
      userMetadata: {},
      role: 'owner',
      passwordAt: now - 3598,
      issuedAt: now - 3598,
      expiresInSeconds: 3600,
    });
    const stream = await EventStream.ready(base, expiring.token);
    await stream.end();
    // And it does not come back with that token.
    expect((await EventStream.open(base, expiring.token)).response.status).toBe(401);
  });

  it('lets go of a stream when its client disconnects', async () => {
    const [first, second] = [await EventStream.ready(base, token), await EventStream.ready(base, token)];
    expect(t!.app.liveWaitlist.streams).toBe(2);
    first.close();
    await first.closed;
    await eventually('the server to drop the stream', async () => t!.app.liveWaitlist.streams === 1);
    // The other one is unaffected.
    expect((await signUp(base, 'still@example.com')).status).toBe(201);
    expect((await second.next()).type).toBe('signup');
    second.close();
  });

  it('does not hold up the shutdown', async () => {
    const stream = await EventStream.ready(base, token);
    const app = t!;
    t = undefined;
    await app.close();
    await stream.end();
  });
});

describe('pubsub transports', () => {
  const transports: Array<[string, () => Promise<{ pubsub: PubSub; peer: PubSub; close(): Promise<void> }>]> = [
    [
      'memory',
      async () => {
        const pubsub = memoryPubSub();
        return { pubsub, peer: pubsub, close: () => pubsub.close() };
      },
    ],
  ];
  if (process.env.TEST_DATABASE_URL) {
    transports.push([
      'postgres',
      async () => {
        const scratch = await createScratchPostgres();
        const handle = openDatabase({ dialect: 'postgres', connectionString: scratch.url });
        const pubsub = postgresPubSub({ connectionString: scratch.url, db: handle.db });
        const peer = postgresPubSub({ connectionString: scratch.url, db: handle.db });
        return {
          pubsub,
          peer,
          close: async () => {
            await Promise.all([pubsub.close(), peer.close()]);
            await handle.close();
            await scratch.drop();
          },
        };
      },
    ]);
  }
  if (TEST_REDIS_URL) {
    transports.push([
      'redis',
      async () => {
        // A prefix of its own, so runs sharing the Redis server never hear each other.
        const prefix = `waitlist-test-${randomBytes(4).toString('hex')}:`;
        const pubsub = redisPubSub(TEST_REDIS_URL!, { prefix });
        const peer = redisPubSub(TEST_REDIS_URL!, { prefix });
        return { pubsub, peer, close: () => Promise.all([pubsub.close(), peer.close()]).then(() => undefined) };
      },
    ]);
  }

  it.each(transports)('%s: delivers to every subscriber, stops after unsubscribe, refuses oversize messages and bad channels', async (_name, make) => {
    const { pubsub, peer, close } = await make();
    try {
      const got: Record<string, string[]> = { first: [], second: [] };
      let arrived: () => void = () => undefined;
      const unsubscribeFirst = await peer.subscribe('live_test', (m) => got.first!.push(m));
      await peer.subscribe('live_test', (m) => {
        got.second!.push(m);
        arrived();
      });
      const wait = () => new Promise<void>((resolve) => (arrived = resolve));

      let next = wait();
      const large = 'é'.repeat((MAX_MESSAGE_BYTES - 1) / 2);
      await pubsub.publish('live_test', large);
      await next;
      expect(got).toEqual({ first: [large], second: [large] });

      await unsubscribeFirst();
      next = wait();
      await pubsub.publish('live_test', 'two');
      await next;
      expect(got).toEqual({ first: [large], second: [large, 'two'] });

      await expect(pubsub.publish('live_test', 'x'.repeat(MAX_MESSAGE_BYTES + 1))).rejects.toThrow(/limit/);
      await expect(pubsub.publish('Bad channel; DROP', 'x')).rejects.toThrow(/channel/);
    } finally {
      await close();
    }
  });
});

/** Two instances (buildApp, listening) on one PostgreSQL database, optionally with Redis. */
describeWhen(Boolean(process.env.TEST_DATABASE_URL))('admin event stream across instances', () => {
  interface Instance {
    app: FastifyInstance;
    base: string;
  }
  let scratch: ScratchPostgres;
  let dir: string;
  let instances: Instance[] = [];

  async function start(env: Record<string, string>): Promise<Instance> {
    const config = loadConfig({
      DATABASE_URL: scratch.url,
      LOG_LEVEL: 'silent',
      WEB_ROOT: path.join(dir, 'web'),
      AUTH_SECRET_KEY: authKey,
      SIGNUP_RATE_LIMIT_MAX: '1000',
      SIGNUP_CHECK_MX: 'off', // as createTestApp: no test depends on the network's DNS
      ...env,
    });
    const app = await buildApp(config, { geolocator: noGeolocation, logger: false, adminEvents: FAST });
    const instance = { app, base: await listen(app) };
    instances.push(instance);
    return instance;
  }
  const authKey = randomBytes(32).toString('hex');

  beforeEach(async () => {
    scratch = await createScratchPostgres();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-events-'));
    const handle = openDatabase({ dialect: 'postgres', connectionString: scratch.url });
    try {
      await createAdmin(handle.db, ADMIN.email, ADMIN.password);
    } finally {
      await handle.close();
    }
  });
  afterEach(async () => {
    await Promise.all(instances.map((i) => i.app.close()));
    instances = [];
    fs.rmSync(dir, { recursive: true, force: true });
    await scratch.drop();
  });

  async function listenerPids(): Promise<Array<{ pid: number; query: string }>> {
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ pid: number; query: string }>(
        'SELECT pid, query FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
        [new URL(scratch.url).pathname.slice(1), LISTENER_APPLICATION_NAME],
      );
      return rows;
    } finally {
      await client.end();
    }
  }

  it('a signup through instance A reaches a stream on instance B (LISTEN/NOTIFY), also after the listener connection was killed', async () => {
    const a = await start({});
    const b = await start({});
    expect(b.app.pubsub.kind).toBe('postgres');
    const token = (await signIn(a.base, ADMIN)).access_token;
    const stream = await EventStream.ready(b.base, token);

    expect((await signUp(a.base, 'across@example.com')).status).toBe(201);
    const first = await stream.next();
    expect(first.type).toBe('signup');
    expect(first.data).toEqual({ entries: [await findWaitlistEntryByEmail(b.app.database.db, 'across@example.com')] });

    // Only B listens (A has no stream): kill its listener, wait for the reconnection to LISTEN again.
    const before = await listenerPids();
    expect(before).toHaveLength(1);
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query('SELECT pg_terminate_backend($1)', [before[0]!.pid]);
    } finally {
      await client.end();
    }
    await eventually('a new listener connection', async () =>
      (await listenerPids()).some((row) => row.pid !== before[0]!.pid && /^LISTEN /.test(row.query)),
    );

    expect((await signUp(a.base, 'after-reconnect@example.com')).status).toBe(201);
    const second = await stream.next();
    expect(second.type).toBe('signup');
    expect((second.data as { entries: WaitlistEntry[] }).entries.map((e) => e.email)).toEqual(['after-reconnect@example.com']);

    // Changes travel too.
    const row = await findWaitlistEntryByEmail(a.app.database.db, 'across@example.com');
    const deleted = await fetch(`${a.base}${ADMIN_DELETE_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ ids: [row!.id] }),
    });
    expect(deleted.status).toBe(200);
    expect(await stream.next()).toEqual({ type: 'change', data: { reason: 'deleted' } });
    stream.close();
  });

  describeWhen(Boolean(TEST_REDIS_URL))('with REDIS_URL', () => {
    it('a signup through instance A reaches a stream on instance B through Redis', async () => {
      const a = await start({ REDIS_URL: TEST_REDIS_URL! });
      const b = await start({ REDIS_URL: TEST_REDIS_URL! });
      expect([a.app.pubsub.kind, b.app.pubsub.kind]).toEqual(['redis', 'redis']);
      const token = (await signIn(b.base, ADMIN)).access_token;
      const stream = await EventStream.ready(b.base, token);
      // Not through PostgreSQL: nobody LISTENs there.
      expect(await listenerPids()).toEqual([]);

      const emails = Array.from({ length: 10 }, (_, i) => `redis${i}@example.com`);
      expect((await Promise.all(emails.map((email) => signUp(a.base, email)))).map((r) => r.status)).toEqual(emails.map(() => 201));
      const stored = await Promise.all(emails.map((email) => findWaitlistEntryByEmail(b.app.database.db, email)));
      const batches = await collectSignups(stream, stored.map((e) => e!.id));
      expect(batches.flat().sort((x, y) => x.email.localeCompare(y.email))).toEqual(stored.sort((x, y) => x!.email.localeCompare(y!.email)));
      stream.close();
    });
  });
});
