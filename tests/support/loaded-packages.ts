import { randomInt } from 'node:crypto';
import { createRequire } from 'node:module';
import { buildApp } from '../../src/server/app.js';
import { createAdmin } from '../../src/server/auth/admins.js';
import { loadConfigOrReport } from '../../src/server/config.js';
import { sqliteCheckpointerOf } from '../../src/server/db/database.js';

/**
 * Run as its own process (`node --import tsx`) by lean-start.test.ts: starts the app from the
 * environment, takes a signup, creates an admin and signs in, then prints (as the last line of
 * standard output) the JSON list of the packages this thread loaded through require, by name, and
 * whether its SQLite checkpoints ran in their own thread.
 */
const config = loadConfigOrReport((text) => process.stderr.write(text));
if (!config) throw new Error('configuration refused');
const app = await buildApp(config);
await app.ready();
// From an address of its own: with REDIS_URL the rate limits' counters are shared with every other
// test (and run) on that Redis, which may have signed up from 127.0.0.1 within the minute.
const remoteAddress = `198.18.${randomInt(256)}.${1 + randomInt(254)}`;
const signup = await app.inject({ method: 'POST', url: '/api/waitlist', remoteAddress, payload: { email: 'lean@example.com' } });
if (signup.statusCode !== 201) throw new Error(`signup answered ${signup.statusCode}: ${signup.body}`);
const password = 'correct-Horse-battery-42';
await createAdmin(app.database.db, 'lean-admin@example.com', password);
const token = await app.inject({ method: 'POST', url: '/auth/v1/token?grant_type=password', remoteAddress, payload: { email: 'lean-admin@example.com', password } });
if (token.statusCode !== 200) throw new Error(`sign-in answered ${token.statusCode}: ${token.body}`);
const checkpointThread = sqliteCheckpointerOf(app.database.db) !== undefined;
await app.close();

const packages = new Set<string>();
for (const file of Object.keys(createRequire(import.meta.url).cache)) {
  const at = file.lastIndexOf('node_modules/');
  if (at === -1) continue;
  const parts = file.slice(at + 'node_modules/'.length).split('/');
  packages.add(parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!);
}
console.log(JSON.stringify({ packages: [...packages].sort(), checkpointThread }));
