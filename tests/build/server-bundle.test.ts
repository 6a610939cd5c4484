/**
 * The production server as `npm run build` leaves it (scripts/bundle-server.ts, decision 014):
 * dist/server/serve.js and its chunks hold every package the server loads at start-up except the
 * external ones; the files derived from each module's own URL exist (the project root, the
 * geolocation index's module, the worker threads' files); and the bundled server works where the
 * bundle changes something: its migrations on an empty database, the web root, the modules left to
 * tsc's output and loaded on first use (the e-mail templates), and the clients loaded from
 * node_modules (pg, ioredis, nodemailer), on SQLite and on PostgreSQL with Redis.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { zstdDecompressSync } from 'node:zlib';
import { init, parse } from 'es-module-lexer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_ENTRY, CHUNK_PATTERN, EXTERNAL_PACKAGES, SERVER_OUT } from '../../scripts/bundle-server.js';
import { ADMIN_EXPORT_PATH, ADMIN_WAITLIST_PATH } from '../../src/shared/admin/waitlist-api.js';
import { CONFIRM_API_PATH } from '../../src/shared/waitlist/consent-contract.js';
import { SIGNUP_PATH } from '../../src/shared/waitlist/signup-contract.js';
import { createScratchPostgres, TEST_REDIS_URL, type ScratchPostgres } from '../support/databases.js';
import { runProcess, startInstance, stopInstance, waitHealthy, type Instance } from '../support/server-process.js';
import { signIn } from '../support/sign-in.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp.js';

const bundleFiles = fs.existsSync(SERVER_OUT) ? fs.readdirSync(SERVER_OUT).filter((name) => name === BUNDLE_ENTRY || (CHUNK_PATTERN.test(name) && name.endsWith('.js'))) : [];

/** A POST through node:http, whose body comes back as sent (fetch would try to decode it). */
function postRaw(url: string, headers: Record<string, string>, body: string): Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', headers }, (response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(parts) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** What a module imports, statically or with `import()` of a literal. */
function importsOf(code: string): string[] {
  const [imports] = parse(code);
  return imports.map((entry) => entry.n).filter((name): name is string => name !== undefined);
}

/** Modules of ours the bundle imports from tsc's output: the entry's heap settings, and what loads on first use. */
const relativeOutside = ['./runtime/heap.js', './consent/emails/render.js', './auth/guess-estimate.js'];

