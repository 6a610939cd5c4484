import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/server/db/database.js';
import { migrateToLatest } from '../../src/server/db/migrate.js';
import { adminQuery, quoteIdent, withDatabase } from './databases.js';

async function checkRedis(url: string): Promise<void> {
  const client = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 2000, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    throw new Error(`TEST_REDIS_URL=${url} cannot be reached: ${(err as Error).message}`);
  } finally {
    client.disconnect();
  }
}

/**
 * Migrates the SQLite template once for the run: a database file that every test app copies
 * (databases.ts, test-app.ts) instead of migrating its own. Closed, so its WAL is checkpointed into it.
 */
async function migrateSqliteTemplate(): Promise<{ file: string; remove: () => void }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-template-'));
  const file = path.join(dir, 'template.db');
  const handle = openDatabase({ dialect: 'sqlite', filename: file });
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
  return { file, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Migrates the SQLite template, and with TEST_DATABASE_URL set: checks the server answers (failing the
 * run loudly if not, so the PostgreSQL suites can never be skipped silently) and migrates one template
 * database from which the test processes make their databases with CREATE DATABASE … TEMPLATE; drops
 * them all at the end.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const redisUrl = process.env.TEST_REDIS_URL?.trim();
  if (redisUrl) await checkRedis(redisUrl);
  const off = [
    ...(process.env.TEST_DATABASE_URL ? [] : ['PostgreSQL (set TEST_DATABASE_URL)']),
    ...(redisUrl ? [] : ['Redis (set TEST_REDIS_URL)']),
  ];
  if (off.length > 0) console.log(`Suites not declared in this run: ${off.join(', ')}. CI runs them all.`);

  const sqliteTemplate = await migrateSqliteTemplate();
  project.provide('sqliteTemplate', sqliteTemplate.file);

  const base = process.env.TEST_DATABASE_URL;
  if (!base) {
    project.provide('postgresTemplate', null);
    return async () => sqliteTemplate.remove();
  }
  if (!/^postgres(ql)?:\/\//.test(base)) throw new Error(`TEST_DATABASE_URL must be a postgres:// URL, got ${base}`);
  try {
    await adminQuery('SELECT 1');
  } catch (err) {
    throw new Error(`TEST_DATABASE_URL=${base} cannot be reached: ${(err as Error).message}`);
  }
  const template = `waitlist_tpl_${randomBytes(4).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${quoteIdent(template)}`);
  const handle = openDatabase({ dialect: 'postgres', connectionString: withDatabase(base, template) });
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
  project.provide('postgresTemplate', template);
  return async () => {
    sqliteTemplate.remove();
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      // The databases the test processes made from the template (named after it).
      const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [`${template}_`]);
      for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(datname)} WITH (FORCE)`);
      await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(template)} WITH (FORCE)`);
    } finally {
      await client.end();
    }
  };
}
