import type { FullConfig } from '@playwright/test';
import { E2E_ADMIN, E2E_SERVERS_ENV, type E2eWorkerServer } from '../../playwright.config.js';
import { startE2eServer } from './e2e-server.js';

/**
 * Playwright's global setup: one e2e server per worker, each the production build on its own port
 * and its own fresh database (data directory), so the workers never see each other's data. The
 * workers find theirs by their parallel index (playwright.config.ts); a worker started again after
 * a failure takes the same index, and the same server.
 */
export default async function globalSetup(config: FullConfig): Promise<() => Promise<void>> {
  const servers = await Promise.all(
    Array.from({ length: config.workers }, () =>
      startE2eServer({
        E2E_ADMIN_EMAIL: E2E_ADMIN.email,
        E2E_ADMIN_PASSWORD: E2E_ADMIN.password,
        // The suite signs up and signs in many times from one address; the limits themselves are
        // covered by integration tests.
        SIGNUP_RATE_LIMIT_MAX: '10000',
        AUTH_IP_MAX_ATTEMPTS: '10000',
      }),
    ),
  );
  const shared: E2eWorkerServer[] = servers.map(({ baseUrl, dataDir }) => ({ baseUrl, dataDir }));
  process.env[E2E_SERVERS_ENV] = JSON.stringify(shared);
  return async () => {
    await Promise.all(servers.map((server) => server.stop()));
  };
}
