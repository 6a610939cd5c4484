import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as waitlistRollupMigration from '../../../src/server/db/migrations/2026-11-27T0900-waitlist-rollup.js';
import { rollupByList } from '../../../src/server/db/migrations/2026-11-29T0900-offering-lists.js';
import { countWaitlist } from '../../../src/server/db/waitlist-filter.js';
import { createRollupFolder } from '../../../src/server/insights/rollup-fold.js';
import { insertSignup } from '../../../src/server/signup/repository.js';
import type { WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { describeWhen, openTestDatabase, TEST_DIALECTS, type TestDatabase, type TestDialect } from '../../support/databases.js';
import { waitlistEntry } from '../../support/entries.js';

/**
 * The whole list's count (issue 10). PostgreSQL sums the per-day status counts that statement
 * triggers keep (waitlist_rollup, migration 2026-11-27T0900) instead of reading an index of every
 * entry; SQLite counts.
 * Either way countWaitlist() must be exactly count(*) after every way entries come and go.
 */

let seq = 0;
const entries = (n: number, prefix = 'count'): WaitlistEntry[] =>
  Array.from({ length: n }, () => {
    seq++;
    return waitlistEntry({ email: `${prefix}${seq}@example.org`, created_at: new Date(Date.UTC(2026, 0, 1) + seq * 1000).toISOString() });
  });

let t: TestDatabase;

async function countStar(): Promise<number> {
  const row = await t.handle.db.selectFrom('waitlist').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

async function expectExact(expected: number): Promise<void> {
  expect(await countStar()).toBe(expected);
  expect(await countWaitlist(t.handle.db)).toBe(expected);
}

describe.each(TEST_DIALECTS)('the waitlist count (%s)', (dialect: TestDialect) => {
  beforeEach(async () => {
    t = await openTestDatabase(dialect);
  });
  afterEach(async () => {
    await t?.close();
  });

  it('is exact after inserts, duplicates skipped by ON CONFLICT, deletes and a rolled-back transaction', async () => {
    const { db } = t.handle;
    await expectExact(0);
    const first = entries(5);
    await db.insertInto('waitlist').values(first[0]!).execute();
    await expectExact(1);
    // A multi-row insert as the signup batcher writes it: the duplicates add nothing.
    const again = entries(3);
    await db
      .insertInto('waitlist')
      .values([...first.slice(1), ...again, { ...first[0]!, id: crypto.randomUUID() }, { ...again[0]!, id: crypto.randomUUID() }])
      .onConflict((oc) => oc.expression(sql`list_id, lower(email)`).doNothing())
      .execute();
    await expectExact(8);
    // Nothing inserted at all.
    await db.insertInto('waitlist').values({ ...first[1]!, id: crypto.randomUUID() }).onConflict((oc) => oc.expression(sql`list_id, lower(email)`).doNothing()).execute();
    await expectExact(8);
    await db.deleteFrom('waitlist').where('id', 'in', [first[0]!.id, again[2]!.id, crypto.randomUUID()]).execute();
    await expectExact(6);
    // An update changes nothing.
    await db.updateTable('waitlist').set({ country: 'Germany' }).execute();
    await expectExact(6);
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('waitlist').values(entries(4)).execute();
        await trx.deleteFrom('waitlist').where('id', '=', first[1]!.id).execute();
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await expectExact(6);
    await db.deleteFrom('waitlist').execute();
    await expectExact(0);
  });

  it('is exact after concurrent writers', async () => {
    const { db } = t.handle;
    const batches = Array.from({ length: 12 }, (_, i) => entries(20 + i, `c${i}-`));
    await Promise.all(batches.map((rows) => db.insertInto('waitlist').values(rows).execute()));
    const inserted = batches.reduce((sum, rows) => sum + rows.length, 0);
    await expectExact(inserted);
    // Deletes and inserts at once, some in transactions of several statements.
    await Promise.all([
      ...batches.slice(0, 6).map((rows) => db.deleteFrom('waitlist').where('id', 'in', rows.slice(0, 10).map((r) => r.id)).execute()),
      ...batches.slice(6).map((rows) =>
        db.transaction().execute(async (trx) => {
          await trx.deleteFrom('waitlist').where('id', '=', rows[0]!.id).execute();
          await trx.insertInto('waitlist').values(entries(3, 'tx')).execute();
        }),
      ),
    ]);
    await expectExact(inserted - 60 - 6 + 18);
  });
});

const withPostgres = TEST_DIALECTS.includes('postgres');

describeWhen(withPostgres)('the waitlist rollup (postgres)', () => {
  beforeEach(async () => {
    t = await openTestDatabase('postgres');
  });
  afterEach(async () => {
    await t?.close();
  });

  /** waitlist_rollup's sums (migration 2026-11-27T0900) against GROUP BYs of the entries themselves. */
  const expectRollupExact = async () => {
    const { rows: got } = await sql<{ key: string; n: string }>`
      SELECT concat_ws('|', day, dim, coalesce(value, '<null>')) AS key, sum(n) AS n FROM waitlist_rollup GROUP BY day, dim, value HAVING sum(n) <> 0 ORDER BY 1`.execute(t.handle.db);
    const { rows: want } = await sql<{ key: string; n: string }>`
      SELECT concat_ws('|', k.day, k.dim, coalesce(k.value, '<null>')) AS key, count(*) AS n
      FROM waitlist w, LATERAL (VALUES (1, w.status), (2, w.country), (3, w.source), (4, w.utm_campaign), (5, CASE WHEN w.confirmed_at IS NOT NULL THEN '' END)) AS k0 (dim, value),
           LATERAL (SELECT (w.created_at AT TIME ZONE 'UTC')::date AS day, k0.dim, k0.value) AS k
      WHERE k.dim <> 5 OR k.value IS NOT NULL
      GROUP BY 1 ORDER BY 1`.execute(t.handle.db);
    expect(got).toEqual(want);
  };

  const rollupRows = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM waitlist_rollup`.execute(t.handle.db)).rows[0]!.n);

  it('folds its deltas, so the table stays small however many statements wrote', async () => {
    const { db } = t.handle;
    for (let i = 0; i < 600; i++) await db.insertInto('waitlist').values(entries(1)).execute();
    await expectExact(600);
    await expectRollupExact();
    // Each statement adds 4 rows (status, and no country, source or campaign, all on one day); every
    // 64th folds the day into its 4 groups: at most 63 statements' rows since the last fold, plus those.
    expect(await rollupRows()).toBeLessThanOrEqual(4 * 64);
    expect(await rollupRows()).toBeLessThan(600);
  });

  /** Inserts `n` entries, all at `at`, as the signups' group commit does: one call of waitlist_insert_batch each (insertSignup). */
  const signupBatches = async (n: number, at = new Date()) => {
    for (let i = 0; i < n; i++) {
      const [entry] = entries(1, 'batch').map((e) => ({ ...e, created_at: at.toISOString() }));
      await insertSignup(t.handle.db, entry!, 'no-suppression');
    }
  };
  const setStatements = (n: number) => sql`SELECT setval('waitlist_rollup_statements', ${n})`.execute(t.handle.db);

  it(`leaves the signups' deltas to the folder: none folded inline, today's folded once a second`, async () => {
    // One moment for every entry (one day; the folder folds today and yesterday, so midnight is covered).
    const at = new Date();
    await signupBatches(100, at);
    await expectExact(100);
    await expectRollupExact();
    // 100 statements of 4 rows each, none folded (a deferred statement folds every 4,096th).
    expect(await rollupRows()).toBe(400);
    const folder = createRollupFolder(t.handle.db, { error: () => undefined });
    const other = createRollupFolder(t.handle.db, { error: () => undefined });
    expect(await folder.runOnce()).toBe(1);
    expect(await rollupRows()).toBe(4);
    await expectRollupExact();
    // No write since: neither instance folds again (a fold's own new rows do not count as writes).
    expect(await other.runOnce()).toBe(1);
    expect(await folder.runOnce()).toBe(0);
    expect(await other.runOnce()).toBe(0);
    await signupBatches(1, at);
    expect(await rollupRows()).toBe(8);
    expect(await folder.runOnce()).toBe(1);
    expect(await rollupRows()).toBe(4);
    await expectExact(101);
    await expectRollupExact();
    await Promise.all([folder.stop(), other.stop()]);
  });

  it('folds a deferred statement every 4,096th only (not every 64th), so the deltas stay bounded without a server', async () => {
    await signupBatches(3);
    expect(await rollupRows()).toBe(12);
    // The next statement is the 64th: an admin's would fold, a signup batch does not.
    await setStatements(63);
    await signupBatches(1);
    expect(await rollupRows()).toBe(16);
    await setStatements(4095);
    await signupBatches(1);
    expect(await rollupRows()).toBe(4);
    await expectExact(5);
    await expectRollupExact();
  });

  it('never makes a writer wait: a fold skips the deltas another fold holds, and sees none of an open transaction', async () => {
    const { db } = t.handle;
    await db.insertInto('waitlist').values(entries(10)).execute();
    const client = new pg.Client({ connectionString: t.url! });
    await client.connect();
    try {
      // A transaction that folds (it locks every delta it sees) and stays open.
      await client.query('BEGIN');
      let held = 0;
      let folded = false;
      const rows = async () => Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM waitlist_rollup')).rows[0]!.n);
      let before = await rows();
      while (!folded) {
        const [row] = entries(1, 'held');
        await client.query('INSERT INTO waitlist (id, email, created_at, status) VALUES ($1, $2, $3, $4)', [row!.id, row!.email, row!.created_at, row!.status]);
        held++;
        // A statement adds rows unless it folded, which leaves one row per group.
        const after = await rows();
        folded = after <= before;
        before = after;
      }
      // Others write (and fold) meanwhile without waiting for it, and count without its entries.
      for (let i = 0; i < 300; i++) await db.insertInto('waitlist').values(entries(1)).execute();
      await expectExact(310);
      await client.query('COMMIT');
      await expectExact(310 + held);
    } finally {
      await client.end();
    }
  });

  it('starts at zero after TRUNCATE, and counts what comes after it', async () => {
    const { db } = t.handle;
    await db.insertInto('waitlist').values(entries(7)).execute();
    await sql`TRUNCATE waitlist`.execute(db);
    await expectExact(0);
    await expectRollupExact();
    await db.insertInto('waitlist').values(entries(2)).execute();
    await expectExact(2);
    await expectRollupExact();
  });

  it('starts from the entries already there when the migration runs', async () => {
    const { db } = t.handle;
    await db.insertInto('waitlist').values(entries(3)).execute();
    await waitlistRollupMigration.down(db);
    await db.insertInto('waitlist').values(entries(4).map((e, i) => ({ ...e, country: i % 2 ? 'Chile' : null, status: i ? 'joined' : 'pending' }))).execute();
    // The rollup as the migrations leave it: 2026-11-27T0900's, then keyed by list (2026-11-29T0900).
    await db.transaction().execute(async (trx) => {
      await waitlistRollupMigration.up(trx);
      await rollupByList(trx);
    });
    await expectExact(7);
    await expectRollupExact();
    await db.insertInto('waitlist').values(entries(1)).execute();
    await expectExact(8);
    await expectRollupExact();
  });
});
