import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildOptions } from '../../../src/server/app.js';
import { loadConfig } from '../../../src/server/config.js';
import { noGeolocation, type TestApp } from '../../support/test-app.js';

/** A miniature web build of the archived pages (the records read them at start), with `landing` as the landing page's body. */
export function writePages(webRoot: string, landing = 'Private Markets On Chain'): void {
  fs.mkdirSync(webRoot, { recursive: true });
  const page = (title: string) => `<!doctype html><html lang="en"><head><title>${title}</title></head><body><h1>${title}</h1></body></html>`;
  const files: Record<string, string> = {
    'index.html': page(landing),
    'thanks.html': page('Thank You!'),
    'thanks-confirm.html': page('Thank You! Check your inbox'),
    '404.html': page('Oops! Page not found'),
    'confirm.html': page('Confirm your email'),
    'unsubscribe.html': page('Email preferences'),
    'erase.html': page('Erase your data'),
    'signup-error.html': page('{{title}} {{message}}'),
    'link-success.html': page('{{title}} {{message}}'),
    'link-error.html': page('{{title}} {{message}}'),
  };
  for (const [file, html] of Object.entries(files)) fs.writeFileSync(path.join(webRoot, file), html);
}

/**
 * Another instance of the app on the test app's database (a restart, or a second server): the same
 * configuration with `env` on top. The caller closes it.
 */
export async function sameDatabaseApp(t: TestApp, env: Record<string, string> = {}, options: BuildOptions = {}): Promise<FastifyInstance> {
  const config = loadConfig({
    DATABASE_URL: t.databaseUrl,
    LOG_LEVEL: 'silent',
    WEB_ROOT: t.config.webRoot,
    AUTH_SECRET_KEY_FILE: path.join(t.dataDir, 'auth-secret.key'),
    SIGNUP_CHECK_MX: 'off', // as createTestApp: no test depends on the network's DNS
    ...env,
  });
  const app = await buildApp(config, { geolocator: noGeolocation, logger: false, sqliteCheckpoints: 'on-commit', ...options });
  await app.ready();
  return app;
}
