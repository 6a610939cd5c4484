/**
 * The admin benchmark's waitlist: N realistic entries (default a million), the same rows on
 * SQLite and PostgreSQL, loaded fast (a prepared statement in one transaction; COPY through psql),
 * and the database's own streaming time for the rows Export All writes (the export's floor).
 *
 * The rows come from one seeded generator, so both databases hold the same distribution:
 * - created_at over the last 365 days, growing (signups per day rise linearly), a few ties;
 * - ~30 countries, Zipf-like, ~6% unknown; DELETE_COUNTRY on exactly `deleteCount` rows spread over
 *   the whole year (the delete step selects them with a filter);
 * - unique addresses over ~20 domains (SEARCH_DOMAINS for the search step);
 * - statuses mixed (joined, confirmed, pending, invited, unsubscribed) with their timestamps;
 * - attribution: ~10 sources (28% none = "Direct"), ~15 campaigns, mediums, terms, contents,
 *   referring origins and landing paths, as the signup form stores them (attribution.ts).
 *
 * The rows go to the portal's list (list_id 0); a plan's `secondList` adds another list's entries
 * (an offering list, issue 31, made beforehand) in the same load, from the same generator with
 * another seed: the same domains, countries and DELETE_COUNTRY, so a query of the portal's list
 * that took in the other list's entries would show it in every count the benchmark checks.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import type { WaitlistTable } from '../../../src/server/db/schema.js';
import { openDatabase } from '../../../src/server/db/database.js';
import { migrateToLatest } from '../../../src/server/db/migrate.js';
import { PORTAL_LIST_ID } from '../../../src/server/db/lists.js';

/** The country the delete step filters on; no other row has it. */
export const DELETE_COUNTRY = 'Portugal';
/** Domains the search step types (`@domain`), each on a few percent of the rows. */
export const SEARCH_DOMAINS = ['proton.me', 'fastmail.com', 'hey.com'] as const;
/** Countries the URL-filter step opens (`?country=`), large, middle and small. */
export const FILTER_COUNTRIES = ['Germany', 'Canada', 'Mexico'] as const;

export interface SeedPlan {
  entries: number;
  /** Rows with DELETE_COUNTRY; at most entries / 10. */
  deleteCount: number;
  /** The newest signup is a minute before this (ms since the epoch). */
  now: number;
  /** PRNG seed: the same seed gives the same rows (ids aside). */
  seed?: number;
  /** Added to every address (`…<i>.<tag>@domain`), so a second seeding of the same list adds new ones. */
  emailTag?: string;
  /** Another list's entries, loaded with the portal's (its `lists` row exists already). */
  secondList?: { listId: number; entries: number; deleteCount: number };
}

/** The second list's rows come from this seed (the portal's from the plan's). */
const SECOND_LIST_SEED = 20261126;

/** The columns seeded, in the order rows are generated. */
export const SEED_COLUMNS = [
  'id',
  'email',
  'created_at',
  'ip_address',
  'country',
  'city',
  'region',
  'status',
  'consent_version',
  'confirmation_sent_at',
  'confirmed_at',
  'confirmed_ip',
  'invited_at',
  'unsubscribed_at',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  'referrer',
  'landing_path',
  'source',
] as const satisfies ReadonlyArray<keyof WaitlistTable>;

export type SeedRow = Array<string | null>;

/** The stored columns Export All's default file is written from (Email, Date Joined, IP Address, Location). */
export const EXPORT_COLUMNS = ['email', 'created_at', 'ip_address', 'city', 'region', 'country'] as const;
/** Every entry of the portal's list in the admin's order, as the export reads it (every index leads with list_id). */
export const EXPORT_ALL_SQL = `SELECT ${EXPORT_COLUMNS.join(', ')} FROM waitlist WHERE list_id = ${PORTAL_LIST_ID} ORDER BY created_at DESC, id DESC`;

// ---- the generator ------------------------------------------------------------------------------

