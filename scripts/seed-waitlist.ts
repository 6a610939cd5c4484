/**
 * Inserts fake waitlist entries for benchmarks, screenshots and manual testing: a year of growing
 * signups with countries, statuses and attribution (sources, campaigns...), the same generator as
 * the admin benchmark (scripts/bench/lib/admin-data.ts).
 *
 *   tsx scripts/seed-waitlist.ts --count 100000 [--yes]
 *
 * Uses the app's configuration (DATABASE_URL, else the default SQLite file) and runs migrations
 * first. Refuses to add to a waitlist that already has entries unless --yes is given.
 * Entries are inserted in batches, one transaction per batch.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/server/config.js';
import { openDatabase } from '../src/server/db/database.js';
import { migrateToLatest } from '../src/server/db/migrate.js';
import type { Database } from '../src/server/db/schema.js';
import type { Insertable } from 'kysely';
import { SEED_COLUMNS, seedRows, type SeedRow } from './bench/lib/admin-data.js';

/** Rows per transaction. */
const BATCH_ROWS = 10_000;
/** Rows per INSERT: 22 columns x 1,000 = 22,000 parameters, below SQLite's 32,766 and PostgreSQL's 65,535. */
const STATEMENT_ROWS = 1_000;

function usage(message?: string): never {
  if (message) console.error(message);
  console.error('Usage: tsx scripts/seed-waitlist.ts --count N [--yes]');
  process.exit(2);
}

function toInsertable(row: SeedRow): Insertable<Database['waitlist']> {
  return Object.fromEntries(SEED_COLUMNS.map((column, i) => [column, row[i]])) as unknown as Insertable<Database['waitlist']>;
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: { count: { type: 'string' }, yes: { type: 'boolean', default: false }, help: { type: 'boolean' } },
      strict: true,
    }));
  } catch (err) {
    usage((err as Error).message);
  }
  if (values.help) usage();
  const count = Number(values.count);
  if (!values.count || !Number.isInteger(count) || count <= 0) usage('--count must be a positive whole number.');

  const config = loadConfig();
  const database = openDatabase(config.database);
  try {
    await migrateToLatest(database.db);
    const existing = Number(
      (await database.db.selectFrom('waitlist').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n,
    );
    if (existing > 0 && !values.yes) {
      console.error(`The waitlist already has ${existing} entries. Re-run with --yes to add ${count} more.`);
      process.exitCode = 1;
      return;
    }

    // A tag of its own per run, so a second seeding (--yes) adds new addresses.
    const rows = seedRows({ entries: count, deleteCount: 0, now: Date.now(), emailTag: randomUUID().slice(0, 8) });
    const started = performance.now();
    for (let start = 0; start < count; start += BATCH_ROWS) {
      const end = Math.min(start + BATCH_ROWS, count);
      await database.db.transaction().execute(async (trx) => {
        for (let s = start; s < end; s += STATEMENT_ROWS) {
          const batch = [];
          for (let i = s; i < Math.min(s + STATEMENT_ROWS, end); i++) batch.push(toInsertable(rows.next().value as SeedRow));
          await trx.insertInto('waitlist').values(batch).execute();
        }
      });
      process.stdout.write(`\rinserted ${end}/${count}`);
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(`\ndone: ${count} entries in ${seconds.toFixed(1)} s (${database.dialect})`);
  } finally {
    await database.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
