import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateSigningKey } from '../../../src/server/auth/keys.js';
import { run } from '../../../src/server/cli/db.js';
import { createSecretBox } from '../../../src/server/crypto/secret-box.js';
import { addSuppression } from '../../../src/server/consent/suppression.js';
import { loadConfig } from '../../../src/server/config.js';
import { openDatabase, type DatabaseHandle } from '../../../src/server/db/database.js';
import { migrateToLatest } from '../../../src/server/db/migrate.js';
import { toWaitlistEntry, WAITLIST_COLUMNS } from '../../../src/server/db/waitlist-entries.js';
import { insertWaitlistEntriesSkippingDuplicates } from '../../../src/server/signup/repository.js';
import type { WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { NO_ATTRIBUTION } from '../../../src/shared/waitlist/attribution.js';
import { createScratchPostgres, TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { runCliInProcess, runProcess, type CliResult } from '../../support/server-process.js';
import { NO_CONSENT_RECORD } from '../../../src/shared/waitlist/entry.js';

const root = path.resolve(import.meta.dirname, '../../..');
const HEADER = 'Email,Date Joined,IP Address,Location';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'db-cli-'));
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// Helpers

function cli(databaseUrl: string, argv: string[]): Promise<CliResult> {
  return runCliInProcess(run, argv, { env: { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }, cwd: dir });
}

interface TestDb {
  url: string;
  drop(): Promise<void>;
}

let dbCounter = 0;
/** A fresh database; `migrated: false` leaves it without tables so the CLI has to migrate it. */
async function newDatabase(dialect: TestDialect, migrated: boolean): Promise<TestDb> {
  if (dialect === 'sqlite') {
    const url = `file:${path.join(dir, `db-${++dbCounter}.db`)}`;
    if (migrated) await withDb(url, (h) => migrateToLatest(h.db));
    return { url, drop: async () => {} };
  }
  const scratch = await createScratchPostgres({ empty: !migrated });
  return { url: scratch.url, drop: scratch.drop };
}

async function withDb<T>(url: string, work: (handle: DatabaseHandle) => Promise<T>): Promise<T> {
  const handle = openDatabase(loadConfig({ DATABASE_URL: url }).database);
  try {
    return await work(handle);
  } finally {
    await handle.close();
  }
}

async function allRows(url: string): Promise<WaitlistEntry[]> {
  return withDb(url, async ({ db }) => {
    const rows = await db.selectFrom('waitlist').select(WAITLIST_COLUMNS).execute();
    return rows.map(toWaitlistEntry).sort((a, b) => (a.email < b.email ? -1 : 1));
  });
}

async function seed(url: string, entries: WaitlistEntry[]): Promise<void> {
  await withDb(url, async ({ db }) => {
    await migrateToLatest(db);
    await insertWaitlistEntriesSkippingDuplicates(db, entries);
  });
}

function entry(email: string, createdAt: string, extra: Partial<WaitlistEntry> = {}): WaitlistEntry {
  return { id: randomUUID(), email, created_at: createdAt, ip_address: null, country: null, city: null, region: null, ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION, ...extra };
}

/** Location shapes that survive the export's "city, region, country" text (see parseLocation). */
const HANDMADE: WaitlistEntry[] = [
  entry('=formula@example.com', '2026-11-22T06:04:59.123Z', { ip_address: '203.0.113.9', city: 'Berlin', region: 'Land Berlin', country: 'Germany' }),
  entry('-minus@example.com', '2026-11-22T06:04:01.000Z', { ip_address: '2001:db8::1', city: 'Paris', country: 'France' }),
  entry('+plus@example.com', '2026-07-04T16:30:00.000Z', { country: 'Japan' }),
  entry('at.sign@example.com', '2026-03-08T08:30:00.000Z', { ip_address: '198.51.100.7', city: 'São Paulo', region: 'State of São Paulo', country: 'Brazil' }),
  entry("o'brien@example.com", '2025-12-31T23:59:30.000Z'),
  entry('comma@example.com', '2026-01-01T00:00:00.000Z', { city: 'Washington', region: 'D.C., District of Columbia', country: 'United States' }),
];

function truncatedToMinute(iso: string): string {
  return new Date(Math.floor(Date.parse(iso) / 60_000) * 60_000).toISOString();
}

