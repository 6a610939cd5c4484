/**
 * Admin benchmark (issue 10): the admin page with a million entries, on SQLite and PostgreSQL, in
 * one run. Per database:
 *
 * 1. Seed N entries (default 1,000,000; lib/admin-data.ts: realistic countries, sources, campaigns,
 *    statuses and a year of growing signups; one country on exactly --delete rows) into a fresh
 *    SQLite file or a scratch PostgreSQL database `waitlist_bench_admin` (dropped at the end),
 *    migrated by the app's own code. Create an admin (`dist/server/cli/admin.js create`) and start
 *    the production build (`node dist/server/main.js`) on it; sign in through /auth in headless
 *    Chromium (1280×900).
 * 2. Measure, timed inside the page (lib/admin-page.ts), each with the longest main-thread task:
 *    - first rows: navigation to /admin → the first table row shown;
 *    - insight panel: the same navigation → the Insights section's chart/table shown with data;
 *    - filtered (search): typing `@domain` into Search → the first matching row and the line
 *      "M entries match the filters" with the right M;
 *    - filtered (URL): navigation to /admin?country=… → the first row and the match line;
 *      each of these --runs times (median printed);
 *    - select all: the header checkbox → "(N selected)" with N = every entry;
 *    - export all: Export All → the download complete (timed by the bench), its rows counted, three
 *      times (the first is the server's and the browser's first export), beside the database's own
 *      streaming of the same rows measured right after (SQLite: better-sqlite3 iterate();
 *      PostgreSQL: psql \copy … TO '/dev/null'), three times; the medians and their ratio;
 *    - delete: /admin?country=<the delete country> (exactly --delete entries match) → Select all →
 *      Delete Selected → Delete → the toast "Deleted N entries"; the database then must hold
 *      exactly N fewer rows.
 * 3. The server's peak RSS (VmHWM) and the seed time.
 *
 * With --second-list M (issue 31), an offering list is made first (`dist/server/cli/admin.js lists
 * create` and `lists open`) and M entries of its own are loaded beside the portal's in the same bulk
 * load (lib/admin-data.ts: the same generator, another seed, so the same domains and countries, and
 * DELETE_COUNTRY on min(--delete, M / 10) of them). Every step still runs on the portal's list, and
 * every count it expects (the match lines, the list's total, select all N, the exported rows, the
 * delete's N and what remains) is the portal's alone: a step whose page shows the count over both
 * lists fails at once ("offering entries leaked"), and after the delete the second list must still
 * hold all its entries.
 *
 *   npm run build && npm run bench:admin                       # 1,000,000 entries, SQLite and PostgreSQL
 *   npm run bench:admin -- --entries 100000 --db sqlite        # a quick run
 *
 * Options (flag, or environment variable):
 *   --entries / BENCH_ENTRIES (1000000)   entries seeded
 *   --db / BENCH_DB (both)                sqlite, postgres or both
 *   --postgres / BENCH_DATABASE_URL       server for the scratch database (default postgres://postgres@127.0.0.1:5432/test)
 *   --runs / BENCH_RUNS (3)               repetitions of first rows, panel and the filtered steps
 *   --delete / BENCH_DELETE               entries the delete step removes (default 100,000, at most a tenth of --entries)
 *   --second-list / BENCH_SECOND_LIST (0) entries of a second list (an offering list) seeded beside the portal's
 *   --root / BENCH_ROOT (.)               project root whose dist/ is run (another checkout, for a before/after)
 *   --json FILE                           also write the results as JSON
 *   --verbose                             log the page's API requests of each step (start → end, page clock)
 *   --seed-only                           seed and measure the database's streaming only (no build, no browser)
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium, type Browser } from '@playwright/test';
import { findChromium } from '../ensure-chromium.mjs';
import { DELETE_COUNTRY, EXPORT_ALL_SQL, FILTER_COUNTRIES, SEARCH_DOMAINS, maxDeleteCount, type SeedPlan, type SeededDatabase } from './lib/admin-data.js';
import { PORTAL, runAdminCli, secondListCounts, seedDatabase } from './lib/admin-seed.js';
import { PAGE_SCRIPT, StepFailed, apiRequestMs, apiRequestsSince, documentTiming, lastEventAt, numberForms, shownAt, takeLongestTask, type ApiRequestMatch, type Condition } from './lib/admin-page.js';
import {
  ADMIN_DELETE_MATCHING_PATH,
  ADMIN_DELETE_PATH,
  ADMIN_EXPORT_PATH,
  ADMIN_INSIGHTS_PATH,
  ADMIN_WAITLIST_PATH,
} from '../../src/shared/admin/waitlist-api.js';
import { DEFAULT_POSTGRES, fmt, gitDescription } from './lib/harness.js';
import { log, printReport, secs, type DatabaseResult } from './lib/admin-report.js';
import { cpuSeconds, descendantsCpuSeconds, machineDescription, memorySampler, postgresCpuSampler } from './lib/proc.js';
import { freePort, postgresAnswers, startServer, stopServer, type ServerProcess } from './lib/servers.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// ---- options ------------------------------------------------------------------------------------

function usage(message: string): never {
  console.error(`${message}\nUsage: npm run bench:admin -- [--entries N] [--db sqlite|postgres|both] [--runs N] [--delete N] [--second-list N] [--postgres URL] [--root DIR] [--json FILE] [--verbose] [--seed-only]`);
  process.exit(2);
}

let flags;
try {
  ({ values: flags } = parseArgs({
    options: {
      entries: { type: 'string' },
      db: { type: 'string' },
      postgres: { type: 'string' },
      runs: { type: 'string' },
      delete: { type: 'string' },
      'second-list': { type: 'string' },
      json: { type: 'string' },
      root: { type: 'string' },
      verbose: { type: 'boolean', default: false },
      'seed-only': { type: 'boolean', default: false },
    },
    strict: true,
  }));
} catch (err) {
  usage((err as Error).message);
}

function wholeOption(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value.replace(/[_,]/g, ''));
  if (!Number.isInteger(n) || n < min) usage(`--${name} must be a whole number ≥ ${min}, got "${value}"`);
  return n;
}

const entries = wholeOption('entries', flags.entries ?? process.env.BENCH_ENTRIES, 1_000_000, 10);
const runs = wholeOption('runs', flags.runs ?? process.env.BENCH_RUNS, 3, 1);
const deleteCount = wholeOption('delete', flags.delete ?? process.env.BENCH_DELETE, Math.min(100_000, maxDeleteCount(entries)), 1);
if (deleteCount > maxDeleteCount(entries)) usage(`--delete ${deleteCount} is more than a tenth of --entries ${entries}`);
/** The second list's entries (0: none), and how many of them are in DELETE_COUNTRY (which the delete must leave). */
const second = wholeOption('second-list', flags['second-list'] ?? process.env.BENCH_SECOND_LIST, 0, 0);
const secondDelete = Math.min(deleteCount, maxDeleteCount(second));
const SECOND_LIST_SLUG = 'bench-offering';
const dbChoice = (flags.db ?? process.env.BENCH_DB ?? 'both').trim();
if (!['sqlite', 'postgres', 'both'].includes(dbChoice)) usage(`--db must be sqlite, postgres or both, got "${dbChoice}"`);
const kinds = (dbChoice === 'both' ? ['sqlite', 'postgres'] : [dbChoice]) as Array<'sqlite' | 'postgres'>;
const postgresUrl = flags.postgres ?? process.env.BENCH_DATABASE_URL ?? DEFAULT_POSTGRES;
const seedOnly = flags['seed-only'] === true;
const verbose = flags.verbose === true;
/** The build measured: this checkout's, or another's (a before/after comparison). */
const buildRoot = path.resolve(flags.root ?? process.env.BENCH_ROOT ?? projectRoot);
const mainJs = path.join(buildRoot, 'dist/server/main.js');
const adminCli = path.join(buildRoot, 'dist/server/cli/admin.js');

