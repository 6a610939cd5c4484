import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, rawSqliteOf, type DatabaseHandle } from '../../../src/server/db/database.js';
import { countingGeolocator } from '../../support/geolocators.js';
import { findWaitlistEntryByEmail } from '../../../src/server/db/waitlist-entries.js';
import { signupBatchCommitter, type SignupWrite, type WriteResult } from '../../../src/server/signup/repository.js';
import { solutionSpender, type Solution } from '../../../src/server/challenge/index.js';
import { suppressionHash } from '../../../src/server/consent/suppression.js';
import { NO_CONSENT_RECORD, type WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { NO_ATTRIBUTION } from '../../../src/shared/waitlist/attribution.js';
import { SIGNUP_ERRORS, SIGNUP_FORM_FAILURES, SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { adminQuery, describeWhen, TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { startSmtpServer } from '../../support/smtp.js';
import { createTestApp, type TestApp, type TestAppOptions } from '../../support/test-app.js';
import { createList, updateList } from '../../../src/server/lists/manage.js';

/**
 * Group commit of signups (issue 11): signups arriving together share one transaction, none is
 * answered before the transaction holding it has committed, and every signup of a batch still
 * gets its own answer (new, repeated in the batch, already on the list, unsubscribed, a row that
 * cannot be written, the database gone). Real HTTP against the real app on a real database.
 *
 * The commit is held with the batcher's `beforeCommit` hook (app option `signupBatch`): the
 * batch's rows are written, its transaction is open, and the test looks from another connection
 * and at the pending HTTP answers before letting it commit.
 */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A gate that holds the next `hold(n)` batches before COMMIT until released; every batch's size is recorded. */
function commitGate() {
  const sizes: number[] = [];
  const waiting: Array<() => void> = [];
  let arrived: (() => void) | undefined;
  let holds = 0;
  return {
    sizes,
    hooks: {
      // One batch at a time, so that what arrives during a held commit is the next batch, whole.
      concurrency: 1,
      beforeCommit: async (size: number) => {
        sizes.push(size);
        if (holds === 0) return;
        holds -= 1;
        const held = new Promise<void>((resolve) => waiting.push(resolve));
        arrived?.();
        await held;
      },
    },
    hold(n = 1) {
      holds = n;
    },
    /** Resolves when a held batch is waiting at its commit. */
    arrival: () => new Promise<void>((resolve) => (waiting.length > 0 ? resolve() : (arrived = resolve))),
    release: () => {
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

async function startApp(dialect: TestDialect, env: Record<string, string> = {}, options: TestAppOptions = {}) {
  const t = await createTestApp({ SIGNUP_RATE_LIMIT_MAX: '1000', ...env }, { dialect, ...options });
  cleanups.push(() => t.close());
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { t, base: `http://127.0.0.1:${address.port}` };
}

/** Another connection to the app's database, to look at what is committed. */
function observer(t: TestApp): DatabaseHandle {
  const handle = openDatabase(t.config.database);
  cleanups.push(() => handle.close());
  return handle;
}

interface Answer {
  status: number;
  body: unknown;
  headers: Headers;
}

/** A signup over HTTP; `settled` tells whether its answer has arrived. */
function signUp(base: string, email: string, form = false) {
  const state = { settled: false };
  const answer: Promise<Answer> = fetch(`${base}${SIGNUP_PATH}`, {
    method: 'POST',
    headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' },
    body: form ? new URLSearchParams({ email }).toString() : JSON.stringify({ email }),
    redirect: 'manual',
  }).then(async (res) => {
    const text = await res.text();
    state.settled = true;
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // an HTML page
    }
    return { status: res.status, body, headers: res.headers };
  });
  return { answer, state };
}

/** An entry written straight to the table (not through a signup). */
async function insertEntry(t: TestApp, email: string, changes: Partial<WaitlistEntry> = {}) {
  await t.app.database.db
    .insertInto('waitlist')
    .values({ id: crypto.randomUUID(), email, created_at: new Date().toISOString(), ip_address: null, country: null, city: null, region: null, ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION, ...changes })
    .execute();
}

async function stored(handle: DatabaseHandle, email: string) {
  return findWaitlistEntryByEmail(handle.db, email);
}

const alreadyRegistered = { error: { code: 'already_registered', message: SIGNUP_ERRORS.already_registered.message } };

describe.each(TEST_DIALECTS)('signup group commit (%s)', (dialect: TestDialect) => {
  it('answers a signup only after the transaction holding it has committed', async () => {
    const gate = commitGate();
    const { t, base } = await startApp(dialect, {}, { signupBatch: gate.hooks });
    const other = observer(t);

    gate.hold();
    const first = signUp(base, 'held@example.com');
    await gate.arrival(); // the row is written, the transaction open, COMMIT not yet run
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(await stored(other, 'held@example.com')).toBeUndefined(); // not committed: invisible elsewhere
    expect(first.state.settled).toBe(false); // and not answered

    gate.release();
    const answer = await first.answer;
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({ status: 'joined' });
    expect(await stored(other, 'held@example.com')).toMatchObject({ email: 'held@example.com', status: 'joined' });
    expect(gate.sizes).toEqual([1]); // a lone signup is a batch of one, committed at once
  });

  it('writes the signups that arrive during a commit in the next transaction, each with its own answer', async () => {
    const gate = commitGate();
    const counter = countingGeolocator();
    const { t, base } = await startApp(dialect, {}, { signupBatch: gate.hooks, geolocator: counter.geolocator });
    const other = observer(t);
    // Already on the list before: one joined, one unsubscribed (held: answered as a new signup, unchanged; issue 28).
    await insertEntry(t, 'known@example.com');
    await insertEntry(t, 'left@example.com', { status: 'unsubscribed', unsubscribed_at: new Date().toISOString() });

    gate.hold();
    const holder = signUp(base, 'holder@example.com');
    await gate.arrival();
    const emails = ['new1@example.com', 'new2@example.com', 'NEW1@example.com', 'holder@example.com', 'known@example.com', 'left@example.com', 'new3@example.com'];
    const batch = emails.map((email, i) => signUp(base, email, i === 6));
    await counter.reached(1 + emails.length); // the holder, then the batch
    expect(batch.every((s) => !s.state.settled)).toBe(true);
    gate.release();

    const answers = await Promise.all(batch.map((s) => s.answer));
    expect((await holder.answer).status).toBe(201);
    expect(gate.sizes).toEqual([1, emails.length]); // one transaction for the whole queue
    expect(answers.map((a) => a.status)).toEqual([201, 201, 409, 409, 409, 201, 303]);
    expect(answers[0]!.body).toEqual({ status: 'joined' });
    expect(answers[2]!.body).toEqual(alreadyRegistered); // repeated inside the batch
    expect(answers[3]!.body).toEqual(alreadyRegistered); // committed by the previous batch
    expect(answers[4]!.body).toEqual(alreadyRegistered); // on the list long before
    expect(answers[5]!.body).toEqual({ status: 'joined' }); // unsubscribed: answered as a new signup, and held
    expect(answers[6]!.headers.get('location')).toBe('/thanks'); // the form's answer

    for (const email of ['new1@example.com', 'new2@example.com', 'new3@example.com', 'holder@example.com']) {
      expect(await stored(other, email)).toMatchObject({ email, status: 'joined' });
    }
    expect(await stored(other, 'left@example.com')).toMatchObject({ status: 'unsubscribed' });
    const count = await other.db.selectFrom('waitlist').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(6);
  });

  it('queues the confirmation e-mails in the batch transaction; a repeat in the batch gets no second e-mail', async () => {
    const smtp = await startSmtpServer();
    cleanups.push(() => smtp.close());
    const gate = commitGate();
    gate.hold(2);
    const counter = countingGeolocator();
    const { t, base } = await startApp(
      dialect,
      { SMTP_URL: smtp.url, MAIL_FROM: 'Product <hello@example.com>', PUBLIC_URL: 'https://waitlist.example.com', SIGNUP_CONFIRMATION: 'required' },
      { signupBatch: gate.hooks, geolocator: counter.geolocator, mailWorker: { pollIntervalMs: 3_600_000 } },
    );
    const other = observer(t);
    const outbox = () => other.db.selectFrom('mail_outbox').select(['to_address', 'template']).orderBy('to_address').execute();

    const holder = signUp(base, 'a@example.com');
    await gate.arrival();
    const batch = ['b@example.com', 'c@example.com', 'b@example.com'].map((email) => signUp(base, email));
    await counter.reached(4);
    gate.release(); // the first batch commits; the second is held in turn
    expect((await holder.answer).body).toEqual({ status: 'pending' });
    await gate.arrival();
    expect(await outbox()).toEqual([{ to_address: 'a@example.com', template: 'confirmation' }]); // b, c not committed yet
    gate.release();

    const answers = await Promise.all(batch.map((s) => s.answer));
    // A pending address signing up again answers like a new signup (and gets no second e-mail within the resend interval).
    expect(answers.map((a) => [a.status, a.body])).toEqual([
      [201, { status: 'pending' }],
      [201, { status: 'pending' }],
      [201, { status: 'pending' }],
    ]);
    expect(gate.sizes).toEqual([1, 3]);
    expect(await outbox()).toEqual([
      { to_address: 'a@example.com', template: 'confirmation' },
      { to_address: 'b@example.com', template: 'confirmation' },
      { to_address: 'c@example.com', template: 'confirmation' },
    ]);
  });

  it('a row that cannot be written fails only its own signup; the rest of its batch is stored', async () => {
    const gate = commitGate();
    const counter = countingGeolocator();
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const { t, base } = await startApp(dialect, {}, { signupBatch: gate.hooks, geolocator: counter.geolocator, logger: { level: 'info', stream } });
    const other = observer(t);
    // A rule of the database the application does not know: addresses starting with "bad" are refused.
    if (dialect === 'sqlite') {
      await sql`CREATE TRIGGER refuse_bad BEFORE INSERT ON waitlist WHEN NEW.email LIKE 'bad%' BEGIN SELECT RAISE(ABORT, 'refused by a test trigger'); END`.execute(t.app.database.db);
    } else {
      await sql`CREATE FUNCTION refuse_bad() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.email LIKE 'bad%' THEN RAISE EXCEPTION 'refused by a test trigger'; END IF; RETURN NEW; END $$`.execute(t.app.database.db);
      await sql`CREATE TRIGGER refuse_bad BEFORE INSERT ON waitlist FOR EACH ROW EXECUTE FUNCTION refuse_bad()`.execute(t.app.database.db);
    }

    gate.hold();
    const holder = signUp(base, 'first@example.com');
    await gate.arrival();
    const batch = ['good1@example.com', 'bad@example.com', 'good2@example.com', 'bad-form@example.com'].map((email, i) => signUp(base, email, i === 3));
    await counter.reached(5);
    gate.release();

    expect((await holder.answer).status).toBe(201);
    const [good1, bad, good2, badForm] = await Promise.all(batch.map((s) => s.answer));
    // The batch of four failed as a whole (before reaching its commit), then each signup went alone.
    expect(gate.sizes).toEqual([1]);
    const failures = lines.filter((l) => l.includes('waitlist signup batch failed'));
    expect(failures).toHaveLength(1);
    expect(JSON.parse(failures[0]!)).toMatchObject({ signups: 4 });
    expect(good1!.status).toBe(201);
    expect(good2!.status).toBe(201);
    expect(bad!.status).toBe(500);
    expect(bad!.body).toEqual({ error: { code: 'internal_error', message: 'Something went wrong on our side. Please try again later.' } });
    expect(badForm!.status).toBe(500);
    expect(String(badForm!.body)).toContain(SIGNUP_FORM_FAILURES.other.message);
    expect(String(badForm!.body)).not.toMatch(/refused by a test trigger|\bat .*\.(ts|js):\d+/);
    expect(await stored(other, 'good1@example.com')).toBeDefined();
    expect(await stored(other, 'good2@example.com')).toBeDefined();
    expect(await stored(other, 'bad@example.com')).toBeUndefined();
  });

  it('answers 503 with a clear message while the database cannot take the write, and recovers', async () => {
    const { t, base } = await startApp(dialect);
    const actor = { email: null, id: null, ip: null, by: 'cli' } as const;
    await createList(t.app.database.db, actor, { slug: 'acme', name: 'Acme, Inc.', description: 'Robots.', kind: 'testing-the-waters', bands: null });
    await updateList(t.app.database.db, actor, 'acme', { state: 'open' });
    let restore: () => Promise<void>;
    if (dialect === 'sqlite') {
      // Another process holds the write lock longer than the server waits for it.
      rawSqliteOf(t.app.database.db)!.pragma('busy_timeout = 100');
      const locker = openDatabase(t.config.database);
      rawSqliteOf(locker.db)!.exec('BEGIN IMMEDIATE');
      restore = async () => {
        rawSqliteOf(locker.db)!.exec('ROLLBACK');
        await locker.close();
      };
    } else {
      // The database stops taking connections and drops the ones it has.
      const name = new URL(t.databaseUrl).pathname.slice(1);
      await adminQuery(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`);
      await adminQuery(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);
      restore = () => adminQuery(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`);
    }
    try {
      const json = await signUp(base, 'later@example.com').answer;
      expect(json.status).toBe(503);
      expect(json.headers.get('retry-after')).toBe('5');
      expect(json.body).toEqual({ error: { code: 'unavailable', message: 'The waitlist cannot take signups at the moment. Please try again in a minute.' } });
      const form = await signUp(base, 'later-form@example.com', true).answer;
      expect(form.status).toBe(503);
      expect(String(form.body)).toContain(SIGNUP_FORM_FAILURES.other.message);
      // An offering list's signup too (its list is read first, then its consent record written).
      const offering = await fetch(`${base}${SIGNUP_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'later-list@example.com', list: 'acme' }) });
      expect(offering.status).toBe(503);
      expect(offering.headers.get('retry-after')).toBe('5');
    } finally {
      await restore();
    }
    const back = await signUp(base, 'later@example.com').answer;
    expect(back.status).toBe(201);
  });

  it('the batch transaction: a repeat inside it, a known and an erased address come back false, suppressions kept, all or nothing', async () => {
    const { t } = await startApp(dialect);
    const db = t.app.database.db;
    const other = observer(t);
    const entry = (email: string): WaitlistEntry => ({
      id: crypto.randomUUID(),
      email,
      created_at: new Date().toISOString(),
      ip_address: '198.51.100.7',
      country: 'Iceland',
      city: 'Reykjavík, Höfuðborgarsvæðið "quoted" {braces} \\ back',
      region: null,
      ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION,
      consent_version: 'v1',
    });
    const hashed: string[] = [];
    const write = (email: string, solution: Solution | null = null): SignupWrite => ({
      entry: entry(email),
      suppressionHash: () => {
        hashed.push(email);
        return suppressionHash(t.app.secretBox, email);
      },
      solution,
    });
    const commit = signupBatchCommitter(db, solutionSpender(db));
    const flags = (results: readonly WriteResult[]) => results.map((r) => r.inserted);
    await insertEntry(t, 'known@example.com');

    // Nothing suppressed: SQLite does not even compute the hashes.
    expect(await commit([write('first@example.com')], async () => {})).toEqual([{ inserted: true, replayed: false }]);
    expect(hashed).toEqual(dialect === 'sqlite' ? [] : ['first@example.com']);

    await db.insertInto('waitlist_suppressions').values({ email_hash: suppressionHash(t.app.secretBox, 'erased@example.com'), reason: 'erased', created_at: new Date().toISOString() }).execute();
    const writes = [write('zed@example.com'), write('erased@example.com'), write('Known@example.com'), write('zed@example.com'), write('abe@example.com')];
    let seen: readonly WriteResult[] = [];
    const results = await commit(writes, async (_trx, given) => {
      seen = given;
      expect(await findWaitlistEntryByEmail(other.db, 'zed@example.com')).toBeUndefined(); // not committed yet
    });
    // The erased address is not stored (issue 28: it comes back only through the link e-mailed to it).
    expect(flags(results)).toEqual([true, false, false, false, true]);
    expect(results.every((r) => !r.replayed)).toBe(true);
    expect(seen).toEqual(results);
    const zed = await findWaitlistEntryByEmail(other.db, 'zed@example.com');
    expect(zed).toEqual({ ...writes[0]!.entry, created_at: zed!.created_at });
    expect(Date.parse(zed!.created_at)).toBe(Date.parse(writes[0]!.entry.created_at));
    expect(await findWaitlistEntryByEmail(other.db, 'erased@example.com')).toBeUndefined();
    expect(await db.selectFrom('waitlist_suppressions').selectAll().execute()).toHaveLength(1);

    // A failure before the commit writes nothing.
    await expect(
      commit([write('rolled-back@example.com')], async () => {
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await findWaitlistEntryByEmail(other.db, 'rolled-back@example.com')).toBeUndefined();
    expect(flags(await commit([write('rolled-back@example.com')], async () => {}))).toEqual([true]);
  });

  it('the batch transaction spends the signups\' solutions: a repeat or one spent before is stored held, all or nothing', async () => {
    const { t } = await startApp(dialect);
    const db = t.app.database.db;
    const commit = signupBatchCommitter(db, solutionSpender(db));
    const expiresAt = Math.floor(Date.now() / 1000) + 600;
    const solution = (signature: string): Solution => ({ signature, expiresAt });
    const write = (email: string, s: Solution | null): SignupWrite => ({
      entry: { id: crypto.randomUUID(), email, created_at: new Date().toISOString(), ip_address: null, country: null, city: null, region: null, ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION, consent_version: 'v1' },
      suppressionHash: () => suppressionHash(t.app.secretBox, email),
      solution: s,
    });
    const spent = async () => (await db.selectFrom('signup_challenges_spent').select('signature').orderBy('signature').execute()).map((r) => r.signature);
    await insertEntry(t, 'known@example.com');

    // A failure before the commit spends nothing.
    await expect(commit([write('rolled-back@example.com', solution('r'))], async () => { throw new Error('refused'); })).rejects.toThrow('refused');
    expect(await spent()).toEqual([]);

    const first = await commit([write('a@example.com', solution('s1')), write('b@example.com', solution('s1')), write('known@example.com', solution('s2')), write('c@example.com', null)], async () => {});
    expect(first).toEqual([
      { inserted: true, replayed: false },
      { inserted: true, replayed: true }, // the same solution again in the batch: stored held
      { inserted: false, replayed: false }, // a known address: not stored, its solution spent all the same
      { inserted: true, replayed: false },
    ]);
    const again = await commit([write('d@example.com', solution('s2')), write('e@example.com', solution('r'))], async () => {});
    expect(again).toEqual([{ inserted: true, replayed: true }, { inserted: true, replayed: false }]);
    expect(await spent()).toEqual(['r', 's1', 's2']);
    // An insert that fails after the spend (no transaction on PostgreSQL without beforeCommit): the
    // batch's solutions are given back, so its signups retried alone spend them again.
    if (dialect === 'postgres') {
      await sql`CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.email = 'boom@example.com' THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END $$`.execute(db);
      await sql`CREATE TRIGGER refuse_boom BEFORE INSERT ON waitlist FOR EACH ROW EXECUTE FUNCTION refuse_boom()`.execute(db);
    } else {
      await sql`CREATE TRIGGER refuse_boom BEFORE INSERT ON waitlist WHEN NEW.email = 'boom@example.com' BEGIN SELECT RAISE(ABORT, 'boom'); END`.execute(db);
    }
    await expect(commit([write('fine@example.com', solution('f')), write('boom@example.com', solution('b'))])).rejects.toThrow('boom');
    expect(await spent()).toEqual(['r', 's1', 's2']);
    expect(await findWaitlistEntryByEmail(db, 'fine@example.com')).toBeUndefined();
    const status = async (email: string) => {
      const e = await findWaitlistEntryByEmail(db, email);
      return [e?.status, e?.held_reason];
    };
    expect(await status('a@example.com')).toEqual(['joined', null]);
    expect(await status('b@example.com')).toEqual(['held', 'challenge_replayed']);
    expect(await status('c@example.com')).toEqual(['joined', null]);
    expect(await status('d@example.com')).toEqual(['held', 'challenge_replayed']);
    expect(await status('e@example.com')).toEqual(['joined', null]);
  });
});

describeWhen(TEST_DIALECTS.includes('postgres'))('signup group commit, two instances on one PostgreSQL database', () => {
  const dialect = 'postgres';
  it('overlapping batches on two instances: each address stored once, one 201 each, no deadlock', async () => {
    const lines: string[] = [];
    const logger = {
      level: 'warn',
      stream: new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString('utf8'));
          done();
        },
      }),
    };
    const gateA = commitGate();
    const gateB = commitGate();
    const counterA = countingGeolocator();
    const counterB = countingGeolocator();
    const a = await startApp(dialect, {}, { signupBatch: gateA.hooks, geolocator: counterA.geolocator, logger });
    // B runs on A's database.
    const b = await createTestApp(
      { SIGNUP_RATE_LIMIT_MAX: '1000', DATABASE_URL: a.t.databaseUrl },
      { signupBatch: gateB.hooks, geolocator: counterB.geolocator, logger },
    );
    cleanups.push(() => b.close());
    await b.app.listen({ host: '127.0.0.1', port: 0 });
    const baseB = `http://127.0.0.1:${(b.app.server.address() as { port: number }).port}`;

    // Each batch pauses in the middle of the shared addresses, so that the two transactions overlap
    // while each holds some of them: inserted in different orders, they would deadlock.
    await sql`CREATE FUNCTION slow_middle() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.email = 'shared15@example.com' THEN PERFORM pg_sleep(0.3); END IF; RETURN NEW; END $$`.execute(a.t.app.database.db);
    await sql`CREATE TRIGGER slow_middle BEFORE INSERT ON waitlist FOR EACH ROW EXECUTE FUNCTION slow_middle()`.execute(a.t.app.database.db);
    gateA.hold();
    gateB.hold();
    const holdA = signUp(a.base, 'hold-a@example.com');
    const holdB = signUp(baseB, 'hold-b@example.com');
    await Promise.all([gateA.arrival(), gateB.arrival()]);
    const shared = Array.from({ length: 30 }, (_, i) => `shared${String(i).padStart(2, '0')}@example.com`);
    const onA = [...shared, ...Array.from({ length: 20 }, (_, i) => `only-a${i}@example.com`)];
    const onB = [...[...shared].reverse(), ...Array.from({ length: 20 }, (_, i) => `only-b${i}@example.com`)];
    const sentA = onA.map((email) => ({ email, s: signUp(a.base, email) }));
    const sentB = onB.map((email) => ({ email, s: signUp(baseB, email) }));
    await Promise.all([counterA.reached(1 + onA.length), counterB.reached(1 + onB.length)]);
    gateA.release();
    gateB.release();

    const results = await Promise.all([...sentA, ...sentB].map(async ({ email, s }) => ({ email, status: (await s.answer).status })));
    await Promise.all([holdA.answer, holdB.answer]);
    expect(results.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    for (const email of shared) expect(results.filter((r) => r.email === email && r.status === 201)).toHaveLength(1);
    for (const r of results) if (!r.email.startsWith('shared')) expect(r.status).toBe(201);
    const rows = await a.t.app.database.db.selectFrom('waitlist').select('email').execute();
    expect(rows).toHaveLength(2 + shared.length + 40);
    expect(gateA.sizes).toEqual([1, onA.length]);
    expect(gateB.sizes).toEqual([1, onB.length]);
    // Both batches went through whole: no deadlock or other failure made them fall back.
    expect(lines.filter((l) => l.includes('batch'))).toEqual([]);
  });
});
