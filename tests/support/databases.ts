import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';
import { describe, inject, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/server/db/database.js';
import { migrateToLatest } from '../../src/server/db/migrate.js';

/**
 * The databases every data-layer and API suite runs against: SQLite always, PostgreSQL too
 * whenever TEST_DATABASE_URL names a PostgreSQL server (CI sets it). Use with
 * `describe.each(TEST_DIALECTS)('… (%s)', (dialect) => …)`.
 *
 * Both start from a schema the global setup migrated once (global-setup.ts): a SQLite file that each
 * test copies, and a PostgreSQL template database from which each test process makes the databases
 * it needs, emptied between tests (see createScratchPostgres).
 */
export type TestDialect = 'sqlite' | 'postgres';
export const TEST_DIALECTS: TestDialect[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

/** A Redis server for the Redis suites, when TEST_REDIS_URL names one (CI sets it). */
export const TEST_REDIS_URL: string | null = process.env.TEST_REDIS_URL?.trim() || null;

/**
 * Tests that need a service only exist when it is configured: they are declared, or not at all
 * (never reported as skipped). CI configures every service and fails if one cannot be reached;
 * the global setup prints which ones a local run leaves out.
 */
export function itWhen(condition: boolean): typeof it {
  return condition ? it : (((..._args: unknown[]) => undefined) as unknown as typeof it);
}
export function describeWhen(condition: boolean): typeof describe {
  return condition ? describe : (((..._args: unknown[]) => undefined) as unknown as typeof describe);
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated PostgreSQL template database's name, or null without TEST_DATABASE_URL. */
    postgresTemplate: string | null;
    /** A migrated SQLite database file (checkpointed, no WAL beside it): copied, never opened. */
    sqliteTemplate: string;
  }
}

function withDatabase(baseUrl: string, name: string): string {
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Runs statements on one connection to `url` (TEST_DATABASE_URL's database by default); returns the last result's rows. */
async function query<R extends pg.QueryResultRow = pg.QueryResultRow>(sqlTexts: string[], url = process.env.TEST_DATABASE_URL): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    let rows: R[] = [];
    for (const text of sqlTexts) rows = (await client.query<R>(text)).rows;
    return rows;
  } finally {
    await client.end();
  }
}

export async function adminQuery(sqlText: string): Promise<void> {
  await query([sqlText]);
}

/**
 * A copy of the migrated SQLite template at `filename` (a new file), as if the app had just migrated
 * an empty database there: the same bytes, owner-only like the app's own files.
 */
export function copySqliteTemplate(filename: string): void {
  fs.copyFileSync(inject('sqliteTemplate'), filename, fs.constants.COPYFILE_EXCL);
  fs.chmodSync(filename, 0o600);
}

export interface ScratchPostgres {
  url: string;
  /** Gives the database back: dropped (an empty one), or kept for a later test, which empties it first. */
  drop(): Promise<void>;
}

/**
 * The migrated schema's shape: tables, columns, defaults, constraints, indexes, triggers, functions,
 * sequences and the migrations applied. A database that still has it can be emptied for the next
 * test; one a test changed (a dropped or renamed table) is dropped instead.
 */
const SCHEMA_SHAPE = `
  SELECT md5(string_agg(line, E'\\n' ORDER BY line)) AS shape FROM (
    SELECT format('rel %s %s %s', c.relname, c.relkind, c.relpersistence) AS line
      FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace
    UNION ALL
    SELECT format('col %s.%s %s %s %s', a.attrelid::regclass, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                  pg_get_expr(d.adbin, d.adrelid))
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE c.relnamespace = 'public'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL
    SELECT format('con %s %s', conrelid::regclass, pg_get_constraintdef(oid)) FROM pg_constraint WHERE connamespace = 'public'::regnamespace
    UNION ALL
    SELECT format('idx %s', indexdef) FROM pg_indexes WHERE schemaname = 'public'
    UNION ALL
    SELECT format('trg %s %s', tgrelid::regclass, pg_get_triggerdef(t.oid)) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
      WHERE c.relnamespace = 'public'::regnamespace AND NOT t.tgisinternal
    UNION ALL
    SELECT format('fn %s %s', p.oid::regprocedure, md5(p.prosrc)) FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
    UNION ALL
    SELECT format('mig %s', name) FROM app_migrations
  ) shape`;

/**
 * Empties every table but the migrations' own and restarts every sequence. DELETE rather than
 * TRUNCATE: a test leaves a few rows, and TRUNCATE makes new files for each of some 40 tables and
 * their indexes (about 150 ms a test, most of a PostgreSQL test's set-up); with the replication
 * role, foreign keys and triggers (the counts' rollup) are not run, so the order does not matter.
 */
const EMPTY_TABLES = `
  DO $$
  DECLARE t record; seq record;
  BEGIN
    SET LOCAL session_replication_role = replica;
    FOR t IN SELECT tablename FROM pg_tables
      WHERE schemaname = 'public' AND tablename NOT IN ('app_migrations', 'app_migrations_lock') LOOP
      EXECUTE format('DELETE FROM %I', t.tablename);
    END LOOP;
    FOR seq IN SELECT sequencename FROM pg_sequences WHERE schemaname = 'public' LOOP
      EXECUTE format('ALTER SEQUENCE %I RESTART', seq.sequencename);
    END LOOP;
  END $$`;

interface PooledDatabase {
  name: string;
  url: string;
}

/**
 * The PostgreSQL databases of this test process (it runs test file after test file): `idle`, given
 * back by an earlier test, to be emptied and handed out again; `givenBack`, given back during the
 * current test, which may still reach them by URL (a restarted app), so they wait for the next test.
 * The global teardown drops them all, by name.
 */
const pool = { idle: [] as PooledDatabase[], givenBack: [] as PooledDatabase[], shape: null as string | null };

/** A name that the global teardown recognises as one of this run's databases. */
function newDatabaseName(): string {
  const template = inject('postgresTemplate');
  return `${template ?? 'waitlist'}_t_${randomBytes(5).toString('hex')}`;
}

async function templateShape(): Promise<string> {
  pool.shape ??= (await query<{ shape: string }>([SCHEMA_SHAPE], withDatabase(process.env.TEST_DATABASE_URL!, inject('postgresTemplate')!)))[0]!.shape;
  return pool.shape;
}

/** Empties a database given back by an earlier test, if a test has not changed its schema; false when it has. */
async function reset(database: PooledDatabase): Promise<boolean> {
  // As DROP DATABASE … WITH (FORCE) did: nothing the previous test left connected holds a lock or sees the next one's rows.
  await query([`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database.name}' AND pid <> pg_backend_pid()`]);
  const [shape] = await query<{ shape: string }>([SCHEMA_SHAPE], database.url);
  if (shape?.shape !== (await templateShape())) return false;
  await query([EMPTY_TABLES], database.url);
  return true;
}

async function dropDatabase(database: PooledDatabase): Promise<void> {
  await adminQuery(`DROP DATABASE IF EXISTS ${quoteIdent(database.name)} WITH (FORCE)`);
}

/** Called after each test (setup-file.ts): what it gave back may be emptied for the next one. */
export function postgresTestEnded(): void {
  pool.idle.push(...pool.givenBack.splice(0));
}

/**
 * A migrated PostgreSQL database for one test app, with no rows: one given back by an earlier test,
 * emptied (TRUNCATE … RESTART IDENTITY), or else a new copy of the template the global setup
 * migrated. `{ empty: true }` gives a new database with no tables, for migration tests, dropped when
 * given back.
 */
export async function createScratchPostgres(options: { empty?: boolean } = {}): Promise<ScratchPostgres> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('TEST_DATABASE_URL is not set: PostgreSQL tests cannot run');
  let database: PooledDatabase | undefined;
  while (!options.empty && !database && pool.idle.length > 0) {
    const candidate = pool.idle.shift()!;
    if (await reset(candidate)) database = candidate;
    else await dropDatabase(candidate);
  }
  if (!database) {
    const template = options.empty ? null : inject('postgresTemplate');
    const name = newDatabaseName();
    await adminQuery(`CREATE DATABASE ${quoteIdent(name)}${template ? ` TEMPLATE ${quoteIdent(template)}` : ''}`);
    await adminQuery(`ALTER DATABASE ${quoteIdent(name)} SET synchronous_commit = off`);
    database = { name, url: withDatabase(base, name) };
  }
  const given = database;
  let givenBack = false;
  return {
    url: given.url,
    drop: async () => {
      if (givenBack) return;
      givenBack = true;
      if (options.empty) await dropDatabase(given);
      else pool.givenBack.push(given);
    },
  };
}

/** A migrated database for a data-layer suite, and how to be rid of it. */
export interface TestDatabase {
  handle: DatabaseHandle;
  /** The scratch PostgreSQL database's URL; null on SQLite. */
  url: string | null;
  close(): Promise<void>;
}

/**
 * A fresh migrated database of the dialect: SQLite in memory, or a scratch PostgreSQL database with
 * no rows (given back by close()).
 */
export async function openTestDatabase(dialect: TestDialect): Promise<TestDatabase> {
  if (dialect === 'postgres') {
    const scratch = await createScratchPostgres();
    const handle = openDatabase({ dialect: 'postgres', connectionString: scratch.url });
    return {
      handle,
      url: scratch.url,
      close: async () => {
        await handle.close();
        await scratch.drop();
      },
    };
  }
  const handle = openDatabase({ dialect: 'sqlite', filename: ':memory:' });
  await migrateToLatest(handle.db);
  return { handle, url: null, close: () => handle.close() };
}

export { withDatabase, quoteIdent };