if (!seedOnly && !fs.existsSync(mainJs)) usage(`${mainJs} is missing: run \`npm run build\` first.`);
if (second > 0 && !fs.existsSync(adminCli)) usage(`${adminCli} is missing (--second-list makes its list with it): run \`npm run build\` first.`);
if (kinds.includes('postgres') && !(await postgresAnswers(postgresUrl))) {
  usage(`PostgreSQL at ${postgresUrl} did not answer: start it, set BENCH_DATABASE_URL / --postgres, or run with --db sqlite.`);
}

/** Timeouts, generous and growing with the list: a step past them fails with what was missing. */
const perMillion = entries / 1_000_000;
/** Exports, and runs of the database's own streaming they are held against (the medians). */
const STREAMING_RUNS = 3;
const TIMEOUT = {
  signIn: 120_000,
  shown: Math.max(60_000, 120_000 * perMillion),
  interaction: Math.max(30_000, 60_000 * perMillion),
  export: Math.max(120_000, 600_000 * perMillion),
  delete: Math.max(120_000, 300_000 * perMillion),
};
const admin = { email: 'bench-admin@example.com', password: 'bench password that is long enough' };

// ---- cleanup, also on Ctrl-C ----------------------------------------------------------------------

const cleanups = new Set<() => Promise<void> | void>();
async function runCleanups(): Promise<void> {
  for (const fn of [...cleanups].reverse()) {
    cleanups.delete(fn);
    try {
      await fn();
    } catch (err) {
      console.error(`cleanup failed: ${(err as Error).message}`);
    }
  }
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the server, dropping the scratch database…`);
    void runCleanups().finally(() => process.exit(130));
  });
}

// ---- results --------------------------------------------------------------------------------------

/** The API request behind each step (the page's own calls, src/shared/admin/waitlist-api.ts). */
const API: Record<string, ApiRequestMatch> = {
  firstPage: { path: ADMIN_WAITLIST_PATH, without: 'cursor=' },
  insights: { path: ADMIN_INSIGHTS_PATH },
  export: { path: ADMIN_EXPORT_PATH },
};

// ---- one database -----------------------------------------------------------------------------------

async function measureStreaming(kind: string, target: SeededDatabase, result: DatabaseResult): Promise<void> {
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < STREAMING_RUNS; i++) {
    const run = await target.streamAll();
    times.push(run.ms);
    rows = run.rows;
  }
  result.streaming = { runs: times, rows };
  log(kind, `database streaming of every row: ${times.map(secs).join(', ')}`);
}

/** Lines of a CSV file (streamed: the file may be hundreds of MB), minus the header. */
async function csvRecords(file: string): Promise<number> {
  let newlines = 0;
  let last = -1;
  for await (const chunk of fs.createReadStream(file) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) newlines++;
    if (chunk.length > 0) last = chunk[chunk.length - 1]!;
  }
  const lines = newlines + (last !== -1 && last !== 10 ? 1 : 0);
  return Math.max(0, lines - 1);
}

const matchLine = (m: number) => numberForms(m).map((n) => `${n} ${m === 1 ? 'entry matches' : 'entries match'} the filters`);
const selectedText = (k: number) => numberForms(k).map((n) => `(${n} selected)`);

async function measureInBrowser(kind: string, browser: Browser, server: ServerProcess, target: SeededDatabase, secondListId: number | null, result: DatabaseResult): Promise<void> {
  const base = `http://127.0.0.1:${server.port}`;
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  cleanups.add(() => context.close());
  await context.addInitScript({ content: PAGE_SCRIPT });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT.interaction);
  const failureShot = async (err: unknown): Promise<never> => {
    const shot = path.join(os.tmpdir(), `waitlist-bench-admin-${kind}-failure.png`);
    await page.screenshot({ path: shot, fullPage: true }).catch(() => undefined);
    const leak = err instanceof StepFailed ? `the second list's entries LEAKED into the portal's list: ` : '';
    throw new Error(`${leak}${(err as Error).message}\n(screenshot of the page: ${shot})`);
  };

  /**
   * The portal's count of the entries `where` holds for, and (with a second list) the count over
   * both lists, when it differs: the number a step must never show (its fail texts).
   */
  const counted = async (where: string, params: unknown[]): Promise<{ portal: number; leaked: number | null }> => {
    const portal = await target.count(`SELECT count(*) AS n FROM waitlist WHERE ${PORTAL} AND ${where}`, params);
    if (secondListId === null) return { portal, leaked: null };
    const all = await target.count(`SELECT count(*) AS n FROM waitlist WHERE ${where}`, params);
    if (all === portal) log(kind, `note: the second list has no entry where ${where} (${params.join(', ')}): a leak into this step would not show`);
    return { portal, leaked: all === portal ? null : all };
  };
  /** The fail texts of a count that took in the second list's entries (`leaked`), written as `texts` writes a count. */
  const leakTexts = (leaked: number | null, texts: (n: number) => string[]) => (leaked === null ? [] : texts(leaked));
  /** The portal's whole list, and its delete step, as counted over both lists. */
  const allLeaked = secondListId === null ? null : entries + second;
  const deleteLeaked = secondListId === null || secondDelete === 0 ? null : deleteCount + secondDelete;
  const peopleText = (n: number) => numberForms(n).map((f) => `${f} people signed up`);
  const exportedText = (n: number) => numberForms(n).map((f) => `Exported ${f} entries`);
  const deletedText = (n: number) => numberForms(n).map((f) => `Deleted ${f} entries`);

  /** --verbose: the API requests the page made for a step. */
  const trace = async (step: string, since: number) => {
    if (!verbose) return;
    const doc = since === 0 ? await documentTiming(page) : null;
    if (doc) log(kind, `  ${step}: document: HTML ${Math.round(doc.html)} ms, DOMContentLoaded ${Math.round(doc.domContentLoaded)} ms, load ${Math.round(doc.load)} ms`);
    for (const r of await apiRequestsSince(page, since)) {
      log(kind, `  ${step}: ${r.url.length > 110 ? `${r.url.slice(0, 107)}...` : r.url} ${Math.round(r.start)} → ${Math.round(r.end)} ms`);
    }
  };

  try {
    // Sign in: the session is kept by the page, so every navigation below is a signed-in /admin.
    await page.goto(`${base}/auth`);
    await page.getByLabel(/email/i).fill(admin.email);
    await page.getByLabel(/password/i).fill(admin.password);
    await page.getByRole('button', { name: 'Sign In' }).click();
    await page.waitForURL(/\/admin/, { timeout: TIMEOUT.signIn });
    await shownAt(page, 'rows after sign-in', { firstRow: {} }, TIMEOUT.shown);

    const panelCondition: Condition = { panel: { words: ['United States'] } };
    // Before each measured step the page must be quiet: the insight panel of the previous view
    // (the slowest request, and on SQLite one that holds the server's event loop) has finished,
    // so a step never waits for the tail of the one before.
    const settle = (step: string) => shownAt(page, `${step}: the insight panel settling`, { panel: { words: [] } }, TIMEOUT.shown);
    await settle('after sign-in');
    for (let r = 0; r < runs; r++) {
      // First rows and the panel, from one navigation (they load side by side, as the admin sees them).
      if (r > 0) await settle('URL filter');
      await page.goto(`${base}/admin`, { waitUntil: 'commit' });
      const [rowsAt, panelAt] = await Promise.all([
        shownAt(page, 'first rows', { firstRow: {} }, TIMEOUT.shown),
        shownAt(page, 'insight panel', panelCondition, TIMEOUT.shown),
      ]);
      const longest = await takeLongestTask(page);
      result.firstRows.push({ ms: rowsAt, longestTask: longest, apiMs: await apiRequestMs(page, 0, API.firstPage!) });
      result.panel.push({ ms: panelAt, longestTask: longest, apiMs: await apiRequestMs(page, 0, API.insights!) });
      await trace(`first rows ${rowsAt.toFixed(0)} ms, panel ${panelAt.toFixed(0)} ms`, 0);

      // Search typed into the loaded page (the panel is shown: the page is quiet).
      const domain = SEARCH_DOMAINS[r % SEARCH_DOMAINS.length]!;
      const { portal: matching, leaked: searchLeaked } = await counted('email LIKE ?', [`%@${domain}`]);
      await takeLongestTask(page);
      await page.getByLabel('Search', { exact: true }).fill(`@${domain}`);
      const typedAt = await lastEventAt(page, 'input');
      const searchAt = await shownAt(
        page,
        `search "@${domain}"`,
        { firstRow: { emailSuffix: `@${domain}` }, texts: [matchLine(matching)], failTexts: leakTexts(searchLeaked, matchLine) },
        TIMEOUT.interaction,
      );
      result.search.push({
        ms: searchAt - typedAt,
        longestTask: await takeLongestTask(page),
        apiMs: await apiRequestMs(page, typedAt, API.firstPage!),
        query: `@${domain}`,
        matching,
      });
      await trace(`search typed at ${typedAt.toFixed(0)} ms, shown ${searchAt.toFixed(0)} ms`, typedAt);

      // A filter in the URL (a shared link, a reload).
      await settle('search');
      const country = FILTER_COUNTRIES[r % FILTER_COUNTRIES.length]!;
      const { portal: inCountry, leaked: countryLeaked } = await counted('country = ?', [country]);
      await page.goto(`${base}/admin?country=${encodeURIComponent(country)}`, { waitUntil: 'commit' });
      const filteredAt = await shownAt(page, `?country=${country}`, { firstRow: {}, texts: [matchLine(inCountry)], failTexts: leakTexts(countryLeaked, matchLine) }, TIMEOUT.shown);
      result.urlFilter.push({ ms: filteredAt, longestTask: await takeLongestTask(page), apiMs: await apiRequestMs(page, 0, API.firstPage!), country, matching: inCountry });
      await trace(`?country= shown ${filteredAt.toFixed(0)} ms`, 0);
      log(kind, `run ${r + 1}/${runs}: first rows ${secs(rowsAt)}, panel ${secs(panelAt)}, search ${secs(searchAt - typedAt)}, URL filter ${secs(filteredAt)}`);
    }

    // Select all of every entry, then Export All from that view.
    await settle('URL filter');
    await page.goto(`${base}/admin`, { waitUntil: 'commit' });
    await shownAt(page, 'the unfiltered list', { firstRow: {}, texts: [peopleText(entries)], failTexts: leakTexts(allLeaked, peopleText) }, TIMEOUT.shown);
    await settle('the unfiltered list');
    await takeLongestTask(page);
    await page.getByRole('checkbox', { name: 'Select all', exact: true }).first().click();
    const selectClickAt = await lastEventAt(page, 'click');
    const selectedAt = await shownAt(page, 'select all', { texts: [selectedText(entries)], failTexts: leakTexts(allLeaked, selectedText) }, TIMEOUT.interaction);
    result.selectAll = { ms: selectedAt - selectClickAt, longestTask: await takeLongestTask(page) };
    log(kind, `select all ${fmt(entries)}: ${secs(result.selectAll.ms)}`);

    // Export All as many times as the database's streaming is measured, the median against the
    // median: the first is the server's and the browser's first export (code not yet optimized by
    // V8, Chromium's first large download), the others show the steady state. Each starts once the
    // page has shown the previous one's toast and the toast has gone: both ends are done with it.
    const exported = exportedText(entries);
    for (let run = 0; run < STREAMING_RUNS; run++) {
      const exportPageStart = await page.evaluate(() => performance.now());
      // What the export costs each side of it: the server (all its threads, zlib's included), the
      // browser's processes (every process this bench started but the server), PostgreSQL's.
      const database = kind === 'postgres' ? postgresCpuSampler(new URL(target.url).pathname.slice(1)) : null;
      database?.open();
      const cpuBefore = { server: cpuSeconds(server.pid) ?? 0, browser: descendantsCpuSeconds(process.pid, [server.pid]) };
      const exportStarted = performance.now();
      const [download] = await Promise.all([
        page.waitForEvent('download', { timeout: TIMEOUT.export }),
        page.getByRole('button', { name: 'Export All', exact: true }).click(),
      ]);
      const file = await download.path();
      const exportMs = performance.now() - exportStarted;
      const cpu = {
        server: (cpuSeconds(server.pid) ?? 0) - cpuBefore.server,
        browser: descendantsCpuSeconds(process.pid, [server.pid]) - cpuBefore.browser,
        database: database?.close().backends ?? null,
      };
      database?.stop();
      const failure = await download.failure();
      if (failure) throw new Error(`Export All: the download failed (${failure})`);
      const rows = await csvRecords(file);
      result.exportAll.push({
        ms: exportMs,
        longestTask: await takeLongestTask(page),
        apiMs: await apiRequestMs(page, exportPageStart, API.export!),
        rows,
        file: download.suggestedFilename(),
        cpu,
      });
      const cpuText = `CPU: server ${cpu.server.toFixed(2)} s, browser ${cpu.browser.toFixed(2)} s${cpu.database === null ? '' : `, PostgreSQL ${cpu.database.toFixed(2)} s`}`;
      log(kind, `export all ${run + 1}/${STREAMING_RUNS}: ${secs(exportMs)}, ${fmt(rows)} rows in ${download.suggestedFilename()}; ${cpuText}`);
      await trace('export', exportPageStart);
      if (rows !== entries) {
        const leak = allLeaked !== null && rows > entries ? `: the second list's entries LEAKED into the portal's export (it holds ${second})` : '';
        throw new Error(`Export All wrote ${rows} rows, not ${entries}${leak}`);
      }
      await fs.promises.rm(file, { force: true });
      await shownAt(page, `export ${run + 1}: the toast`, { texts: [exported], failTexts: leakTexts(allLeaked, exportedText) }, TIMEOUT.export);
      await shownAt(page, `export ${run + 1}: the toast gone`, { absentTexts: exported }, TIMEOUT.interaction);
    }
    await measureStreaming(kind, target, result);

    // Delete exactly deleteCount entries: the one country that has them, select all, delete.
    await page.goto(`${base}/admin?country=${encodeURIComponent(DELETE_COUNTRY)}`, { waitUntil: 'commit' });
    await shownAt(page, `?country=${DELETE_COUNTRY}`, { firstRow: {}, texts: [matchLine(deleteCount)], failTexts: leakTexts(deleteLeaked, matchLine) }, TIMEOUT.shown);
    await settle(`?country=${DELETE_COUNTRY}`);
    await takeLongestTask(page);
    await page.getByRole('checkbox', { name: 'Select all', exact: true }).first().click();
    const selectDeleteAt = await lastEventAt(page, 'click');
    const selectedDeleteAt = await shownAt(page, `select all ${deleteCount}`, { texts: [selectedText(deleteCount)], failTexts: leakTexts(deleteLeaked, selectedText) }, TIMEOUT.interaction);
    result.deleteSelect = { ms: selectedDeleteAt - selectDeleteAt, longestTask: await takeLongestTask(page) };
    await page.getByRole('button', { name: 'Delete Selected', exact: true }).click();
    const dialog = page.getByRole('alertdialog').or(page.getByRole('dialog'));
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    const deleteClickAt = await lastEventAt(page, 'click');
    const deletedAt = await shownAt(
      page,
      `delete ${deleteCount}`,
      { texts: [deletedText(deleteCount)], absentTexts: selectedText(deleteCount), failTexts: leakTexts(deleteLeaked, deletedText) },
      TIMEOUT.delete,
    );
    const remaining = await target.count(`SELECT count(*) AS n FROM waitlist WHERE ${PORTAL}`);
    const deleteApiMs =
      (await apiRequestMs(page, deleteClickAt, { path: ADMIN_DELETE_MATCHING_PATH })) ?? (await apiRequestMs(page, deleteClickAt, { path: ADMIN_DELETE_PATH }));
    result.deleted = { ms: deletedAt - deleteClickAt, longestTask: await takeLongestTask(page), apiMs: deleteApiMs, remaining };
    log(kind, `delete ${fmt(deleteCount)}: ${secs(result.deleted.ms)}`);
    await trace(`delete clicked at ${deleteClickAt.toFixed(0)} ms, shown ${deletedAt.toFixed(0)} ms`, selectDeleteAt);
    if (remaining !== entries - deleteCount) throw new Error(`after the delete the database holds ${remaining} entries, not ${entries - deleteCount}`);
    const left = await target.count(`SELECT count(*) AS n FROM waitlist WHERE ${PORTAL} AND country = ?`, [DELETE_COUNTRY]);
    if (left !== 0) throw new Error(`after the delete ${left} entries in ${DELETE_COUNTRY} are left`);
    if (secondListId !== null) {
      const [inList, inListToDelete] = await secondListCounts(target, secondListId);
      if (inList !== second || inListToDelete !== secondDelete) {
        throw new Error(`the delete LEAKED into the second list: it holds ${inList} entries (${inListToDelete} in ${DELETE_COUNTRY}), not ${second} (${secondDelete})`);
      }
    }
  } catch (err) {
    await failureShot(err);
  }
}

