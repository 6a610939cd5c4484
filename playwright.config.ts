import { defineConfig, devices } from '@playwright/test';
import { findChromium } from './scripts/ensure-chromium.mjs';
import { useTmpfsForTestFiles } from './tests/support/tmpfs.js';

useTmpfsForTestFiles();

export const E2E_ADMIN = { email: 'e2e-admin@example.com', password: 'correct horse battery staple 42' };

/** An e2e server of a worker: where it answers, and its data directory (database, key file). */
export interface E2eWorkerServer {
  baseUrl: string;
  dataDir: string;
}
/** The environment variable through which the global setup tells the workers their servers. */
export const E2E_SERVERS_ENV = 'E2E_SERVERS';

/**
 * This worker's e2e server (tests/support/e2e-global-setup.ts starts one per worker): the worker with
 * parallel index i uses the i-th. Read when a worker loads this file; the runner, which loads it
 * before the global setup has run, has none.
 */
function workerServer(): E2eWorkerServer | undefined {
  const servers = JSON.parse(process.env[E2E_SERVERS_ENV] ?? '[]') as E2eWorkerServer[];
  return servers[Number(process.env.TEST_PARALLEL_INDEX ?? 0)];
}
const server = workerServer();
export const E2E_BASE_URL = server?.baseUrl ?? 'http://127.0.0.1';
/** The e2e server's data directory (database, key file): tests create extra admins there with the admin CLI. */
export const E2E_DATA_DIR = server?.dataDir ?? '';

export default defineConfig({
  testDir: 'tests/e2e',
  // Files run in parallel, each on its worker's server; the tests of a file one after the other.
  fullyParallel: false,
  workers: Number(process.env.E2E_WORKERS ?? 2),
  forbidOnly: !!process.env.CI,
  retries: 0,
  timeout: 30_000,
  reporter: process.env.CI ? [['list']] : [['list'], ['html', { open: 'never' }]],
  globalSetup: './tests/support/e2e-global-setup.ts',
  use: {
    baseURL: E2E_BASE_URL,
    // Off unless asked for (E2E_TRACE=retain-on-failure, on, …): recording a trace of every test cost
    // the suite a third of its time (244 s against 166 s on this 2-core machine) for the few that fail.
    trace: (process.env.E2E_TRACE as 'off' | 'on' | 'retain-on-failure' | 'on-first-retry' | undefined) ?? 'off',
    screenshot: 'only-on-failure',
    launchOptions: {
      // The headless shell cannot show a window: `--headed` and PWDEBUG get the full browser.
      executablePath: findChromium({ headlessShell: !process.argv.includes('--headed') && !process.env.PWDEBUG }) ?? undefined,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    },
  },
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'] } }],
});
