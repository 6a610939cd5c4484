import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/server/db/database.js';
import { migrateToLatest } from '../../src/server/db/migrate.js';
import { adminQuery, quoteIdent, withDatabase } from './databases.js';

/**
 * With TEST_DATABASE_URL set: checks the server answers (failing the run loudly if not, so the
 * PostgreSQL suites can never be skipped silently) and migrates one template database that each
 * test copies with CREATE DATABASE … TEMPLATE.
 */
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

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | void> {
  const redisUrl = process.env.TEST_REDIS_URL?.trim();
  if (redisUrl) await checkRedis(redisUrl);
  const off = [
    ...(process.env.TEST_DATABASE_URL ? [] : ['PostgreSQL (set TEST_DATABASE_URL)']),
    ...(redisUrl ? [] : ['Redis (set TEST_REDIS_URL)']),
  ];
  if (off.length > 0) console.log(`Suites not declared in this run: ${off.join(', ')}. CI runs them all.`);

  const base = process.env.TEST_DATABASE_URL;
  if (!base) {
    project.provide('postgresTemplate', null);
    return;
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
    await adminQuery(`DROP DATABASE IF EXISTS ${quoteIdent(template)} WITH (FORCE)`);
  };
}
