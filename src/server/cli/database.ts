import type { Kysely } from 'kysely';
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import type { Database } from '../db/schema.js';
import type { CliIo } from './program.js';

/** Opens the database the server would use (DATABASE_URL), migrates it, runs `work` and closes it. */
export async function withDatabase<T>(io: CliIo, work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  const handle = openDatabase(loadConfig(io.env).database);
  try {
    await migrateToLatest(handle.db);
    return await work(handle.db);
  } finally {
    await handle.close();
  }
}