/** mulberry32: small, fast, seeded; enough for a plausible distribution. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks from weighted choices with one uniform number. */
function weighted<T>(choices: ReadonlyArray<readonly [T, number]>): (u: number) => T {
  const total = choices.reduce((sum, [, w]) => sum + w, 0);
  const bounds: number[] = [];
  let acc = 0;
  for (const [, w] of choices) bounds.push((acc += w / total));
  return (u) => {
    for (let i = 0; i < bounds.length; i++) if (u < bounds[i]!) return choices[i]![0];
    return choices[choices.length - 1]![0];
  };
}

const PLACES: Array<[country: string, city: string, region: string]> = [
  ['United States', 'New York', 'New York'],
  ['Germany', 'Berlin', 'Land Berlin'],
  ['United Kingdom', 'London', 'England'],
  ['India', 'Bengaluru', 'Karnataka'],
  ['France', 'Paris', 'Île-de-France'],
  ['Canada', 'Toronto', 'Ontario'],
  ['Brazil', 'São Paulo', 'São Paulo'],
  ['Netherlands', 'Amsterdam', 'North Holland'],
  ['Spain', 'Madrid', 'Madrid'],
  ['Australia', 'Sydney', 'New South Wales'],
  ['Switzerland', 'Zürich', 'Zurich'],
  ['Sweden', 'Stockholm', 'Stockholm County'],
  ['Japan', 'Tokyo', 'Tokyo'],
  ['Italy', 'Milan', 'Lombardy'],
  ['Poland', 'Warsaw', 'Mazovia'],
  ['Mexico', 'Mexico City', 'Mexico City'],
  ['Singapore', 'Singapore', 'Singapore'],
  ['Ireland', 'Dublin', 'Leinster'],
  ['Israel', 'Tel Aviv', 'Tel Aviv'],
  ['Austria', 'Vienna', 'Vienna'],
  ['Denmark', 'Copenhagen', 'Capital Region'],
  ['Norway', 'Oslo', 'Oslo'],
  ['Finland', 'Helsinki', 'Uusimaa'],
  ['Belgium', 'Brussels', 'Brussels Capital'],
  ['South Korea', 'Seoul', 'Seoul'],
  ['Argentina', 'Buenos Aires', 'Buenos Aires'],
  ['Nigeria', 'Lagos', 'Lagos'],
  ['South Africa', 'Cape Town', 'Western Cape'],
  ['Estonia', 'Tallinn', 'Harju'],
];
const pickPlace = weighted(PLACES.map((p, rank) => [p, 1 / (rank + 1) ** 0.9] as const));

const FIRST = ['alex', 'sam', 'maria', 'li', 'noah', 'emma', 'omar', 'yuki', 'lena', 'raj', 'ana', 'tom', 'zoe', 'ivan', 'mia', 'ben', 'sara', 'leo', 'nina', 'kai'];
const LAST = ['smith', 'muller', 'garcia', 'chen', 'kim', 'rossi', 'novak', 'silva', 'khan', 'berg', 'dubois', 'jones', 'sato', 'lopez', 'weber', 'brown', 'ivanova', 'patel', 'nagy', 'olsen'];
const pickDomain = weighted<string>([
  ['gmail.com', 34],
  ['outlook.com', 10],
  ['yahoo.com', 7],
  ['icloud.com', 7],
  ['hotmail.com', 5],
  ['gmx.de', 4],
  [SEARCH_DOMAINS[0], 3],
  [SEARCH_DOMAINS[1], 2],
  [SEARCH_DOMAINS[2], 1],
  ['acme.io', 3],
  ['example.org', 3],
  ['startup.dev', 3],
  ['bigcorp.com', 4],
  ['university.edu', 3],
  ['mail.ru', 2],
  ['web.de', 2],
  ['orange.fr', 2],
  ['qq.com', 2],
  ['yandex.com', 1],
  ['zoho.com', 2],
]);

type StatusName = 'joined' | 'confirmed' | 'pending' | 'invited' | 'unsubscribed';
const pickStatus = weighted<StatusName>([
  ['joined', 55],
  ['confirmed', 25],
  ['pending', 10],
  ['invited', 7],
  ['unsubscribed', 3],
]);

