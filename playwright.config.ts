import os from 'node:os';
import path from 'node:path';
import { defineConfig, devices } from '@playwright/test';
import { findChromium } from './scripts/ensure-chromium.mjs';

const port = Number(process.env.E2E_PORT ?? 4173);
export const E2E_BASE_URL = `http://127.0.0.1:${port}`;
export const E2E_ADMIN = { email: 'e2e-admin@example.com', password: 'correct horse battery staple 42' };
/** The e2e server's data directory (database, key file): tests create extra admins there with the admin CLI. */
export const E2E_DATA_DIR = path.join(os.tmpdir(), `waitlist-e2e-${port}`);

export default defineConfig({
  testDir: 'tests/e2e',
  fullyParallel: false,
  workers: 1,
  forbidOnly: !!process.env.CI,
  retries: 0,
  timeout: 30_000,
  reporter: process.env.CI ? [['list']] : [['list'], ['html', { open: 'never' }]],
  use: {
    baseURL: E2E_BASE_URL,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: findChromium() ?? undefined,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    },
  },
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'] } }],
  webServer: {
    command: 'node scripts/e2e-server.mjs',
    url: `${E2E_BASE_URL}/healthz`,
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: 'ignore',
    stderr: 'pipe',
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      E2E_DATA_DIR,
      E2E_ADMIN_EMAIL: E2E_ADMIN.email,
      E2E_ADMIN_PASSWORD: E2E_ADMIN.password,
      // The suite signs up and signs in many times from one address; the limits themselves are
      // covered by integration tests.
      SIGNUP_RATE_LIMIT_MAX: '10000',
      AUTH_IP_MAX_ATTEMPTS: '10000',
    },
  },
});
