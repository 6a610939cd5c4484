import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildOptions } from '../../src/server/app.js';
import { loadConfig, type AppConfig } from '../../src/server/config.js';
import type { Geolocator } from '../../src/server/geolocation/geolocator.js';

export interface TestApp {
  app: FastifyInstance;
  config: AppConfig;
  dataDir: string;
  close(): Promise<void>;
}

/** A geolocator that knows nothing: tests that care pass their own. */
export const noGeolocation: Geolocator = { lookup: async () => null };

/**
 * Builds the real app on a fresh SQLite database in a temporary directory.
 * `env` is applied on top of defaults, exactly as environment variables would be.
 */
export async function createTestApp(
  env: Record<string, string> = {},
  options: BuildOptions = {},
): Promise<TestApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-test-'));
  const config = loadConfig({
    DATABASE_URL: `file:${path.join(dataDir, 'test.db')}`,
    LOG_LEVEL: 'silent',
    WEB_ROOT: path.join(dataDir, 'web'),
    ...env,
  });
  const app = await buildApp(config, { geolocator: noGeolocation, logger: false, ...options });
  await app.ready();
  return {
    app,
    config,
    dataDir,
    close: async () => {
      await app.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
