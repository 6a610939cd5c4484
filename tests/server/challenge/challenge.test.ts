import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createChallenge, solveChallenge, verifySolution } from 'altcha-lib/v1';
import { buildApp } from '../../../src/server/app.js';
import { listAudit } from '../../../src/server/audit/audit-log.js';
import { loadConfig } from '../../../src/server/config.js';
import { challengeIssuer, hmacSha256, solutionVerifier } from '../../../src/server/challenge/pow.js';
import { ADMIN_HELD_APPROVE_PATH, ADMIN_HELD_REJECT_PATH } from '../../../src/shared/admin/held-api.js';
import { ADMIN_WAITLIST_PATH, waitlistPageSchema } from '../../../src/shared/admin/waitlist-api.js';
import { CHALLENGE_FIELD, CHALLENGE_PATH, type SignupChallenge } from '../../../src/shared/waitlist/challenge-contract.js';
import { SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { cleanupsAfterEach, createAdminTestApp, drainOutbox, mailEnv, startTestSmtp } from '../../support/admin-app.js';
import { createTestApp, noGeolocation, type TestApp } from '../../support/test-app.js';

/**
 * SIGNUP_CHALLENGE=proof-of-work (issue 28 point 4): the challenge is issued signed and expiring,
 * a solved one lets a signup through once (across two instances sharing the database), and a
 * signup without a valid solution is held: stored `held` with its reason, no e-mail, the same
 * answer; an admin approves (it joins, with its confirmation e-mail) or rejects (deleted), audited.
 */

const cleanups = cleanupsAfterEach();
/** The smallest difficulty the setting takes: the tests solve in milliseconds. */
const CHALLENGE_ENV = { SIGNUP_CHALLENGE: 'proof-of-work', SIGNUP_CHALLENGE_MAX_NUMBER: '1000' };

async function fetchChallenge(t: TestApp, ip = '198.51.100.1'): Promise<SignupChallenge> {
  const res = await t.app.inject({ method: 'GET', url: CHALLENGE_PATH, remoteAddress: ip });
  expect(res.statusCode).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  return res.json<SignupChallenge>();
}

/** Solves a challenge as the browser does (altcha-lib's reference solver) and encodes the payload. */
async function solve(c: SignupChallenge): Promise<string> {
  const solution = await solveChallenge(c.challenge, c.salt, c.algorithm, c.maxnumber).promise;
  expect(solution).not.toBeNull();
  return Buffer.from(JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: solution!.number, salt: c.salt, signature: c.signature })).toString('base64');
}

function signUp(t: TestApp, email: string, solution?: string, ip = '198.51.100.1') {
  return t.app.inject({
    method: 'POST',
    url: SIGNUP_PATH,
    remoteAddress: ip,
    payload: solution === undefined ? { email } : { email, [CHALLENGE_FIELD]: solution },
  });
}

async function entryOf(t: TestApp, email: string) {
  return t.app.database.db.selectFrom('waitlist').select(['id', 'status', 'held_reason', 'confirmation_sent_at']).where('email', '=', email).executeTakeFirst();
}

