import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { solutionSpender } from '../../../src/server/challenge/index.js';
import type { Database } from '../../../src/server/db/schema.js';
import { signupBatchCommitter } from '../../../src/server/signup/repository.js';
import { createSearchIndexUpkeep, startSearchIndexUpkeep } from '../../../src/server/db/search-index-upkeep.js';
import { countWaitlist } from '../../../src/server/db/waitlist-filter.js';
import { adminQuery, describeWhen, openTestDatabase, TEST_DIALECTS, type TestDatabase } from '../../support/databases.js';
import { waitlistEntry } from '../../support/entries.js';
import { createTestApp } from '../../support/test-app.js';

/**
 * PostgreSQL: the admin search's trigram index keeps new entries in a pending list, and the insert
 * that takes the list past its limit moved the whole list inside its own statement. The upkeep
 * empties the list in a statement of its own (decision 075); gin_clean_pending_list's answer (the
 * pages it moved) shows whether there was a list to empty.
 */
it('does not run on SQLite, which has no such index', async () => {
  const t = await openTestDatabase('sqlite');
  try {
    expect(startSearchIndexUpkeep(t.handle.db, { error: () => undefined, warn: () => undefined })).toBeNull();
  } finally {
    await t.close();
  }
});

describeWhen(TEST_DIALECTS.includes('postgres'))('the search index upkeep (postgres)', () => {
  let t: TestDatabase;
  // Autovacuum (its ANALYZE too) empties the list as well: off for these tests, so that only the upkeep does.
  const autovacuum = (db: Kysely<Database>, on: boolean) =>
    (on ? sql`ALTER TABLE waitlist RESET (autovacuum_enabled)` : sql`ALTER TABLE waitlist SET (autovacuum_enabled = off)`).execute(db);
  beforeEach(async () => {
    t = await openTestDatabase('postgres');
    await autovacuum(t.handle.db, false);
  });
  afterEach(async () => {
    if (t) await autovacuum(t.handle.db, true);
    await t?.close();
  });

  const log = { error: () => undefined, warn: () => undefined };

  /** `n` signups written by the signups' group commit (signupBatchCommitter), 50 to a batch. */
  const signups = async (n: number, prefix: string, db: Kysely<Database> = t.handle.db) => {
    const commit = signupBatchCommitter(db, solutionSpender(db));
    for (let i = 0; i < n; i += 50) {
      const batch = Array.from({ length: Math.min(50, n - i) }, (_, j) => waitlistEntry({ email: `${prefix}${i + j}@upkeep.example.org`, created_at: new Date().toISOString() }));
      await commit(batch.map((entry) => ({ entry, suppressionHash: () => 'no-suppression' })));
    }
  };
  /** The search's count, read through the trigram index (not a scan of a table this small). */
  const searchCount = (q: string) =>
    t.handle.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL enable_seqscan = off`.execute(trx);
      return countWaitlist(trx, { q });
    });

  it('empties the pending list into the index, and the search finds the same entries before and after', async () => {
    await signups(400, 'pending');
    expect(await searchCount('pending17')).toBe(11);
    const upkeep = createSearchIndexUpkeep(t.handle.db, log);
    expect(await upkeep.runOnce()).toBeGreaterThan(0);
    // Nothing written since: nothing left to move.
    expect(await upkeep.runOnce()).toBe(0);
    expect(await searchCount('pending17')).toBe(11);
    expect(await searchCount('upkeep.example')).toBe(400);
    await signups(50, 'later');
    expect(await upkeep.runOnce()).toBeGreaterThan(0);
    expect(await searchCount('later4')).toBe(11);
    await upkeep.stop();
  });

  it('runs its first pass at start', async () => {
    await signups(200, 'started');
    const upkeep = startSearchIndexUpkeep(t.handle.db, log);
    try {
      expect(upkeep).not.toBeNull();
      // runOnce comes after the pass that start() began: that one emptied the list.
      expect(await upkeep!.runOnce()).toBe(0);
    } finally {
      await upkeep?.stop();
    }
  });

  it('runs in the app: the pending list of rows written after start-up is emptied without anyone asking', async () => {
    const { app, close } = await createTestApp({}, { dialect: 'postgres' });
    try {
      const { db } = app.database;
      await autovacuum(db, false);
      // pgstatginindex reads the list's size without emptying it (pgstattuple: contrib, like pg_trgm).
      await sql`CREATE EXTENSION IF NOT EXISTS pgstattuple`.execute(db);
      const pending = async () => Number((await sql<{ n: string }>`SELECT pending_tuples::text AS n FROM pgstatginindex('waitlist_email_trgm_idx')`.execute(db)).rows[0]!.n);
      try {
        await signups(300, 'app', db);
        await expect.poll(pending, { timeout: 10_000, interval: 100 }).toBe(0);
      } finally {
        // The database goes back to the pool as it came (a later test may be handed it).
        await sql`DROP EXTENSION pgstattuple`.execute(db);
        await autovacuum(db, true);
      }
    } finally {
      await close();
    }
  });

  it('does nothing under a role that does not own the index, where gin_clean_pending_list itself is refused', async () => {
    await signups(100, 'other');
    const role = `upkeep_${randomBytes(6).toString('hex')}`;
    await adminQuery(`CREATE ROLE ${role}`);
    try {
      const errors: unknown[] = [];
      const warnings: string[] = [];
      await t.handle.db.transaction().execute(async (trx) => {
        const schema = (await sql<{ s: string }>`SELECT current_schema() AS s`.execute(trx)).rows[0]!.s;
        await sql`GRANT USAGE ON SCHEMA ${sql.id(schema)} TO ${sql.id(role)}`.execute(trx);
        await sql`SET LOCAL ROLE ${sql.id(role)}`.execute(trx);
        // The role finds the index (so the pass's condition, not the lookup, leaves it alone)...
        expect((await sql<{ found: boolean }>`SELECT to_regclass('waitlist_email_trgm_idx') IS NOT NULL AS found`.execute(trx)).rows[0]!.found).toBe(true);
        // ...and may not empty its list.
        await sql`SAVEPOINT refused`.execute(trx);
        await expect(sql`SELECT gin_clean_pending_list(to_regclass('waitlist_email_trgm_idx'))`.execute(trx)).rejects.toThrow(/must be owner/);
        await sql`ROLLBACK TO SAVEPOINT refused`.execute(trx);
        const upkeep = createSearchIndexUpkeep(trx, { error: (err) => errors.push(err), warn: (msg) => warnings.push(msg) });
        expect(await upkeep.runOnce()).toBe(0);
        expect(await upkeep.runOnce()).toBe(0);
        await sql`RESET ROLE`.execute(trx);
        await sql`REVOKE USAGE ON SCHEMA ${sql.id(schema)} FROM ${sql.id(role)}`.execute(trx);
      });
      expect(errors).toEqual([]);
      // Said once, not every second.
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/does not own the search index/);
      // The owner still can: the list was left as it was.
      expect(await createSearchIndexUpkeep(t.handle.db, log).runOnce()).toBeGreaterThan(0);
    } finally {
      await adminQuery(`DROP ROLE ${role}`);
    }
  });
});