interface SourceSpec {
  /** utm_source as sent (the stored `source` is it lower-cased), or null when only a referrer names it. */
  utm: string | null;
  medium: string | null;
  referrer: string | null;
  /** Share of these signups that carry a campaign. */
  campaignShare: number;
  /** The stored `source` (attribution.ts deriveSource): utm lower-cased, else the referrer's host without www. */
  source?: string;
}
const SOURCES: Array<[SourceSpec | null, number]> = [
  [null, 28],
  [{ utm: 'google', medium: 'cpc', referrer: 'https://www.google.com', campaignShare: 0.9 }, 18],
  [{ utm: 'newsletter', medium: 'email', referrer: null, campaignShare: 0.95 }, 10],
  [{ utm: 'Twitter', medium: 'social', referrer: 'https://t.co', campaignShare: 0.7 }, 8],
  [{ utm: 'linkedin', medium: 'social', referrer: 'https://www.linkedin.com', campaignShare: 0.8 }, 8],
  [{ utm: 'producthunt', medium: 'referral', referrer: 'https://www.producthunt.com', campaignShare: 0.5 }, 7],
  [{ utm: null, medium: null, referrer: 'https://news.ycombinator.com', campaignShare: 0 }, 6],
  [{ utm: null, medium: null, referrer: 'https://www.reddit.com', campaignShare: 0 }, 5],
  [{ utm: 'facebook', medium: 'paid-social', referrer: 'https://l.facebook.com', campaignShare: 0.9 }, 4],
  [{ utm: 'youtube', medium: 'video', referrer: 'https://www.youtube.com', campaignShare: 0.6 }, 3],
  [{ utm: 'partner-blog', medium: 'referral', referrer: 'https://blog.partner.example', campaignShare: 0.4 }, 3],
];
for (const [spec] of SOURCES) {
  if (spec) spec.source = spec.utm ? spec.utm.toLowerCase() : new URL(spec.referrer!).hostname.replace(/^www\./, '');
}
const pickSource = weighted(SOURCES);
const pickCampaign = weighted(
  [
    'launch-2026',
    'spring-promo',
    'summer-promo',
    'autumn-push',
    'black-friday',
    'webinar-q1',
    'webinar-q2',
    'webinar-q3',
    'retargeting',
    'brand-search',
    'competitor-search',
    'founder-story',
    'beta-invite',
    'referral-program',
    'podcast-ad',
  ].map((c, rank) => [c, 1 / (rank + 1) ** 0.7] as const),
);
const TERMS = ['waitlist app', 'private markets', 'early access', 'invest startups', null, null];
const CONTENTS = ['hero-cta', 'footer-link', 'banner-a', 'banner-b', null];
const pickLanding = weighted<string>([
  ['/', 80],
  ['/pricing', 8],
  ['/blog/launch', 7],
  ['/features', 5],
]);

const DAY_MS = 86_400_000;
const CONSENT_VERSION = '2026-11-24';

function ipv4(r: () => number): string {
  return `${1 + Math.floor(r() * 222)}.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}.${1 + Math.floor(r() * 254)}`;
}
function ipv6(r: () => number): string {
  const group = () => Math.floor(r() * 65536).toString(16);
  return `2001:db8:${group()}:${group()}::${group()}`;
}

/** The most delete rows a plan of `entries` can have (every tenth row). */
export function maxDeleteCount(entries: number): number {
  return Math.floor(entries / 10);
}

/**
 * Rows oldest first (index 0 is a year ago), in SEED_COLUMNS order. Timestamps are ISO-8601 UTC
 * with milliseconds, as the server writes them.
 */
