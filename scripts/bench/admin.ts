/**
 * Admin page benchmark with a large waitlist: seeds N entries (default 100,000) into a fresh
 * SQLite database, starts the production build, signs in with Chromium and measures
 *   - opening /admin → first rows shown, and → every entry loaded;
 *   - Select all (and the longest main-thread task meanwhile);
 *   - Export All → the downloaded file complete (and its row count);
 *   - Delete of all selected entries through the dialog → the empty state.
 *
 *   npm run build && npm run bench:admin        # BENCH_ENTRIES=100000
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Page } from '@playwright/test';
import { findChromium } from '../ensure-chromium.mjs';

const entries = Number(process.env.BENCH_ENTRIES ?? 100_000);
const port = Number(process.env.BENCH_PORT ?? 4480);
const admin = { email: 'bench-admin@example.com', password: 'bench password that is long enough' };

if (!fs.existsSync('dist/server/main.js')) {
  console.error('Run `npm run build` first.');
  process.exit(1);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-bench-admin-'));
const env = { ...process.env, DATABASE_URL: `file:${path.join(dir, 'bench.db')}`, LOG_LEVEL: 'warn' };
const tsx = path.resolve('node_modules/.bin/tsx');

function mustRun(cmd: string, args: string[], input?: string): void {
  const result = spawnSync(cmd, args, { env, input, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
}

function waitForHealth(): Promise<void> {
  const deadline = Date.now() + 30_000;
  return new Promise((resolve, reject) => {
    const poll = () =>
      http
        .get({ host: '127.0.0.1', port, path: '/healthz' }, (res) => {
          res.resume();
          if (res.statusCode === 200) resolve();
          else setTimeout(poll, 100);
        })
        .on('error', () => (Date.now() > deadline ? reject(new Error('server did not start')) : setTimeout(poll, 100)));
    poll();
  });
}

/** Longest main-thread task (ms) observed by the page since the last call. */
async function takeLongestTask(page: Page): Promise<number> {
  return page.evaluate(() => {
    const w = window as unknown as { __longest?: number };
    const value = w.__longest ?? 0;
    w.__longest = 0;
    return Math.round(value);
  });
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

let server: ChildProcess | undefined;
const browser = await chromium.launch({
  executablePath: findChromium() ?? undefined,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const seedStarted = performance.now();
  mustRun(tsx, ['scripts/seed-waitlist.ts', '--count', String(entries)]);
  const seedMs = performance.now() - seedStarted;
  mustRun(process.execPath, ['dist/server/cli/admin.js', 'create', admin.email], `${admin.password}\n`);

  server = spawn(process.execPath, ['dist/server/main.js'], { env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: 'ignore' });
  await waitForHealth();

  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  await context.addInitScript(() => {
    const w = window as unknown as { __longest?: number };
    w.__longest = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) w.__longest = Math.max(w.__longest ?? 0, entry.duration);
    }).observe({ type: 'longtask', buffered: true });
  });
  const page = await context.newPage();
  const base = `http://127.0.0.1:${port}`;

  await page.goto(`${base}/auth`);
  await page.getByLabel(/email/i).fill(admin.email);
  await page.getByLabel(/password/i).fill(admin.password);
  await page.getByRole('button', { name: 'Sign In' }).click();
  await page.waitForURL(/\/admin$/);
  await page.getByRole('checkbox', { name: /^Select (?!all)/ }).first().waitFor();

  // Measured run: a fresh navigation to /admin with the session already stored.
  const openStarted = performance.now();
  await page.goto(`${base}/admin`);
  await page.getByRole('checkbox', { name: /^Select (?!all)/ }).first().waitFor();
  const firstRowsMs = performance.now() - openStarted;
  const countLine = page.getByText(new RegExp(`^${entries} (people|person) signed up`));
  await countLine.waitFor();
  await page.getByText(/Loading more/).waitFor({ state: 'hidden', timeout: 120_000 });
  const allLoadedMs = performance.now() - openStarted;
  const longestWhileLoading = await takeLongestTask(page);

  const selectStarted = performance.now();
  await page.getByRole('checkbox', { name: 'Select all' }).click();
  await page.getByText(`(${entries} selected)`).waitFor();
  const selectAllMs = performance.now() - selectStarted;
  const longestSelect = await takeLongestTask(page);

  const exportStarted = performance.now();
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 120_000 }), page.getByRole('button', { name: 'Export All' }).click()]);
  const file = await download.path();
  const exportMs = performance.now() - exportStarted;
  const csvLines = fs.readFileSync(file, 'utf8').split('\r\n').filter(Boolean).length - 1;
  const longestExport = await takeLongestTask(page);

  const deleteStarted = performance.now();
  await page.getByRole('button', { name: 'Delete Selected' }).click();
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  await page.getByText('No waitlist entries yet.').waitFor({ timeout: 120_000 });
  const deleteMs = performance.now() - deleteStarted;
  const longestDelete = await takeLongestTask(page);

  console.log(`admin benchmark: ${entries} entries, SQLite, ${os.cpus().length} cores, headless Chromium`);
  console.table({
    'seed (CLI)': { time: seconds(seedMs), note: '' },
    'open /admin → first rows': { time: seconds(firstRowsMs), note: '' },
    'open /admin → all loaded': { time: seconds(allLoadedMs), note: `longest task ${longestWhileLoading} ms` },
    'select all': { time: seconds(selectAllMs), note: `longest task ${longestSelect} ms` },
    'export all → file saved': { time: seconds(exportMs), note: `${csvLines} rows, ${download.suggestedFilename()}, longest task ${longestExport} ms` },
    'delete all selected': { time: seconds(deleteMs), note: `longest task ${longestDelete} ms` },
  });
} finally {
  await browser.close();
  server?.kill('SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
}