describe('the bundled production server (npm run build)', () => {
  beforeAll(() => init);

  it('holds the packages it loads at start-up; only the external ones come from node_modules', () => {
    expect(bundleFiles, 'run `npm run build` first').toContain(BUNDLE_ENTRY);
    expect(bundleFiles.length).toBeGreaterThan(5);
    const packages = new Set<string>();
    for (const file of bundleFiles) {
      const code = fs.readFileSync(path.join(SERVER_OUT, file), 'utf8');
      for (const specifier of importsOf(code)) {
        if (specifier.startsWith('.')) {
          expect(fs.existsSync(path.join(SERVER_OUT, specifier)), `${file} imports ${specifier}`).toBe(true);
          // Our modules are in the chunks; from tsc's output only what the entry shares and what loads on first use.
          if (!CHUNK_PATTERN.test(specifier.slice(2))) expect(relativeOutside, `${file} imports ${specifier}`).toContain(specifier);
        } else if (!specifier.startsWith('node:') && !builtinModules.includes(specifier)) {
          packages.add(specifier);
        }
      }
    }
    const external = (specifier: string) => EXTERNAL_PACKAGES.some((name) => specifier === name || specifier.startsWith(`${name}/`));
    expect([...packages].filter((specifier) => !external(specifier))).toEqual([]);
    // The native addons are loaded at start-up; the optional clients through runtime/optional-module.ts.
    expect(packages).toContain('better-sqlite3');
    expect(packages).toContain('@node-rs/argon2');
    // No file that V8 must parse in one go is large (the parser's memory is what the chunks avoid).
    for (const file of bundleFiles) expect(fs.statSync(path.join(SERVER_OUT, file)).size, file).toBeLessThan(768 * 1024);
  });

  it("keeps each module's own URL: the files derived from it exist, the worker threads' among them", () => {
    const code = bundleFiles.map((file) => fs.readFileSync(path.join(SERVER_OUT, file), 'utf8')).join('\n');
    const urls = [...code.matchAll(/new URL\((["'`])([^"'`]+)\1,\s*import\.meta\.url\)/g)].map((m) => m[2]!);
    // config.ts (the project root), geolocation/mmdb.ts (the lookup index, its worker),
    // db/sqlite-checkpointer.ts and auth/guess-estimator.ts (their workers), runtime/optional-module.ts,
    // email-domains/domain-list.ts (resolves the throwaway list's JSON in node_modules).
    expect(new Set(urls)).toEqual(
      new Set(['./config.js', './geolocation/mmdb.js', './db/sqlite-checkpointer.js', './auth/guess-estimator.js', './runtime/optional-module.js', './email-domains/domain-list.js']),
    );
    for (const url of urls) expect(fs.existsSync(path.join(SERVER_OUT, url)), url).toBe(true);
    const workers = [...code.matchAll(/startModuleWorker\(new URL\((["'`])([^"'`]+)\1,\s*import\.meta\.url\)\.href,\s*(["'`])([\w-]+)\3/g)];
    expect(workers.map((m) => m[4]).sort()).toEqual(['guess-estimate-worker', 'index-worker', 'sqlite-checkpoint-worker']);
    for (const m of workers) expect(fs.existsSync(path.join(SERVER_OUT, path.dirname(m[2]!), `${m[4]}.js`)), m[4]).toBe(true);
  });

  const PASSWORD = 'correct-Horse-battery-42';
  const cleanups: (() => Promise<unknown> | void)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  const databases = [
    { name: 'SQLite', postgres: false },
    ...(process.env.TEST_DATABASE_URL && TEST_REDIS_URL ? [{ name: 'PostgreSQL with Redis', postgres: true }] : []),
  ];

  it.each(databases)('serves on $name: a geolocated signup, its confirmation e-mail, an admin sign-in, the list and an export', { timeout: 120_000 }, async ({ postgres }) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bundle-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    let scratch: ScratchPostgres | null = null;
    if (postgres) {
      scratch = await createScratchPostgres();
      cleanups.push(() => scratch?.drop());
    }
    const smtp: TestSmtpServer = await startSmtpServer();
    cleanups.push(() => smtp.close());
    const email = `bundle-${randomBytes(4).toString('hex')}@example.com`;
    const admin = `admin-${randomBytes(4).toString('hex')}@example.com`;
    // The links' origin (the server's own is known only once it listens; nothing here follows a link to it).
    const publicUrl = 'https://waitlist.example.com';
    const env: Record<string, string> = {
      DATABASE_URL: scratch ? scratch.url : `file:${path.join(dir, 'bundle.db')}`,
      ...(postgres ? { REDIS_URL: TEST_REDIS_URL! } : {}),
      AUTH_SECRET_KEY: randomBytes(32).toString('base64'),
      TRUST_PROXY: '1',
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Waitlist <waitlist@example.com>',
      PUBLIC_URL: publicUrl,
      SIGNUP_CONFIRMATION: 'required',
    };

    // On an empty database: the bundled server runs the migrations itself.
    const server: Instance = startInstance('bundled', env, { build: true });
    cleanups.push(() => stopInstance(server));
    await waitHealthy(server);

    const created = await runProcess(process.execPath, ['dist/server/cli/admin.js', 'create', admin], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdin: `${PASSWORD}\n`,
    });
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);

    // The landing page from the web root that config.ts finds from its own URL.
    const landing = await fetch(`${server.base}/`);
    expect(landing.status).toBe(200);
    expect(await landing.text()).toContain('</html>');

    const signup = await fetch(`${server.base}${SIGNUP_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '8.8.8.8' },
      body: JSON.stringify({ email }),
    });
    expect(signup.status).toBe(201);

    // The confirmation e-mail: the outbox renders it with the templates loaded on first use.
    const deadline = Date.now() + 30_000;
    while (smtp.messages.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(smtp.messages.map((mail) => mail.to)).toEqual([[email]]);
    const body = smtp.messages[0]!.raw.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    const token = new RegExp(`${publicUrl}/confirm\\?token=([A-Za-z0-9_-]+\\.[0-9a-f]+)`).exec(body)?.[1];
    expect(token).toBeDefined();
    const confirmed = await fetch(`${server.base}${CONFIRM_API_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    expect(await confirmed.json()).toEqual({ outcome: 'confirmed' });

    const session = await signIn(server.base, { email: admin, password: PASSWORD });
    const auth = { authorization: `Bearer ${session.access_token}` };
    const list = await fetch(`${server.base}${ADMIN_WAITLIST_PATH}`, { headers: auth });
    expect(list.status).toBe(200);
    const { entries } = (await list.json()) as { entries: { email: string; country: string | null; status: string }[] };
    // Geolocated from the bundled DB-IP data, through the index found from the module's own URL.
    expect(entries).toEqual([expect.objectContaining({ email, country: 'United States', status: 'confirmed' })]);

    const exported = await fetch(`${server.base}${ADMIN_EXPORT_PATH}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ filter: {} }),
    });
    expect(exported.status).toBe(200);
    // Read as bytes: text() would drop the byte-order mark.
    const csv = Buffer.from(await exported.arrayBuffer()).toString('utf8');
    expect(csv.split('\r\n')[0]).toBe('\uFEFFEmail,Date Joined,IP Address,Location');
    expect(csv).toContain(`${email},`);
    // The same file in zstd (Node's zlib).
    const zstd = await postRaw(`${server.base}${ADMIN_EXPORT_PATH}`, { ...auth, 'content-type': 'application/json', 'accept-encoding': 'gzip, br, zstd' }, JSON.stringify({ filter: {} }));
    expect(zstd.headers['content-encoding']).toBe('zstd');
    expect(zstdDecompressSync(zstd.body).toString('utf8')).toBe(csv);

    await stopInstance(server);
    expect(server.child.exitCode).toBe(0);
    // No warning but the one for a server started without an admin (the checkpoint thread, had its
    // file not been found, would have logged one).
    const warnings = server.output().split('\n').filter((line) => /"level":(40|50|60)/.test(line));
    expect(warnings.filter((line) => !line.includes('no admin account exists yet'))).toEqual([]);
  });
});
