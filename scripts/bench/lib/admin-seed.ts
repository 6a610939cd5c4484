/**
 * The admin benchmark's database (admin.ts): a fresh SQLite file or scratch PostgreSQL database,
 * seeded with the portal's list (lib/admin-data.ts) and, with --second-list, an offering list made
 * first with the build's admin CLI (`lists create`, `lists open`) whose entries are loaded beside
 * the portal's; then the counts every later step relies on are checked.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import {
  DELETE_COUNTRY,
  freshPostgresDatabase,
  postgresTarget,
  seedPostgres,
  seedSqlite,
  sqliteTarget,
  type SeedPlan,
  type SeedResult,
  type SeededDatabase,
} from './admin-data.js';
import { log, secs, type DatabaseResult } from './admin-report.js';
import { fmt } from './harness.js';
import { PORTAL_LIST_ID } from '../../../src/server/db/lists.js';

/** The portal's entries only (every count the steps expect): a WHERE condition. */
export const PORTAL = `list_id = ${PORTAL_LIST_ID}`;

/** Runs the build's admin CLI (`node <adminCli> ARGS`) on the database; `input`: its standard input. */
export function runAdminCli(adminCli: string, databaseUrl: string, env: NodeJS.ProcessEnv, args: string[], input = ''): void {
  const run = spawnSync(process.execPath, [adminCli, ...args], {
    env: { ...env, DATABASE_URL: databaseUrl },
    input,
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (run.status !== 0) throw new Error(`admin ${args.slice(0, 2).join(' ')} failed (${run.status ?? run.signal}):\n${run.stdout}${run.stderr}`);
}

/** The second list's entries now, and those of them in DELETE_COUNTRY. */
export async function secondListCounts(target: SeededDatabase, listId: number): Promise<[number, number]> {
  const where = 'SELECT count(*) AS n FROM waitlist WHERE list_id = ?';
  return [await target.count(where, [listId]), await target.count(`${where} AND country = ?`, [listId, DELETE_COUNTRY])];
}

export interface SeedSettings {
  workDir: string;
  plan: SeedPlan;
  /** The product's environment, for the admin CLI. */
  env: NodeJS.ProcessEnv;
  /** The server the scratch PostgreSQL database is made on. */
  postgresUrl: string;
  adminCli: string;
  /** The offering list beside the portal's, or null. */
  secondList: { slug: string; entries: number; deleteCount: number } | null;
  /** Registers what undoes the seeding (the scratch database's drop). */
  onCleanup(fn: () => Promise<void>): void;
}

/**
 * Seeds the portal's list (and the second list, made first with the admin CLI) and checks the
 * counts; resolves to the database and the second list's id (null: none).
 */
export async function seedDatabase(kind: 'sqlite' | 'postgres', settings: SeedSettings, result: DatabaseResult): Promise<{ target: SeededDatabase; secondListId: number | null }> {
  const { secondList } = settings;
  let plan = settings.plan;
  log(kind, `seeding ${fmt(plan.entries)} entries${secondList ? ` and ${fmt(secondList.entries)} of the list ${secondList.slug}` : ''}…`);
  const started = performance.now();
  let target: SeededDatabase;
  let seed: (plan: SeedPlan) => Promise<SeedResult>;
  if (kind === 'sqlite') {
    const file = path.join(settings.workDir, 'waitlist.db');
    target = sqliteTarget(file);
    seed = (p) => seedSqlite(file, p);
  } else {
    const scratch = await freshPostgresDatabase(settings.postgresUrl, 'waitlist_bench_admin');
    settings.onCleanup(() => scratch.drop());
    target = postgresTarget(scratch.url);
    seed = (p) => seedPostgres(scratch.url, p);
  }
  let secondListId: number | null = null;
  if (secondList) {
    // The list as an admin makes it (the CLI migrates the new database first), open for signups.
    runAdminCli(settings.adminCli, target.url, settings.env, ['lists', 'create', secondList.slug, '--name', 'Bench Offering', '--kind', 'testing-the-waters']);
    runAdminCli(settings.adminCli, target.url, settings.env, ['lists', 'open', secondList.slug]);
    secondListId = await target.count('SELECT id AS n FROM lists WHERE slug = ?', [secondList.slug]);
    if (secondListId === PORTAL_LIST_ID) throw new Error(`the list ${secondList.slug} got the portal's id`);
    plan = { ...plan, secondList: { listId: secondListId, entries: secondList.entries, deleteCount: secondList.deleteCount } };
  }
  result.seed = { ...(await seed(plan)), totalMs: 0 };
  result.seed.totalMs = performance.now() - started;
  log(kind, `seeded in ${secs(result.seed.totalMs)} (load ${secs(result.seed.loadMs)}${result.seed.vacuumMs ? `, VACUUM ANALYZE ${secs(result.seed.vacuumMs)}` : ''})`);
  const stored = await target.count(`SELECT count(*) AS n FROM waitlist WHERE ${PORTAL}`);
  const toDelete = await target.count(`SELECT count(*) AS n FROM waitlist WHERE ${PORTAL} AND country = ?`, [DELETE_COUNTRY]);
  if (stored !== plan.entries || toDelete !== plan.deleteCount) {
    throw new Error(`seeding left ${stored} entries (${toDelete} in ${DELETE_COUNTRY}); expected ${plan.entries} (${plan.deleteCount})`);
  }
  if (secondList && secondListId !== null) {
    const [inList, inListToDelete] = await secondListCounts(target, secondListId);
    if (inList !== secondList.entries || inListToDelete !== secondList.deleteCount) {
      throw new Error(`seeding left ${inList} entries in ${secondList.slug} (${inListToDelete} in ${DELETE_COUNTRY}); expected ${secondList.entries} (${secondList.deleteCount})`);
    }
  }
  return { target, secondListId };
}
