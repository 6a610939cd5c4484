import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildOptions } from '../../src/server/app.js';
import { loadConfig, type AppConfig } from '../../src/server/config.js';
import type { Geolocator } from '../../src/server/geolocation/geolocator.js';
import { copySqliteTemplate, createScratchPostgres, type TestDialect } from './databases.js';

export interface TestApp {
  app: FastifyInstance;
  config: AppConfig;
  dataDir: string;
  /** The DATABASE_URL this app runs on (a temp SQLite file or a scratch PostgreSQL database). */
  databaseUrl: string;
  close(): Promise<void>;
}

export interface TestAppOptions extends BuildOptions {
  /** Which database to run on; SQLite unless a suite iterates TEST_DIALECTS. */
  dialect?: TestDialect;
}

/** A geolocator that knows nothing: tests that care pass their own. */
export const noGeolocation: Geolocator = { lookup: async () => null };

/**
 * Builds the real app on a fresh, empty-but-migrated database: a copy of the migrated SQLite template
 * in a temporary directory, or a scratch PostgreSQL database with the migrated schema and no rows
 * (databases.ts). The app's own migration step runs as ever, and finds nothing to do.
 * `env` is applied on top of defaults, exactly as environment variables would be.
 */
export async function createTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const { dialect = 'sqlite', ...buildOptions } = options;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-test-'));
  const scratch = dialect === 'postgres' ? await createScratchPostgres() : null;
  if (!scratch) copySqliteTemplate(path.join(dataDir, 'test.db'));
  const databaseUrl = scratch?.url ?? `file:${path.join(dataDir, 'test.db')}`;
  const cleanUp = async () => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    await scratch?.drop();
  };

  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    WEB_ROOT: path.join(dataDir, 'web'),
    AUTH_SECRET_KEY_FILE: path.join(dataDir, 'auth-secret.key'),
    // No test depends on the network's DNS (example.com publishes a null MX): the MX check's own
    // tests turn it on against a DNS server they start (support/dns.ts).
    SIGNUP_CHECK_MX: 'off',
    ...env,
  });
  let app: FastifyInstance;
  try {
    // SQLite's own checkpoints: a checkpoint thread per app would cost each test app a worker started
    // through tsx (db/sqlite-checkpointer.ts has its own tests; server processes run it).
    app = await buildApp(config, { geolocator: noGeolocation, logger: false, sqliteCheckpoints: 'on-commit', ...buildOptions });
    await app.ready();
  } catch (err) {
    await cleanUp();
    throw err;
  }
  return {
    app,
    config,
    dataDir,
    databaseUrl,
    close: async () => {
      await app.close();
      await cleanUp();
    },
  };
}
