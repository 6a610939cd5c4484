import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/server/db/database.js';
import { migrateToLatest } from '../../src/server/db/migrate.js';
import { adminQuery, quoteIdent, withDatabase } from './databases.js';

/**
 * With TEST_DATABASE_URL set: checks the server answers (failing the run loudly if not, so the
 * PostgreSQL suites can never be skipped silently) and migrates one template database that each
 * test copies with CREATE DATABASE … TEMPLATE.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | void> {
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
