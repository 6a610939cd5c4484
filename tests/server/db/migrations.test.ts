import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/server/config.js';
import { openDatabase, toIsoTimestamp, type DatabaseHandle } from '../../../src/server/db/database.js';
import { MIGRATIONS, migrateToLatest } from '../../../src/server/db/migrate.js';
import { WAITLIST_COLUMNS } from '../../../src/server/db/waitlist-entries.js';
import { createScratchPostgres, TEST_DIALECTS, type TestDialect } from '../../support/databases.js';

const run = promisify(execFile);

async function tableNames(handle: DatabaseHandle): Promise<string[]> {
  const tables = await handle.db.introspection.getTables({ withInternalKyselyTables: true });
  return tables.map((t) => t.name).sort();
}

describe.each(TEST_DIALECTS)('migrations (%s)', (dialect: TestDialect) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  /** An empty database (no tables at all) and its DATABASE_URL. */
  async function emptyDatabase(): Promise<{ url: string; open: () => DatabaseHandle }> {
    let url: string;
    if (dialect === 'postgres') {
      const scratch = await createScratchPostgres({ empty: true });
      cleanups.push(scratch.drop);
      url = scratch.url;
    } else {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-migrate-'));
      cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
      url = `file:${path.join(dir, 'db.sqlite')}`;
    }
    const open = () => {
      const handle = openDatabase(loadConfig({ DATABASE_URL: url }).database);
      cleanups.push(() => handle.close());
      return handle;
    };
    return { url, open };
  }

  const broken = {
    async up(db: Kysely<any>) {
      await db.schema.createTable('half_done').addColumn('id', 'text').execute();
      await sql`this is not sql`.execute(db);
    },
  };

  it('applies every migration once, then nothing', async () => {
    const { open } = await emptyDatabase();
    const handle = open();
    expect(await migrateToLatest(handle.db)).toEqual(Object.keys(MIGRATIONS));
    expect(await migrateToLatest(handle.db)).toEqual([]);
    expect(await tableNames(handle)).toEqual(expect.arrayContaining(['waitlist', 'app_migrations']));
  });

  it(`the admin's e-mail search has a trigram index on PostgreSQL (pg_trgm), none on SQLite`, async () => {
    const { open } = await emptyDatabase();
    const handle = open();
    await migrateToLatest(handle.db);
    if (dialect === 'postgres') {
      const { rows } = await sql<{ indexdef: string }>`SELECT indexdef FROM pg_indexes WHERE indexname = 'waitlist_email_trgm_idx'`.execute(handle.db);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.indexdef).toMatch(/USING gin \(lower\(email\) \S*gin_trgm_ops\)/);
      // The search still finds what it should through it.
      await handle.db.insertInto('waitlist').values([
        { id: '00000000-0000-4000-8000-000000000001', email: 'Ada@Proton.me', created_at: new Date().toISOString() },
        { id: '00000000-0000-4000-8000-000000000002', email: 'bob@example.com', created_at: new Date().toISOString() },
      ]).execute();
      await sql`SET enable_seqscan = off`.execute(handle.db);
      const found = await sql<{ email: string }>`SELECT email FROM waitlist WHERE lower(email) LIKE '%@proton.me'`.execute(handle.db);
      expect(found.rows.map((r) => r.email)).toEqual(['Ada@Proton.me']);
    } else {
      const { rows } = await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'waitlist_email_trgm_idx'`.execute(handle.db);
      expect(rows).toEqual([]);
    }
  });

  it('the signup batch insert (PostgreSQL: a function planned once per connection) writes every field of an entry', async () => {
    const { open } = await emptyDatabase();
    const handle = open();
    await migrateToLatest(handle.db);
    if (dialect === 'postgres') {
      // A field added to the entry needs a migration replacing the function (2026-11-29T1100).
      const { rows } = await sql<{ def: string; config: string[] }>`
        SELECT pg_get_functiondef(p.oid) AS def, p.proconfig AS config FROM pg_proc p WHERE p.proname = 'waitlist_insert_batch'`.execute(handle.db);
      expect(rows).toHaveLength(1);
      const inserted = /INSERT INTO waitlist \(([^)]*)\)/.exec(rows[0]!.def)?.[1]?.split(',').map((c) => c.trim().replace(/"/g, ''));
      expect(inserted).toEqual([...WAITLIST_COLUMNS]);
      expect(rows[0]!.config).toEqual(['plan_cache_mode=force_generic_plan', 'waitlist.rollup_fold=deferred']);
    } else {
      const { rows } = await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE name LIKE '%insert_batch%'`.execute(handle.db);
      expect(rows).toEqual([]);
    }
  });

  it('roles: the earliest-created existing admin becomes the owner, the others stay admins', async () => {
    const { open } = await emptyDatabase();
    const handle = open();
    const before = Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name < '2026-11-29T0700'));
    await migrateToLatest(handle.db, before);
    const admins = [
      { id: '22222222-2222-4222-8222-222222222222', email: 'second@example.com', created_at: '2026-01-02T00:00:00.000Z' },
      { id: '11111111-1111-4111-8111-111111111111', email: 'first@example.com', created_at: '2026-01-01T00:00:00.000Z' },
      { id: '33333333-3333-4333-8333-333333333333', email: 'third@example.com', created_at: '2026-01-03T00:00:00.000Z' },
    ];
    for (const a of admins) {
      // Rows as the schema before roles had them (no role column yet).
      await sql`INSERT INTO admin_users (id, email, password_hash, user_metadata, created_at, updated_at)
        VALUES (${a.id}, ${a.email}, 'x', '{}', ${a.created_at}, ${a.created_at})`.execute(handle.db);
    }
    expect((await migrateToLatest(handle.db))[0]).toBe('2026-11-29T0700-admin-roles');
    const rows = await handle.db.selectFrom('admin_users').select(['email', 'role', 'created_at']).orderBy('created_at').execute();
    expect(rows.map((r) => [r.email, r.role, toIsoTimestamp(r.created_at)])).toEqual([
      ['first@example.com', 'owner', '2026-01-01T00:00:00.000Z'],
      ['second@example.com', 'admin', '2026-01-02T00:00:00.000Z'],
      ['third@example.com', 'admin', '2026-01-03T00:00:00.000Z'],
    ]);
    // The column takes the three names only.
    await expect(handle.db.updateTable('admin_users').set({ role: 'root' as never }).where('email', '=', 'third@example.com').execute()).rejects.toThrow();
  });

  it('spent challenges keyed by expiry: the spent rows are kept, a repeat still conflicts, and down restores the signature key', async () => {
    const { open } = await emptyDatabase();
    const handle = open();
    const migrations = Object.entries(MIGRATIONS);
    await migrateToLatest(handle.db, Object.fromEntries(migrations.filter(([name]) => name < '2026-11-29T1000')));
    await sql`INSERT INTO signup_challenges_spent (signature, expires_at) VALUES ('b', 20), ('a', 10)`.execute(handle.db);
    expect(await migrateToLatest(handle.db, Object.fromEntries(migrations.filter(([name]) => name < '2026-11-29T1001')))).toEqual(['2026-11-29T1000-spent-challenges-by-expiry']);
    const rows = async () => (await sql<{ signature: string; expires_at: number | string }>`SELECT * FROM signup_challenges_spent ORDER BY signature`.execute(handle.db)).rows.map((r) => [r.signature, Number(r.expires_at)]);
    expect(await rows()).toEqual([['a', 10], ['b', 20]]);
    // One b-tree, expiry first (the expiry index is gone).
    const indexes = dialect === 'postgres'
      ? (await sql<{ d: string }>`SELECT indexdef AS d FROM pg_indexes WHERE tablename = 'signup_challenges_spent'`.execute(handle.db)).rows.map((r) => r.d.replace(/^CREATE UNIQUE INDEX (\w+) ON .* USING btree /, '$1 '))
      : (await sql<{ d: string }>`SELECT sql AS d FROM sqlite_master WHERE tbl_name = 'signup_challenges_spent'`.execute(handle.db)).rows.map((r) => r.d.replace(/^.*PRIMARY KEY /, ''));
    expect(indexes).toEqual([dialect === 'postgres' ? 'signup_challenges_spent_pkey (expires_at, signature)' : '(expires_at, signature)) WITHOUT ROWID']);
    await expect(sql`INSERT INTO signup_challenges_spent (expires_at, signature) VALUES (10, 'a')`.execute(handle.db)).rejects.toThrow();
    const down = MIGRATIONS['2026-11-29T1000-spent-challenges-by-expiry']!.down!;
    await down(handle.db);
    expect(await rows()).toEqual([['a', 10], ['b', 20]]);
    await expect(sql`INSERT INTO signup_challenges_spent (signature, expires_at) VALUES ('a', 99)`.execute(handle.db)).rejects.toThrow();
    // And up again after down.
    await MIGRATIONS['2026-11-29T1000-spent-challenges-by-expiry']!.up(handle.db);
    expect(await rows()).toEqual([['a', 10], ['b', 20]]);
  });

  it('a failed migration on a fresh database leaves it empty', async () => {
    const { open } = await emptyDatabase();
    const handle = open();
    await expect(migrateToLatest(handle.db, { ...MIGRATIONS, '9999-broken': broken })).rejects.toThrow(/9999-broken/);
    const left = (await tableNames(handle)).filter((t) => !t.startsWith('app_migrations'));
    expect(left).toEqual([]);
  });

  it('a failed migration on a migrated database changes nothing, and data survives', async () => {
    const { open } = await emptyDatabase();
    const handle = open();
    await migrateToLatest(handle.db);
    await handle.db
      .insertInto('waitlist')
      .values({ id: '00000000-0000-4000-8000-000000000001', email: 'keep@example.com', created_at: new Date().toISOString(), ip_address: null, country: null, city: null, region: null })
      .execute();
    const before = await tableNames(handle);
    await expect(migrateToLatest(handle.db, { ...MIGRATIONS, '9999-broken': broken })).rejects.toThrow();
    expect(await tableNames(handle)).toEqual(before);
    const applied = await handle.db.selectFrom('app_migrations' as never).selectAll().execute();
    expect(applied).toHaveLength(Object.keys(MIGRATIONS).length);
    const rows = await handle.db.selectFrom('waitlist').select('email').execute();
    expect(rows).toEqual([{ email: 'keep@example.com' }]);
  });

  it('several instances starting at once migrate exactly once', async () => {
    const { url, open } = await emptyDatabase();
    const script = path.resolve('tests/support/migrate-in-process.ts');
    const tsx = path.resolve('node_modules/.bin/tsx');
    const outputs = await Promise.all(
      [1, 2, 3].map(() => run(tsx, [script], { env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'silent' } })),
    );
    const applied = outputs.map((o) => JSON.parse(o.stdout) as string[]);
    // Every migration was applied by exactly one of the processes.
    expect(applied.flat().sort()).toEqual(Object.keys(MIGRATIONS).sort());
    const handle = open();
    expect(await migrateToLatest(handle.db)).toEqual([]);
  });
});
