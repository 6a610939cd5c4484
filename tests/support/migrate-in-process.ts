// Runs the real migrations against DATABASE_URL in its own process and prints what it applied.
// Used to start several "instances" at once in the migration tests.
import { loadConfig } from '../../src/server/config.js';
import { openDatabase } from '../../src/server/db/database.js';
import { migrateToLatest } from '../../src/server/db/migrate.js';

const handle = openDatabase(loadConfig().database);
try {
  const applied = await migrateToLatest(handle.db);
  process.stdout.write(JSON.stringify(applied));
} finally {
  await handle.close();
}