export function* seedRows(plan: SeedPlan): Generator<SeedRow> {
  const { entries, deleteCount, now } = plan;
  if (deleteCount > maxDeleteCount(entries)) throw new Error(`--delete ${deleteCount} is more than a tenth of ${entries} entries`);
  const r = prng(plan.seed ?? 20261125);
  const tag = plan.emailTag ? `.${plan.emailTag}` : '';
  const end = now - 60_000;
  const span = 365 * DAY_MS;
  let previous = end - span;
  for (let i = 0; i < entries; i++) {
    // t = sqrt(fraction): the density of signups grows linearly over the year. Every 50th row
    // reuses the previous timestamp, so ties (broken by id in the admin's order) exist.
    const t = i % 50 === 49 ? previous : Math.max(previous, Math.floor(end - span + span * Math.sqrt((i + r()) / entries)));
    previous = t;
    const created = new Date(t);

    let country: string | null;
    let city: string | null = null;
    let region: string | null = null;
    if (i % 10 === 3 && Math.floor(i / 10) < deleteCount) {
      country = DELETE_COUNTRY;
      city = 'Lisbon';
      region = 'Lisbon';
    } else if (r() < 0.06) {
      country = null;
    } else {
      const place = pickPlace(r());
      country = place[0];
      // A third of the located signups resolve to the country only.
      if (r() < 0.67) [city, region] = [place[1], place[2]];
    }

    const ipRoll = r();
    const ip = ipRoll < 0.05 ? null : ipRoll < 0.12 ? ipv6(r) : ipv4(r);
    const email = `${FIRST[Math.floor(r() * FIRST.length)]}.${LAST[Math.floor(r() * LAST.length)]}.${i.toString(36)}${tag}@${pickDomain(r())}`;

    const status = pickStatus(r());
    const at = (minutes: number) => new Date(Math.min(end, t + minutes * 60_000)).toISOString();
    const mailed = status !== 'joined';
    const confirmed = status === 'confirmed' || status === 'invited' || status === 'unsubscribed';
    const confirmedAt = confirmed ? at(1 + Math.floor(r() * 600)) : null;

    const source = pickSource(r());
    const campaign = source && r() < source.campaignShare ? pickCampaign(r()) : null;
    const utmSource = source?.utm ?? null;
    const referrer = source?.referrer ?? null;

    yield [
      randomUUID(),
      email,
      created.toISOString(),
      ip,
      country,
      city,
      region,
      status,
      mailed ? CONSENT_VERSION : null,
      mailed ? at(0) : null,
      confirmedAt,
      confirmed ? ip : null,
      status === 'invited' ? at(2 * 24 * 60 + Math.floor(r() * 1000)) : null,
      status === 'unsubscribed' ? at(3 * 24 * 60 + Math.floor(r() * 1000)) : null,
      utmSource,
      utmSource ? source!.medium : null,
      campaign,
      utmSource === 'google' ? TERMS[Math.floor(r() * TERMS.length)]! : null,
      campaign ? CONTENTS[Math.floor(r() * CONTENTS.length)]! : null,
      referrer,
      pickLanding(r()),
      source?.source ?? null,
    ];
  }
}

// ---- loading ------------------------------------------------------------------------------------

/** The columns loaded: the seeded ones and the list. */
const LOAD_COLUMNS = [...SEED_COLUMNS, 'list_id'] as const;