async function benchDatabase(kind: 'sqlite' | 'postgres', browser: Browser | null, plan: SeedPlan): Promise<DatabaseResult> {
  const result: DatabaseResult = { kind, firstRows: [], panel: [], search: [], urlFilter: [], exportAll: [] };
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), `waitlist-bench-admin-${kind}-`));
  const removeWorkDir = () => fs.rmSync(workDir, { recursive: true, force: true });
  cleanups.add(removeWorkDir);
  let server: ServerProcess | undefined;
  // A key of its own, so the bench never writes secrets/ under the project.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    AUTH_SECRET_KEY: randomBytes(32).toString('base64'),
  };
  try {
    const secondList = second > 0 ? { slug: SECOND_LIST_SLUG, entries: second, deleteCount: secondDelete } : null;
    const { target, secondListId } = await seedDatabase(kind, { workDir, plan, env, postgresUrl, adminCli, secondList, onCleanup: (fn) => cleanups.add(fn) }, result);
    if (!browser) {
      await measureStreaming(kind, target, result);
      return result;
    }
    runAdminCli(adminCli, target.url, env, ['create', admin.email], `${admin.password}\n`);
    const started = await startServer({
      name: `product (${kind})`,
      nodeArgs: [mainJs],
      env: { ...env, DATABASE_URL: target.url },
      port: await freePort(),
      cwd: buildRoot,
      stdoutFile: path.join(workDir, 'server.log'),
    });
    server = started;
    const stop = () => stopServer(started, 'SIGTERM').then(() => undefined);
    cleanups.add(stop);
    const memory = memorySampler(started.pid);
    try {
      await measureInBrowser(kind, browser, started, target, secondListId, result);
    } finally {
      result.peakRssBytes = memory.peak;
      memory.stop();
    }
  } catch (err) {
    result.error = (err as Error).message + (server ? `\nserver stderr (last lines):\n${server.stderr().split('\n').slice(-15).join('\n')}` : '');
    log(kind, `FAILED: ${result.error}`);
  } finally {
    await runCleanups();
  }
  return result;
}