function comparable(entries: readonly WaitlistEntry[]) {
  return entries
    .map((e) => ({
      email: e.email,
      createdAt: truncatedToMinute(e.created_at),
      ip: e.ip_address,
      city: e.city,
      region: e.region,
      country: e.country,
    }))
    .sort((a, b) => (a.email < b.email ? -1 : 1));
}

function writeCsv(name: string, lines: string[]): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `${lines.join('\r\n')}\r\n`);
  return file;
}

// ---------------------------------------------------------------------------------------------

describe.each(TEST_DIALECTS)('npm run db (%s)', (dialect) => {
  const dropAfter: TestDb[] = [];
  afterAll(async () => {
    for (const db of dropAfter) await db.drop();
  });
  async function database(migrated: boolean): Promise<TestDb> {
    const db = await newDatabase(dialect, migrated);
    dropAfter.push(db);
    return db;
  }

  it('export streams the whole waitlist newest first; import into an empty database restores it', { timeout: 120_000 }, async () => {
    const source = await database(true);
    const generated: WaitlistEntry[] = [];
    const base = Date.parse('2026-06-01T00:00:00.000Z');
    for (let i = 0; i < 10_500; i++) {
      generated.push(entry(`user${i}@example.com`, new Date(base + i * 61_000).toISOString(), { ip_address: `10.0.${i % 256}.${i % 7}`, city: `City ${i % 50}`, country: 'Testland' }));
    }
    const all = [...HANDMADE, ...generated];
    await seed(source.url, all);

    const exported = await cli(source.url, ['export']);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toBe(`Exported ${all.length} waitlist entries (Date Joined in UTC).\n`);
    // BOM + header, then one chunk per keyset batch (5,000 rows): never one giant string.
    expect(exported.chunks.length).toBeGreaterThanOrEqual(4);
    expect(exported.chunks[0]).toBe(`\uFEFF${HEADER}\r\n`);
    expect(Math.max(...exported.chunks.map((c) => c.length))).toBeLessThan(exported.stdout.length / 2);
    const lines = exported.stdout.slice(1).split('\r\n');
    expect(lines).toHaveLength(all.length + 2); // header, rows, and the empty string after the last CRLF
    expect(lines[1]).toBe(`'=formula@example.com,"Nov 22, 2026, 06:04 AM",203.0.113.9,"Berlin, Land Berlin, Germany"`);
    expect(lines[2]).toBe(`'-minus@example.com,"Nov 22, 2026, 06:04 AM",2001:db8::1,"Paris, France"`);
    expect(lines[3]).toBe(`'+plus@example.com,"Jul 4, 2026, 04:30 PM",N/A,Japan`);
    expect(lines[4]).toBe('user10499@example.com,"Jun 8, 2026, 09:53 AM",10.0.3.6,"City 49, Testland"');
    expect(lines[all.length]).toBe(`o'brien@example.com,"Dec 31, 2025, 11:59 PM",N/A,Unknown`);

    const file = path.join(dir, `export-${dialect}.csv`);
    fs.writeFileSync(file, exported.stdout);
    const target = await database(false);
    const imported = await cli(target.url, ['import', path.basename(file)]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toBe('');
    expect(imported.stderr).toBe(`Imported ${all.length}, skipped 0 duplicates, 0 bad lines\n`);
    expect(comparable(await allRows(target.url))).toEqual(comparable(all));

    // The same file again: everything is a duplicate.
    const again = await cli(target.url, ['import', file]);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe(`Imported 0, skipped ${all.length} duplicates, 0 bad lines\n`);
  });

  it('export and import agree on --time-zone; --output writes a file and refuses to overwrite it', async () => {
    const source = await database(true);
    await seed(source.url, HANDMADE);
    const exported = await cli(source.url, ['export', '--time-zone', 'Asia/Kolkata', '--output', `kolkata-${dialect}.csv`]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toBe('');
    const file = path.join(dir, `kolkata-${dialect}.csv`);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toContain(`'=formula@example.com,"Nov 22, 2026, 11:34 AM"`);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    const again = await cli(source.url, ['export', `--output=${file}`]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already exists.*--force/);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);

    const target = await database(true);
    const imported = await cli(target.url, ['import', file, '--time-zone=Asia/Kolkata']);
    expect(imported.code, imported.stderr).toBe(0);
    expect(comparable(await allRows(target.url))).toEqual(comparable(HANDMADE));

    // Read as UTC instead, every time is 5 h 30 min later.
    const utcTarget = await database(true);
    expect((await cli(utcTarget.url, ['import', file])).code).toBe(0);
    const shifted = await allRows(utcTarget.url);
    const formula = shifted.find((e) => e.email === '=formula@example.com')!;
    expect(formula.created_at).toBe('2026-11-22T11:34:00.000Z');
  });

  it('skips duplicates already stored (any case) or repeated in the file, and counts them', async () => {
    const target = await database(true);
    await seed(target.url, [entry('known@example.com', '2026-01-01T00:00:00.000Z', { ip_address: '1.1.1.1' })]);
    const file = writeCsv(`dups-${dialect}.csv`, [
      HEADER,
      'KNOWN@Example.com,"Nov 22, 2026, 06:04 AM",9.9.9.9,Unknown',
      'new@example.com,"Nov 22, 2026, 06:04 AM",N/A,"Lyon, France"',
      'New@Example.com,"Nov 23, 2026, 06:04 AM",N/A,Unknown',
    ]);
    const result = await cli(target.url, ['import', file]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('Imported 1, skipped 2 duplicates, 0 bad lines\n');
    const rows = await allRows(target.url);
    expect(rows.map((r) => [r.email, r.ip_address, r.city, r.country, r.created_at])).toEqual([
      ['known@example.com', '1.1.1.1', null, null, '2026-01-01T00:00:00.000Z'],
      ['new@example.com', null, 'Lyon', 'France', '2026-11-22T06:04:00.000Z'],
    ]);
  });

  it('export --consent adds each entry\'s status and consent record; import reads them back', async () => {
    const source = await database(true);
    const consented = [
      entry('confirmed@example.com', '2026-11-20T10:00:00.000Z', {
        status: 'confirmed', consent_version: '2026-11-24', confirmed_at: '2026-11-20T10:03:12.345Z', confirmed_ip: '203.0.113.5',
      }),
      entry('invited@example.com', '2026-11-19T10:00:00.000Z', { status: 'invited', consent_version: '2026-11-24', invited_at: '2026-12-01T09:00:00.000Z' }),
      entry('quit@example.com', '2026-11-18T10:00:00.000Z', { status: 'unsubscribed', unsubscribed_at: '2026-11-30T18:00:00.000Z' }),
      entry('plain@example.com', '2026-11-17T10:00:00.000Z'),
    ];
    await seed(source.url, consented);

    const spec = await cli(source.url, ['export']);
    expect(spec.stdout.split('\r\n')[0]).toBe(`\uFEFF${HEADER}`);
    const exported = await cli(source.url, ['export', '--consent', '--output', `consent-${dialect}.csv`]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toMatch(/^Exported 4 waitlist entries to .* \(Date Joined in UTC, with the consent columns\)\.\n$/);
    const text = fs.readFileSync(path.join(dir, `consent-${dialect}.csv`), 'utf8');
    expect(text.split('\r\n')[0]).toBe(`\uFEFF${HEADER},Status,Consent Version,Confirmed At,Confirmed IP,Invited At,Unsubscribed At`);

    const target = await database(true);
    const imported = await cli(target.url, ['import', path.join(dir, `consent-${dialect}.csv`)]);
    expect(imported.stderr).toBe('Imported 4, skipped 0 duplicates, 0 bad lines\n');
    const consentOf = (rows: WaitlistEntry[]) =>
      rows.map((r) => [r.email, r.status, r.consent_version, r.confirmed_at, r.confirmed_ip, r.invited_at, r.unsubscribed_at]);
    expect(consentOf(await allRows(target.url))).toEqual(consentOf(await allRows(source.url)));
  });

  it('export --attribution adds where each entry came from (after --consent\'s columns); import reads it back', async () => {
    const source = await database(true);
    await seed(source.url, [
      entry('campaign@example.com', '2026-11-20T10:00:00.000Z', {
        utm_source: 'Newsletter', utm_medium: 'email', utm_campaign: '=launch', utm_term: 'private, markets', utm_content: 'header',
        referrer: 'https://www.news.example', landing_path: '/', source: 'newsletter',
      }),
      entry('referred@example.com', '2026-11-19T10:00:00.000Z', { referrer: 'https://www.hn.example', landing_path: '/thanks', source: 'hn.example' }),
      entry('direct@example.com', '2026-11-18T10:00:00.000Z'),
    ]);

    const spec = await cli(source.url, ['export']);
    expect(spec.stdout.split('\r\n')[0]).toBe(`\uFEFF${HEADER}`);
    const attributionHeader = 'Source,UTM Source,UTM Medium,UTM Campaign,UTM Term,UTM Content,Referrer,Landing Path';
    const exported = await cli(source.url, ['export', '--attribution', '--output', `attribution-${dialect}.csv`]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toMatch(/^Exported 3 waitlist entries to .* \(Date Joined in UTC, with the attribution columns\)\.\n$/);
    const lines = fs.readFileSync(path.join(dir, `attribution-${dialect}.csv`), 'utf8').split('\r\n');
    expect(lines[0]).toBe(`\uFEFF${HEADER},${attributionHeader}`);
    expect(lines[1]).toBe(
      'campaign@example.com,"Nov 20, 2026, 10:00 AM",N/A,Unknown,newsletter,Newsletter,email,\'=launch,"private, markets",header,https://www.news.example,/',
    );
    expect(lines[3]).toBe('direct@example.com,"Nov 18, 2026, 10:00 AM",N/A,Unknown,Direct,,,,,,,');
    const both = await cli(source.url, ['export', '--consent', '--attribution']);
    expect(both.code, both.stderr).toBe(0);
    expect(both.stderr).toMatch(/with the consent and attribution columns\)\.\n$/);
    expect(both.stdout.split('\r\n')[0]).toBe(
      `\uFEFF${HEADER},Status,Consent Version,Confirmed At,Confirmed IP,Invited At,Unsubscribed At,${attributionHeader}`,
    );

    const target = await database(true);
    const imported = await cli(target.url, ['import', path.join(dir, `attribution-${dialect}.csv`)]);
    expect(imported.stderr).toBe('Imported 3, skipped 0 duplicates, 0 bad lines\n');
    const attributionOf = (rows: WaitlistEntry[]) =>
      rows.map((r) => [r.email, r.utm_source, r.utm_medium, r.utm_campaign, r.utm_term, r.utm_content, r.referrer, r.landing_path, r.source]);
    expect(attributionOf(await allRows(target.url))).toEqual(attributionOf(await allRows(source.url)));
  });

  it('import keeps erased addresses out and says how many, with the server\'s secret key', async () => {
    const target = await database(true);
    const key = randomBytes(32);
    await withDb(target.url, async ({ db }) => {
      await addSuppression(db, createSecretBox(key), 'erased@example.com', 'erased', new Date());
    });
    const file = writeCsv(`suppressed-${dialect}.csv`, [HEADER, 'Erased@Example.com,2026-11-22T06:04:00Z,N/A,Unknown', 'fresh@example.com,2026-11-22T06:04:00Z,N/A,Unknown']);
    const env = { DATABASE_URL: target.url, LOG_LEVEL: 'silent' };
    const result = await runCliInProcess(run, ['import', file], { env: { ...env, AUTH_SECRET_KEY: key.toString('base64') }, cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe("Imported 1, skipped 0 duplicates, 0 bad lines\n1 address skipped: erased at the person's request (on the suppression list)\n");
    expect((await allRows(target.url)).map((r) => r.email)).toEqual(['fresh@example.com']);

    // Without the server's key the import cannot tell erased addresses apart: it refuses, and makes no key.
    const keyless = await runCliInProcess(run, ['import', file], { env: { ...env, AUTH_SECRET_KEY_FILE: path.join(dir, 'no-such-dir', 'key') }, cwd: dir });
    expect(keyless.code).toBe(1);
    expect(keyless.stderr).toMatch(/keeps 1 erased address out .*nothing was imported/);
    expect(fs.existsSync(path.join(dir, 'no-such-dir'))).toBe(false);

    // With another key the hashes would match nothing: the records' key check tells, and it refuses.
    const before = await allRows(target.url);
    const otherKey = await runCliInProcess(run, ['import', file], { env: { ...env, AUTH_SECRET_KEY: randomBytes(32).toString('base64') }, cwd: dir });
    expect(otherKey.code).toBe(1);
    expect(otherKey.stderr).toMatch(/keeps 1 erased address out .*this run has another key.*nothing was imported/);
    expect(await allRows(target.url)).toEqual(before);

    // Records from before the check value: the server's signing keys, sealed with its secret key, tell all the same.
    await withDb(target.url, async ({ db }) => {
      await db.updateTable('waitlist_suppressions').set({ key_check: null }).execute();
      await rotateSigningKey(db, { secretBox: createSecretBox(key), tokenLifetimeSeconds: 3600 });
    });
    const legacy = await runCliInProcess(run, ['import', file], { env: { ...env, AUTH_SECRET_KEY: randomBytes(32).toString('base64') }, cwd: dir });
    expect(legacy.code).toBe(1);
    expect(legacy.stderr).toMatch(/this run has another key.*nothing was imported/);
    const right = await runCliInProcess(run, ['import', file], { env: { ...env, AUTH_SECRET_KEY: key.toString('base64') }, cwd: dir });
    expect(right.code, right.stderr).toBe(0);
    expect(await allRows(target.url)).toEqual(before);
  });

  it('a bad line imports nothing (exit 1, line reported); --skip-bad imports the rest', async () => {
    const target = await database(true);
    await seed(target.url, [entry('existing@example.com', '2026-01-01T00:00:00.000Z')]);
    const before = await allRows(target.url);
    const file = writeCsv(`bad-${dialect}.csv`, [
      HEADER,
      'one@example.com,"Nov 22, 2026, 06:04 AM",N/A,Unknown',
      '"two@example.com","Nov 22, 2026, 06:05 AM",N/A,"Multi',
      'line, Place"',
      'not an email,"Nov 22, 2026, 06:06 AM",N/A,Unknown',
      'three@example.com,2026-11-22T06:07:00Z,N/A,Unknown',
    ]);

    const refused = await cli(target.url, ['import', file]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('Line 5: not a valid e-mail address ("not an email")');
    expect(refused.stderr).toMatch(/Nothing imported: 1 bad line\. .*--skip-bad to import the other 3 entries/);
    expect(await allRows(target.url)).toEqual(before);

    const skipped = await cli(target.url, ['import', '--skip-bad', file]);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stderr).toContain('Line 5: not a valid e-mail address ("not an email")');
    expect(skipped.stderr).toContain('Imported 3, skipped 0 duplicates, 1 bad lines\n');
    expect((await allRows(target.url)).map((r) => r.email)).toEqual(['existing@example.com', 'one@example.com', 'three@example.com', 'two@example.com']);
  });

  it('a database error in the middle of the import rolls everything back', async () => {
    const target = await database(true);
    await seed(target.url, [entry('existing@example.com', '2026-01-01T00:00:00.000Z')]);
    // A trigger refusing one address, placed in the third 500-row INSERT, after two have run.
    await withDb(target.url, async ({ db }) => {
      if (dialect === 'sqlite') {
        await sql`CREATE TRIGGER waitlist_boom BEFORE INSERT ON waitlist WHEN NEW.email = 'boom@example.com'
                  BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END`.execute(db);
      } else {
        await sql`CREATE FUNCTION waitlist_boom() RETURNS trigger LANGUAGE plpgsql AS $$
                  BEGIN IF NEW.email = 'boom@example.com' THEN RAISE EXCEPTION 'refused by the test trigger'; END IF; RETURN NEW; END $$`.execute(db);
        await sql`CREATE TRIGGER waitlist_boom BEFORE INSERT ON waitlist FOR EACH ROW EXECUTE FUNCTION waitlist_boom()`.execute(db);
      }
    });
    const before = await allRows(target.url);
    const lines = [HEADER];
    for (let i = 0; i < 1200; i++) lines.push(`${i === 1100 ? 'boom' : `bulk${i}`}@example.com,2026-11-22T06:04:00Z,N/A,Unknown`);
    const file = writeCsv(`boom-${dialect}.csv`, lines);

    const result = await cli(target.url, ['import', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/rolled back; nothing was imported\..*refused by the test trigger/);
    expect(result.stderr).not.toMatch(/Imported/);
    expect(await allRows(target.url)).toEqual(before);
  });

  it('runs migrations first, so export works on a fresh database', async () => {
    const fresh = await database(false);
    const result = await cli(fresh.url, ['export']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`\uFEFF${HEADER}\r\n`);
    expect(result.stderr).toBe('Exported 0 waitlist entries (Date Joined in UTC).\n');
  });

  if (dialect === 'postgres') {
    it('backup on PostgreSQL exits 2 and points to pg_dump', async () => {
      const pgDb = await database(true);
      const result = await cli(pgDb.url, ['backup', 'pg.db']);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('pg_dump "$DATABASE_URL" > FILE');
      expect(fs.existsSync(path.join(dir, 'pg.db'))).toBe(false);
    });
  }
});

describe('npm run db backup (sqlite)', () => {
  it('copies a consistent database while another process keeps writing', { timeout: 120_000 }, async () => {
    const url = `file:${path.join(dir, 'live.db')}`;
    const seeded: WaitlistEntry[] = [];
    for (let i = 0; i < 30_000; i++) seeded.push(entry(`seed${i}@example.com`, new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(), { city: 'Somewhere', country: 'Testland', ip_address: '192.0.2.1' }));
    await seed(url, seeded);

    // A server-like writer in its own process: one committed INSERT after another.
    const writerScript = path.join(dir, 'writer.cjs');
    fs.writeFileSync(
      writerScript,
      `const Database = require(${JSON.stringify(path.join(root, 'node_modules/better-sqlite3'))});
       const { randomUUID } = require('node:crypto');
       const db = new Database(process.argv[2]);
       db.pragma('busy_timeout = 5000');
       const insert = db.prepare("INSERT INTO waitlist (id, email, created_at) VALUES (?, ?, ?)");
       let n = 0, stop = false;
       process.on('SIGTERM', () => { stop = true; });
       (function loop() {
         for (let k = 0; k < 10; k++) insert.run(randomUUID(), 'writer' + (n++) + '@example.com', new Date().toISOString());
         if (n === 10) process.stdout.write('ready\\n');
         if (stop) { db.close(); process.stdout.write('done ' + n + '\\n'); process.exit(0); }
         setImmediate(loop);
       })();`,
    );
    const writer = spawn(process.execPath, [writerScript, path.join(dir, 'live.db')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let writerOut = '';
    const ready = new Promise<void>((resolve) =>
      writer.stdout.on('data', (d: Buffer) => {
        writerOut += d.toString();
        if (writerOut.includes('ready')) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => writer.on('close', resolve));
    await ready;

    const peek = new SQLite(path.join(dir, 'live.db'), { readonly: true });
    const writtenBefore = Number((peek.prepare('SELECT count(*) AS n FROM waitlist').get() as { n: number }).n);
    peek.close();
    const result = await cli(url, ['backup', 'backup.db']);
    writer.kill('SIGTERM');
    expect(await exited).toBe(0);
    const writerTotal = Number(/done (\d+)/.exec(writerOut)?.[1]);

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
    const backupFile = path.join(dir, 'backup.db');
    const copy = new SQLite(backupFile, { readonly: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(copy.pragma('journal_mode', { simple: true })).toBe('delete');
      const count = Number((copy.prepare('SELECT count(*) AS n FROM waitlist').get() as { n: number }).n);
      expect(count).toBeGreaterThanOrEqual(writtenBefore);
      expect(count).toBeLessThanOrEqual(30_000 + writerTotal);
      expect(result.stderr).toMatch(new RegExp(`^Backed up .*live\\.db to .*backup\\.db: [\\d.]+ MiB \\([\\d,]+ bytes\\), ${count} waitlist rows\\.\\n$`));
      // The admin tables came along too.
      expect(copy.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'admin_users'").get()).toEqual({ n: 1 });
    } finally {
      copy.close();
    }
    expect(fs.existsSync(`${backupFile}-wal`)).toBe(false);
    expect(fs.statSync(backupFile).mode & 0o777).toBe(0o600);
    // The writer kept going during the backup, and no temp file was left behind.
    expect(writerTotal).toBeGreaterThan(10);
    expect(fs.readdirSync(dir).filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('refuses to overwrite an existing file unless --force', async () => {
    const url = `file:${path.join(dir, 'small.db')}`;
    await seed(url, HANDMADE);
    const dest = path.join(dir, 'existing.db');
    fs.writeFileSync(dest, 'keep me');

    const refused = await cli(url, ['backup', dest]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/already exists.*--force/);
    expect(fs.readFileSync(dest, 'utf8')).toBe('keep me');

    const forced = await cli(url, ['backup', dest, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toMatch(/KiB \([\d,]+ bytes\), 6 waitlist rows\.\n$/);
    const copy = new SQLite(dest, { readonly: true });
    expect(copy.prepare('SELECT count(*) AS n FROM waitlist').get()).toEqual({ n: 6 });
    copy.close();

    const missing = await cli(`file:${path.join(dir, 'nope', 'x.db')}`, ['backup', 'x-backup.db']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/No database at/);
  });
});

describe('npm run db usage', () => {
  const url = () => `file:${path.join(dir, 'usage.db')}`;

  it('help, no command, unknown command and bad options', async () => {
    const help = await cli(url(), ['help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run db -- <command>/);
    expect(help.stdout).toContain('pg_dump "$DATABASE_URL" > FILE');
    expect(help.stdout).toContain('3+ parts = city, region (the middle parts)');
    expect(help.stderr).toBe('');

    const none = await cli(url(), []);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/^Usage:/);

    const unknown = await cli(url(), ['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/^Error: Unknown command "frobnicate"\.\n\nUsage:/);

    for (const argv of [['export', '--nope'], ['export', '--time-zone', 'Mars/Olympus'], ['import'], ['import', 'a.csv', 'b.csv'], ['backup'], ['export', 'file.csv']]) {
      const bad = await cli(url(), argv);
      expect(bad.code, argv.join(' ')).toBe(2);
      expect(bad.stdout).toBe('');
    }

    const missing = await cli(url(), ['import', 'does-not-exist.csv']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/No such file: .*does-not-exist\.csv/);

    const latin1 = path.join(dir, 'latin1.csv');
    fs.writeFileSync(latin1, Buffer.from('Email\nm\xfcller@example.com\n', 'latin1'));
    const notUtf8 = await cli(url(), ['import', latin1]);
    expect(notUtf8.code).toBe(1);
    expect(notUtf8.stderr).toMatch(/not UTF-8/);

    const noEmail = path.join(dir, 'no-email.csv');
    fs.writeFileSync(noEmail, 'Name,Date Joined\nx,y\n');
    const headerless = await cli(url(), ['import', noEmail]);
    expect(headerless.code).toBe(1);
    expect(headerless.stderr).toMatch(/no "Email" column/);

    const { code: badConfig } = await runCliInProcess(run, ['export'], { env: { DATABASE_URL: 'mysql://x' }, cwd: dir });
    expect(badConfig).toBe(78);
  });
});

describe('the real entry point', () => {
  const spawnCli = (command: string, args: string[], cwd: string, env: Record<string, string>) =>
    runProcess(command, args, { cwd, env: { ...process.env, LOG_LEVEL: 'silent', ...env } });

  it('`npm run --silent db -- export` writes only the CSV; an unknown command exits 2', { timeout: 120_000 }, async () => {
    const env = { DATABASE_URL: `file:${path.join(dir, 'spawned.db')}` };
    const exported = await spawnCli('npm', ['run', '--silent', 'db', '--', 'export'], root, env);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toBe(`\uFEFF${HEADER}\r\n`);
    expect(exported.stderr).toContain('Exported 0 waitlist entries');

    // Relative FILE arguments are relative to where npm was run, not the package root.
    const elsewhere = fs.mkdtempSync(path.join(dir, 'cwd-'));
    const output = await spawnCli('npm', ['run', '--silent', '--prefix', root, 'db', '--', 'export', '-o', 'here.csv'], elsewhere, env);
    expect(output.code, output.stderr).toBe(0);
    expect(fs.readFileSync(path.join(elsewhere, 'here.csv'), 'utf8')).toBe(`\uFEFF${HEADER}\r\n`);

    const unknown = await spawnCli('npx', ['tsx', 'src/server/cli/db.ts', 'frobnicate'], root, env);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/Unknown command "frobnicate"/);
  });
});