/** The plan's rows in LOAD_COLUMNS order: the portal's list, then the second list's, if any. */
function* loadRows(plan: SeedPlan): Generator<SeedRow> {
  for (const row of seedRows(plan)) {
    row.push(String(PORTAL_LIST_ID));
    yield row;
  }
  const second = plan.secondList;
  if (!second) return;
  for (const row of seedRows({ entries: second.entries, deleteCount: second.deleteCount, now: plan.now, seed: SECOND_LIST_SEED })) {
    row.push(String(second.listId));
    yield row;
  }
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

export interface SeedResult {
  /** Rows inserted. */
  rows: number;
  /** Creating the schema with the app's migrations. */
  migrateMs: number;
  /** Inserting the rows, index maintenance included. */
  loadMs: number;
  /** PostgreSQL: VACUUM ANALYZE afterwards (what autovacuum would do soon after a bulk load). */
  vacuumMs: number;
}

/** Migrates with the app's own code (src/server/db/migrate.ts), as the server does at start-up. */
async function migrate(database: Parameters<typeof openDatabase>[0]): Promise<number> {
  const started = performance.now();
  const handle = openDatabase(database);
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
  return performance.now() - started;
}

/**
 * Seeds a new SQLite file: the app's migrations, then every row through one prepared statement in
 * one transaction. Durability is relaxed while loading (journal in memory, synchronous OFF: a crash
 * only loses the scratch file); the file is back in WAL mode afterwards, as the server keeps it.
 */
export async function seedSqlite(file: string, plan: SeedPlan): Promise<SeedResult> {
  const migrateMs = await migrate({ dialect: 'sqlite', filename: file });
  const started = performance.now();
  const db = new SQLite(file);
  try {
    // No WAL while loading (every page would be written twice: to the WAL, then by the checkpoint).
    db.pragma('journal_mode = MEMORY');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -1048576'); // 1 GiB: the indexes' pages stay in memory while loading
    // The secondary indexes are dropped and created again from their own SQL after the load (a
    // sort per index instead of a million random inserts into each): the same schema, sooner.
    const indexes = db
      .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'waitlist' AND sql IS NOT NULL")
      .all() as Array<{ name: string; sql: string }>;
    const insert = db.prepare(`INSERT INTO waitlist (${LOAD_COLUMNS.join(', ')}) VALUES (${LOAD_COLUMNS.map(() => '?').join(', ')})`);
    let rows = 0;
    db.transaction(() => {
      for (const { name } of indexes) db.exec(`DROP INDEX ${quoteIdent(name)}`);
      for (const row of loadRows(plan)) {
        insert.run(row);
        rows++;
      }
      for (const { sql } of indexes) db.exec(sql);
    })();
    db.pragma('journal_mode = WAL');
    return { rows, migrateMs, loadMs: performance.now() - started, vacuumMs: 0 };
  } finally {
    db.close();
  }
}

/** A CSV field for COPY: our values hold no comma, quote or line break; null is an empty field. */
function copyLine(row: SeedRow): string {
  return row.map((v) => v ?? '').join(',') + '\n';
}

/** Runs psql with `args`, piping `input` (an iterable of chunks) to its standard input. */
export async function runPsql(url: string, args: string[], input?: Iterable<string>): Promise<void> {
  const child = spawn('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, ...args], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr = (stderr + t).slice(-5000)));
  const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
  const spawnError = once(child, 'error').then(([err]) => {
    throw new Error(`psql could not be started (is the PostgreSQL client installed?): ${(err as Error).message}`);
  });
  const work = (async () => {
    if (input) {
      let buffer = '';
      for (const chunk of input) {
        buffer += chunk;
        if (buffer.length >= 1 << 20) {
          if (!child.stdin.write(buffer)) await once(child.stdin, 'drain');
          buffer = '';
        }
      }
      child.stdin.end(buffer);
    } else {
      child.stdin.end();
    }
    const [code, signal] = await exited;
    if (code !== 0) throw new Error(`psql ${args.join(' ')} failed (${code ?? signal}):\n${stderr}`);
  })();
  await Promise.race([work, spawnError]);
}

/**
 * Seeds a new PostgreSQL database: the app's migrations, then one psql session fed on its standard
 * input: in one transaction the secondary indexes are dropped, the rows streamed from the generator
 * with COPY ... FREEZE (the table is truncated in the same transaction, which FREEZE needs: the rows
 * are written frozen and all-visible, as a vacuumed table's are), and the indexes created again from
 * their own definitions (a sort each instead of a million inserts into each). Then VACUUM ANALYZE,
 * so no autovacuum of the fresh rows runs during the measurements and the planner knows the table.
 */
export async function seedPostgres(url: string, plan: SeedPlan): Promise<SeedResult> {
  const migrateMs = await migrate({ dialect: 'postgres', connectionString: url });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let indexes: Array<{ indexname: string; indexdef: string }>;
  try {
    ({ rows: indexes } = await client.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes
        WHERE schemaname = current_schema() AND tablename = 'waitlist'
          AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = 'waitlist'::regclass)`,
    ));
  } finally {
    await client.end();
  }
  const started = performance.now();
  const script = (function* () {
    yield "SET maintenance_work_mem = '512MB';\nBEGIN;\n";
    for (const { indexname } of indexes) yield `DROP INDEX ${quoteIdent(indexname)};\n`;
    yield 'TRUNCATE waitlist;\n';
    yield `COPY waitlist (${LOAD_COLUMNS.join(', ')}) FROM STDIN WITH (FORMAT csv, FREEZE);\n`;
    for (const row of loadRows(plan)) yield copyLine(row);
    yield '\\.\n';
    for (const { indexdef } of indexes) yield `${indexdef};\n`;
    yield 'COMMIT;\n';
  })();
  await runPsql(url, ['-f', '-'], script);
  const loadMs = performance.now() - started;
  const vacuumStarted = performance.now();
  await runPsql(url, ['-c', 'VACUUM (ANALYZE) waitlist']);
  const vacuumMs = performance.now() - vacuumStarted;
  return { rows: plan.entries + (plan.secondList?.entries ?? 0), migrateMs, loadMs, vacuumMs };
}

// ---- the database's own streaming (the export's floor) --------------------------------------------

/** better-sqlite3 iterate() over EXPORT_ALL_SQL: ms and rows. */
export function sqliteStreamAll(file: string): { ms: number; rows: number } {
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    const started = performance.now();
    let rows = 0;
    for (const _row of db.prepare(EXPORT_ALL_SQL).iterate()) rows++;
    return { ms: performance.now() - started, rows };
  } finally {
    db.close();
  }
}

/** psql `\copy (EXPORT_ALL_SQL) TO '/dev/null' WITH CSV`: the whole client round trip, ms. */
export async function postgresStreamAll(url: string): Promise<{ ms: number; rows: number }> {
  const started = performance.now();
  await runPsql(url, ['-c', `\\copy (${EXPORT_ALL_SQL}) TO '/dev/null' WITH (FORMAT csv)`]);
  const ms = performance.now() - started;
  return { ms, rows: await postgresCount(url, `SELECT count(*) AS n FROM waitlist WHERE list_id = ${PORTAL_LIST_ID}`) };
}

// ---- small queries ------------------------------------------------------------------------------

export async function postgresCount(url: string, sql: string, params: unknown[] = []): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(sql, params);
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

export function sqliteCount(file: string, sql: string, params: unknown[] = []): number {
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    return Number((db.prepare(sql).get(...params) as { n: number | bigint }).n);
  } finally {
    db.close();
  }
}

/** A database the benchmark seeded: how to count in it and stream from it. */
export interface SeededDatabase {
  kind: 'sqlite' | 'postgres';
  /** DATABASE_URL for the server and the CLI. */
  url: string;
  count(sql: string, params?: unknown[]): Promise<number>;
  streamAll(): Promise<{ ms: number; rows: number }>;
}

export function sqliteTarget(file: string): SeededDatabase {
  return {
    kind: 'sqlite',
    url: `file:${file}`,
    count: async (sql, params) => sqliteCount(file, sql, params),
    streamAll: async () => sqliteStreamAll(file),
  };
}

export function postgresTarget(url: string): SeededDatabase {
  // PostgreSQL numbers its parameters ($1...); the queries here are written with `?`.
  const numbered = (sql: string) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  };
  return {
    kind: 'postgres',
    url,
    count: (sql, params) => postgresCount(url, numbered(sql), params),
    streamAll: () => postgresStreamAll(url),
  };
}

/**
 * The scratch database `name` on the server of `adminUrl`, new and empty: a leftover of a run that
 * was killed is dropped first. `drop()` removes it (connections forced closed).
 */
export async function freshPostgresDatabase(adminUrl: string, name: string): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = async (text: string) => {
    const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  await admin(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${quoteIdent(name)}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`) };
}
