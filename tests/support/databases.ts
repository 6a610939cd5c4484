import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, inject, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/server/db/database.js';
import { migrateToLatest } from '../../src/server/db/migrate.js';

/**
 * The databases every data-layer and API suite runs against: SQLite always, PostgreSQL too
 * whenever TEST_DATABASE_URL names a PostgreSQL server (CI sets it). Use with
 * `describe.each(TEST_DIALECTS)('… (%s)', (dialect) => …)`.
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
    postgresTemplate: string | null;
  }
}

function withDatabase(baseUrl: string, name: string): string {
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

export async function adminQuery(sqlText: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(sqlText);
  } finally {
    await client.end();
  }
}

export interface ScratchPostgres {
  url: string;
  drop(): Promise<void>;
}

/**
 * A fresh PostgreSQL database for one test app. By default it is a copy of the template the global
 * setup migrated once (fast); `{ empty: true }` gives one with no tables, for migration tests.
 */
export async function createScratchPostgres(options: { empty?: boolean } = {}): Promise<ScratchPostgres> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('TEST_DATABASE_URL is not set: PostgreSQL tests cannot run');
  const template = options.empty ? null : inject('postgresTemplate');
  const name = `waitlist_t_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${quoteIdent(name)}${template ? ` TEMPLATE ${quoteIdent(template)}` : ''}`);
  return {
    url: withDatabase(base, name),
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`),
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
 * A fresh migrated database of the dialect: SQLite in memory, or a scratch PostgreSQL database
 * copied from the migrated template (dropped by close()).
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
