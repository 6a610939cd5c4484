#!/usr/bin/env node
// Starts the production build on a fresh database for the end-to-end tests, with a known admin
// (tests/support/e2e-server.ts starts one per Playwright worker, and the extra ones some specs need).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const dataDir = process.env.E2E_DATA_DIR;
if (!dataDir) throw new Error('E2E_DATA_DIR must be set (playwright.config.ts sets it)');
fs.rmSync(dataDir, { recursive: true, force: true });
fs.mkdirSync(dataDir, { recursive: true });

const env = {
  ...process.env,
  DATABASE_URL: `file:${path.join(dataDir, 'e2e.db')}`,
  // The key that seals signing keys and TOTP secrets: fresh beside each fresh database, never the repository's.
  AUTH_SECRET_KEY_FILE: process.env.AUTH_SECRET_KEY_FILE ?? path.join(dataDir, 'auth-secret.key'),
};

const adminCli = path.resolve('dist/server/cli/admin.js');
if (process.env.E2E_ADMIN_EMAIL && fs.existsSync(adminCli)) {
  const created = spawnSync(process.execPath, [adminCli, 'create', process.env.E2E_ADMIN_EMAIL], {
    env,
    input: `${process.env.E2E_ADMIN_PASSWORD}\n`,
    encoding: 'utf8',
  });
  if (created.status !== 0) {
    process.stderr.write(`could not create the e2e admin:\n${created.stdout}${created.stderr}`);
    process.exit(1);
  }
}

// With REPORT_PORT_FD (tests/support/e2e-server.ts starts it on PORT=0), the server writes the port it
// got to that file descriptor, which it shares with this process.
const reportFd = Number(process.env.REPORT_PORT_FD);
const reporting = Number.isInteger(reportFd) && reportFd > 2;
const server = spawn(
  process.execPath,
  [...(reporting ? ['--import', new URL('../tests/support/report-port.mjs', import.meta.url).href] : []), 'dist/server/main.js'],
  { env, stdio: reporting ? ['inherit', 'inherit', 'inherit', ...Array(reportFd - 3).fill('ignore'), reportFd] : 'inherit' },
);
if (reporting) fs.closeSync(reportFd);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
server.on('exit', (code) => process.exit(code ?? 0));