describe('signup challenge verification', () => {
  it("agrees with altcha-lib's verifySolution on good, wrong, forged and foreign solutions", async () => {
    const key = 'k'.repeat(64);
    const verify = solutionVerifier(key, 1000);
    const verifyForeign = solutionVerifier('another key', 1000);
    const encode = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64');
    for (let i = 0; i < 10; i++) {
      const c = await createChallenge({ hmacKey: key, maxnumber: 1000, expires: new Date(Date.now() + 60_000) });
      const number = (await solveChallenge(c.challenge, c.salt, c.algorithm, 1000).promise)!.number;
      const good = { algorithm: c.algorithm, challenge: c.challenge, number, salt: c.salt, signature: c.signature };
      const cases = [good, { ...good, number: number + 1 }, { ...good, signature: 'b'.repeat(64) }, { ...good, salt: `${good.salt}x` }, { ...good, challenge: 'é'.repeat(64) }, { ...good, challenge: good.challenge.toUpperCase() }];
      for (const payload of cases) {
        expect(verify(encode(payload)).ok).toBe(await verifySolution(payload, key, true));
        expect(verifyForeign(encode(payload)).ok).toBe(false);
      }
    }
  });

  it("issues challenges that altcha-lib's solver solves and its verifySolution accepts, under this server's key only", async () => {
    const box = { hmac: (text: string, context: string) => `${context}/${text}`.repeat(3) };
    const issuer = challengeIssuer(box, { maxNumber: 1000, ttlSeconds: 600 });
    const key = 'signup challenge hmac key v1/altcha'.repeat(3);
    const numbers = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const c = issuer.issue(new Date('2026-11-28T12:00:00Z'));
      expect(c).toMatchObject({ algorithm: 'SHA-256', maxnumber: 1000 });
      expect(c.salt).toMatch(/^[0-9a-f]{24}\?expires=1795867800&$/);
      const number = (await solveChallenge(c.challenge, c.salt, c.algorithm, c.maxnumber).promise)!.number;
      expect(number).toBeGreaterThanOrEqual(1);
      expect(number).toBeLessThanOrEqual(1000);
      numbers.add(number);
      const payload = { algorithm: c.algorithm, challenge: c.challenge, number, salt: c.salt, signature: c.signature };
      expect(await verifySolution(payload, key, false)).toBe(true);
      expect(await verifySolution(payload, 'another key', false)).toBe(false);
    }
    expect(numbers.size).toBeGreaterThan(10);
  });

  it('signs as createHmac does, for keys shorter than, as long as and longer than the block', () => {
    // Random latin1 characters with an 'é' (UTF-8: 1 to 2 bytes each), and ASCII keys of exactly 63, 64 and 65 bytes.
    const keys = [0, 1, 32, 63, 64, 65, 100, 200].map((length) => randomBytes(length).toString('latin1') + 'é');
    keys.push('k'.repeat(63), 'k'.repeat(64), 'k'.repeat(65), '');
    for (const key of keys) {
      const sign = hmacSha256(key);
      for (let i = 0; i < 20; i++) {
        const challenge = randomBytes(32).toString('hex');
        expect(sign(challenge)).toBe(createHmac('sha256', key).update(challenge).digest('hex'));
      }
    }
    // Only a challenge (64 lower-case hex characters): a character of more than one byte, or not
    // hex, would not be what createHmac signs.
    for (const wrong of ['short', 'é'.repeat(64), 'Ā'.repeat(64), 'A'.repeat(64), `${'a'.repeat(63)}g`, 'a'.repeat(65)]) {
      expect(() => hmacSha256('k')(wrong)).toThrow('not a challenge');
    }
  });
});