// ---- main ------------------------------------------------------------------------------------------

const plan: SeedPlan = { entries, deleteCount, now: Date.now() };
console.log(`admin benchmark: ${fmt(entries)} entries (delete step: ${fmt(deleteCount)})${second > 0 ? ` on the portal's list, beside a second list (${SECOND_LIST_SLUG}) of ${fmt(second)} entries (${fmt(secondDelete)} in ${DELETE_COUNTRY})` : ''}, ${kinds.join(' and ')}, ${seedOnly ? 'seed and database streaming only' : `headless Chromium 1280×900, ${runs} run${runs === 1 ? '' : 's'} of the cheap steps (median)`}`);
console.log(machineDescription());
console.log(`build: ${gitDescription(buildRoot)}${kinds.includes('postgres') ? `; PostgreSQL ${new URL(postgresUrl).host}` : ''}\n`);

let browser: Browser | null = null;
if (!seedOnly) {
  browser = await chromium.launch({
    executablePath: findChromium() ?? undefined,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}
const results: DatabaseResult[] = [];
try {
  for (const kind of kinds) results.push(await benchDatabase(kind, browser, plan));
} finally {
  await browser?.close();
}

console.log('');
printReport(results, { runs, entries, deleteCount, secondList: second, streamingRuns: STREAMING_RUNS });
console.log(
  `\nTimes are measured in the page (navigation start, or the input/click event, to the first frame showing the result);` +
    `\n"API request": the step's main call, from its start to its last byte (the page's resource timing: server + transfer).` +
    `\nexport is timed by the bench from the click to the saved file, against the database streaming the same rows` +
    `\n(${EXPORT_ALL_SQL}; SQLite: better-sqlite3 iterate(), PostgreSQL: psql \\copy to /dev/null).`,
);
const failed = results.filter((r) => r.error);
for (const r of failed) console.log(`\n${r.kind} FAILED: ${r.error}`);
if (flags.json) {
  fs.writeFileSync(flags.json, JSON.stringify({ entries, deleteCount, secondList: second, runs, machine: machineDescription(), build: gitDescription(buildRoot), results }, null, 2));
  console.log(`\nresults written to ${flags.json}`);
}
process.exitCode = failed.length > 0 ? 1 : 0;
