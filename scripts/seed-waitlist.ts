/**
 * Inserts fake waitlist entries for benchmarks and manual testing.
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

/** Rows per transaction. */
const BATCH_ROWS = 10_000;
/** Rows per INSERT: 7 columns x 2,000 = 14,000 parameters, below SQLite's 32,766 and PostgreSQL's 65,535. */
const STATEMENT_ROWS = 2_000;

const PLACES: Array<[city: string | null, region: string | null, country: string | null]> = [
  ['Berlin', 'Land Berlin', 'Germany'],
  ['New York', 'New York', 'United States'],
  ['San Francisco', 'California', 'United States'],
  ['London', 'England', 'United Kingdom'],
  ['São Paulo', 'São Paulo', 'Brazil'],
  ['Zürich', 'Zurich', 'Switzerland'],
  ['Tokyo', 'Tokyo', 'Japan'],
  [null, null, 'France'],
  [null, null, null],
];

function usage(message?: string): never {
  if (message) console.error(message);
  console.error('Usage: tsx scripts/seed-waitlist.ts --count N [--yes]');
  process.exit(2);
}

function fakeEntry(i: number, run: string, now: number): Insertable<Database['waitlist']> {
  const [city, region, country] = PLACES[i % PLACES.length]!;
  const hasIp = i % 10 !== 0;
  // Spread over the last year; every 50th row shares the previous row's timestamp (ties happen).
  const offset = Math.floor((i - (i % 50 === 0 && i > 0 ? 1 : 0)) * 1000 * 37.7);
  return {
    id: randomUUID(),
    email: `seed.${run}.${i}@example.com`,
    created_at: new Date(now - (offset % (365 * 24 * 3600 * 1000))).toISOString(),
    ip_address: hasIp ? `${10 + (i % 200)}.${(i >> 8) & 255}.${i & 255}.${(i * 7) % 255}` : null,
    country,
    city,
    region,
  };
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

    const run = randomUUID().slice(0, 8);
    const now = Date.now();
    const started = performance.now();
    for (let start = 0; start < count; start += BATCH_ROWS) {
      const end = Math.min(start + BATCH_ROWS, count);
      await database.db.transaction().execute(async (trx) => {
        for (let s = start; s < end; s += STATEMENT_ROWS) {
          const rows = [];
          for (let i = s; i < Math.min(s + STATEMENT_ROWS, end); i++) rows.push(fakeEntry(i, run, now));
          await trx.insertInto('waitlist').values(rows).execute();
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