describe.each(TEST_DIALECTS)('signup challenge (%s)', (dialect: TestDialect) => {
  async function app(env: Record<string, string> = CHALLENGE_ENV): Promise<TestApp> {
    const t = await createTestApp(env, { dialect });
    cleanups.push(() => t.close());
    return t;
  }

  it('is off by default: no challenge route, and a signup without a solution joins as ever', async () => {
    const t = await app({});
    expect((await t.app.inject({ method: 'GET', url: CHALLENGE_PATH })).statusCode).toBe(404);
    const res = await signUp(t, 'plain@example.com');
    expect(res.statusCode).toBe(201);
    expect(await entryOf(t, 'plain@example.com')).toMatchObject({ status: 'joined', held_reason: null });
  });

  it('issues signed, expiring challenges, and a solved one lets the signup join', async () => {
    const t = await app();
    const c = await fetchChallenge(t);
    expect(c).toMatchObject({ algorithm: 'SHA-256', maxnumber: 1000 });
    expect(c.signature).toMatch(/^[0-9a-f]{64}$/);
    const expires = Number(/expires=(\d+)/.exec(c.salt)![1]) * 1000;
    expect(expires - Date.now()).toBeGreaterThan(500_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(600_000);
    const res = await signUp(t, 'human@example.com', await solve(c));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ status: 'joined' });
    expect(await entryOf(t, 'human@example.com')).toMatchObject({ status: 'joined', held_reason: null });
  });

  it('holds a signup without a solution, with a wrong or forged one, or an expired one, with the same answer', async () => {
    const t = await app();
    const none = await signUp(t, 'script@example.com');
    expect(none.statusCode).toBe(201);
    expect(none.json()).toEqual({ status: 'joined' });

    const c = await fetchChallenge(t);
    const good = JSON.parse(Buffer.from(await solve(c), 'base64').toString()) as Record<string, unknown>;
    const encode = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64');
    expect((await signUp(t, 'wrong@example.com', encode({ ...good, number: ((good.number as number) + 1) % 1000 }))).statusCode).toBe(201);
    expect((await signUp(t, 'forged@example.com', encode({ ...good, signature: 'a'.repeat(64) }))).statusCode).toBe(201);
    expect((await signUp(t, 'garbage@example.com', 'not base64 json')).statusCode).toBe(201);

    // A challenge of this server, issued 11 minutes ago (the default lifetime is 10).
    const old = challengeIssuer(t.app.secretBox, t.config.challenge).issue(new Date(Date.now() - 11 * 60_000));
    expect((await signUp(t, 'late@example.com', await solve(old))).statusCode).toBe(201);

    expect(await entryOf(t, 'script@example.com')).toMatchObject({ status: 'held', held_reason: 'challenge_missing' });
    expect(await entryOf(t, 'wrong@example.com')).toMatchObject({ status: 'held', held_reason: 'challenge_invalid' });
    expect(await entryOf(t, 'forged@example.com')).toMatchObject({ status: 'held', held_reason: 'challenge_invalid' });
    expect(await entryOf(t, 'garbage@example.com')).toMatchObject({ status: 'held', held_reason: 'challenge_invalid' });
    expect(await entryOf(t, 'late@example.com')).toMatchObject({ status: 'held', held_reason: 'challenge_expired' });

    // The form without JavaScript: a form post, answered with the thanks page as ever.
    const form = await t.app.inject({
      method: 'POST',
      url: SIGNUP_PATH,
      remoteAddress: '198.51.100.1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'email=nojs%40example.com',
    });
    expect(form.statusCode).toBe(303);
    expect(form.headers.location).toBe('/thanks');
    expect(await entryOf(t, 'nojs@example.com')).toMatchObject({ status: 'held', held_reason: 'challenge_missing' });
  });

  it('takes a solution once, across two instances sharing the database', async () => {
    const t = await app();
    // A second instance on the same database and secret key (what two servers behind a balancer share).
    const config = loadConfig({ DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent', AUTH_SECRET_KEY_FILE: `${t.dataDir}/auth-secret.key`, WEB_ROOT: `${t.dataDir}/web`, SIGNUP_CHECK_MX: 'off', ...CHALLENGE_ENV });
    const other = await buildApp(config, { geolocator: noGeolocation, logger: false, sqliteCheckpoints: 'on-commit' });
    await other.ready();
    cleanups.push(() => other.close());
    const solution = await solve(await fetchChallenge(t));
    const [first, second] = await Promise.all([
      signUp(t, 'first@example.com', solution),
      other.inject({ method: 'POST', url: SIGNUP_PATH, remoteAddress: '198.51.100.2', payload: { email: 'second@example.com', [CHALLENGE_FIELD]: solution } }),
    ]);
    expect([first.statusCode, second.statusCode]).toEqual([201, 201]);
    const statuses = [(await entryOf(t, 'first@example.com'))!, (await entryOf(t, 'second@example.com'))!];
    expect(statuses.map((e) => e.status).sort()).toEqual(['held', 'joined']);
    expect(statuses.find((e) => e.status === 'held')!.held_reason).toBe('challenge_replayed');
    // And once more on the first instance, later: still spent.
    expect((await signUp(t, 'third@example.com', solution)).statusCode).toBe(201);
    expect(await entryOf(t, 'third@example.com')).toMatchObject({ status: 'held', held_reason: 'challenge_replayed' });
  });

  it('a replayed solution for a known address: a joined one is the duplicate it was, a held one stays held', async () => {
    const t = await app();
    const solution = await solve(await fetchChallenge(t));
    expect((await signUp(t, 'joined@example.com', solution)).statusCode).toBe(201);
    const again = await signUp(t, 'joined@example.com', solution);
    expect(again.statusCode).toBe(409);
    expect((await signUp(t, 'waiting@example.com')).statusCode).toBe(201);
    expect((await signUp(t, 'waiting@example.com', solution)).statusCode).toBe(201);
    expect(await entryOf(t, 'waiting@example.com')).toMatchObject({ status: 'held', held_reason: 'challenge_missing' });
  });

  it('a batch that fails as a whole: each signup is retried alone and spends its solution with its entry, once', async () => {
    let failures = 1;
    const t = await createTestApp(CHALLENGE_ENV, {
      dialect,
      signupBatch: {
        beforeCommit() {
          if (failures-- > 0) throw new Error('this batch is refused');
        },
      },
    });
    cleanups.push(() => t.close());
    const solution = await solve(await fetchChallenge(t));
    const answers = await Promise.all([signUp(t, 'retry-a@example.com', solution), signUp(t, 'retry-b@example.com', solution)]);
    expect(answers.map((a) => a.statusCode)).toEqual([201, 201]);
    expect(failures).toBeLessThanOrEqual(0); // the refused batch happened
    const entries = [(await entryOf(t, 'retry-a@example.com'))!, (await entryOf(t, 'retry-b@example.com'))!];
    expect(entries.map((e) => [e.status, e.held_reason]).sort()).toEqual([['held', 'challenge_replayed'], ['joined', null]]);
    expect(await t.app.database.db.selectFrom('signup_challenges_spent').select('signature').execute()).toHaveLength(1);
  });

  it('never brings a known address back: a duplicate stays a duplicate, a held one stays held until a solved signup', async () => {
    const t = await app();
    expect((await signUp(t, 'known@example.com', await solve(await fetchChallenge(t)))).statusCode).toBe(201);
    const again = await signUp(t, 'known@example.com');
    expect(again.statusCode).toBe(409);
    expect(await entryOf(t, 'known@example.com')).toMatchObject({ status: 'joined' });
    expect((await signUp(t, 'held-twice@example.com')).statusCode).toBe(201);
    expect((await signUp(t, 'held-twice@example.com')).statusCode).toBe(201);
    expect(await entryOf(t, 'held-twice@example.com')).toMatchObject({ status: 'held' });
    // The same person again, this time from the form with its proof of work: joined, not "Already registered".
    const solved = await signUp(t, 'held-twice@example.com', await solve(await fetchChallenge(t)));
    expect(solved.statusCode).toBe(201);
    expect(await entryOf(t, 'held-twice@example.com')).toMatchObject({ status: 'joined', held_reason: null });
  });

  it('rate limits the challenge per client address', async () => {
    const t = await app({ ...CHALLENGE_ENV, SIGNUP_RATE_LIMIT_MAX: '2' });
    for (let i = 0; i < 6; i++) await fetchChallenge(t, '203.0.113.50');
    const over = await t.app.inject({ method: 'GET', url: CHALLENGE_PATH, remoteAddress: '203.0.113.50' });
    expect(over.statusCode).toBe(429);
    expect(over.headers['retry-after']).toBeDefined();
  });

  it('a solution replayed in the same batch or a later one: stored held, sent no confirmation, answered as any signup', async () => {
    const smtp = await startTestSmtp(cleanups);
    const { t } = await createAdminTestApp({ ...mailEnv(smtp.url), ...CHALLENGE_ENV, SIGNUP_CONFIRMATION: 'required' }, { dialect, mailWorker: { pollIntervalMs: 3_600_000 } });
    cleanups.push(() => t.close());
    const solution = await solve(await fetchChallenge(t));
    const twins = await Promise.all([signUp(t, 'twin-a@example.com', solution), signUp(t, 'twin-b@example.com', solution)]);
    expect(twins.map((a) => a.json())).toEqual([{ status: 'pending' }, { status: 'pending' }]);
    expect((await signUp(t, 'later@example.com', solution)).json()).toEqual({ status: 'pending' });
    const queued = (await t.app.database.db.selectFrom('mail_outbox').select('to_address').execute()).map((r) => r.to_address);
    expect(queued).toHaveLength(1);
    expect(['twin-a@example.com', 'twin-b@example.com']).toContain(queued[0]);
    for (const email of ['twin-a@example.com', 'twin-b@example.com', 'later@example.com'].filter((e) => e !== queued[0])) {
      expect(await entryOf(t, email)).toMatchObject({ status: 'held', held_reason: 'challenge_replayed', confirmation_sent_at: null });
    }
    expect(await entryOf(t, queued[0]!)).toMatchObject({ status: 'pending', held_reason: null });
  });

  it('sends a held signup no e-mail; the admin filters Held, approves (confirmation sent) and rejects, audited', async () => {
    const smtp = await startTestSmtp(cleanups);
    const { t, token } = await createAdminTestApp(
      { ...mailEnv(smtp.url), ...CHALLENGE_ENV, SIGNUP_CONFIRMATION: 'required' },
      { dialect, mailWorker: { pollIntervalMs: 3_600_000 } },
    );
    cleanups.push(() => t.close());
    const auth = { authorization: `Bearer ${token}` };

    for (const email of ['bot1@example.com', 'bot2@example.com', 'bot3@example.com']) {
      const res = await signUp(t, email);
      expect(res.statusCode).toBe(201);
      // The same answer as a real signup under double opt-in.
      expect(res.json()).toEqual({ status: 'pending' });
    }
    expect((await signUp(t, 'human@example.com', await solve(await fetchChallenge(t)))).statusCode).toBe(201);
    const queued = await t.app.database.db.selectFrom('mail_outbox').select('to_address').execute();
    expect(queued.map((r) => r.to_address)).toEqual(['human@example.com']);

    const list = await t.app.inject({ method: 'GET', url: `${ADMIN_WAITLIST_PATH}?status=held`, headers: auth });
    expect(list.statusCode).toBe(200);
    const page = waitlistPageSchema.parse(list.json());
    expect(page.matching).toBe(3);
    expect(page.entries.map((e) => [e.email, e.status, e.held_reason]).sort()).toEqual([
      ['bot1@example.com', 'held', 'challenge_missing'],
      ['bot2@example.com', 'held', 'challenge_missing'],
      ['bot3@example.com', 'held', 'challenge_missing'],
    ]);
    const idOf = (email: string) => page.entries.find((e) => e.email === email)!.id;
    const human = (await entryOf(t, 'human@example.com'))!;

    // Approve one by id (a non-held id in the selection is left alone), then reject the rest by select-all.
    const approved = await t.app.inject({ method: 'POST', url: ADMIN_HELD_APPROVE_PATH, headers: auth, payload: { ids: [idOf('bot1@example.com'), human.id] } });
    expect(approved.statusCode).toBe(200);
    expect(approved.json()).toEqual({ count: 1 });
    const bot1 = (await entryOf(t, 'bot1@example.com'))!;
    expect(bot1).toMatchObject({ status: 'pending', held_reason: null });
    expect(bot1.confirmation_sent_at).not.toBeNull();
    await drainOutbox(t);
    expect(smtp.messages.map((m) => m.to[0]).sort()).toEqual(['bot1@example.com', 'human@example.com']);

    const rejected = await t.app.inject({ method: 'POST', url: ADMIN_HELD_REJECT_PATH, headers: auth, payload: { filter: { status: 'held' }, except: [] } });
    expect(rejected.json()).toEqual({ count: 2 });
    expect(await entryOf(t, 'bot2@example.com')).toBeUndefined();
    expect(await entryOf(t, 'bot3@example.com')).toBeUndefined();
    expect(await entryOf(t, 'human@example.com')).toMatchObject({ status: 'pending' });
    // A select-all on another status rejects no held entry and nothing else.
    expect((await t.app.inject({ method: 'POST', url: ADMIN_HELD_REJECT_PATH, headers: auth, payload: { filter: { status: 'pending' } } })).json()).toEqual({ count: 0 });

    const audit = await listAudit(t.app.database.db, 20);
    const approval = audit.find((a) => a.action === 'held_approve')!;
    expect(approval).toMatchObject({ actorEmail: 'admin@example.com', detail: { count: 1, requested: 2 } });
    const rejections = audit.filter((a) => a.action === 'held_reject');
    expect(rejections.some((a) => a.detail.count === 2 && a.detail.scope === 'matching')).toBe(true);
    const part = rejections.find((a) => a.detail.part === true)!;
    expect((part.detail.ids as string[]).sort()).toEqual([idOf('bot2@example.com'), idOf('bot3@example.com')].sort());
    expect(JSON.stringify(rejections)).not.toContain('bot2@example.com');

    // Anonymous callers are refused before anything is read.
    expect((await t.app.inject({ method: 'POST', url: ADMIN_HELD_APPROVE_PATH, payload: { ids: [human.id] } })).statusCode).toBe(401);
  });
});
