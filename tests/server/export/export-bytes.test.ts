import type net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prng } from '../../../scripts/bench/lib/admin-data.js';
import { openDatabase, postgresPoolOf, type DatabaseHandle } from '../../../src/server/db/database.js';
import { exportRowsQuery, iterateMatchingWaitlist, SPEC_EXPORT_COLUMNS } from '../../../src/server/export/queries.js';
import { copyBatches, copyExport, copyRows } from '../../../src/server/export/copy.js';
import { csvChunks } from '../../../src/server/export/csv.js';
import { inlinePostgresParameters } from '../../../src/server/export/postgres-literals.js';
import { exportRows } from '../../../src/server/export/rows.js';
import { NONE_VALUE, type WaitlistFilter } from '../../../src/shared/admin/waitlist-filter.js';
import { formatDateJoined } from '../../../src/shared/waitlist/display.js';
import { waitlistCsvChunks, waitlistCsvRecord } from '../../../src/shared/waitlist/csv.js';
import type { WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { itWhen, openTestDatabase, TEST_DIALECTS, withDatabase, type TestDatabase, type TestDialect } from '../../support/databases.js';
import { waitlistEntry } from '../../support/entries.js';

/**
 * The export's file (src/server/export): on PostgreSQL its rows come from a binary COPY (copy.ts),
 * elsewhere as entries, and its Date Joined texts from a cache (dates.ts). It must be byte for byte
 * the file the shared string writer makes from the entries the repository reads, with Intl's own
 * dates: here both are made from rows chosen to hit every rule (formula starts, quotes, commas,
 * line breaks, control characters, blank and non-ASCII white space, empty and missing location
 * parts, times around offset changes and before 2000, many rows on one instant), plus a few
 * thousand ordinary ones, in zones with odd offsets, with and without filters.
 */

const TRICKY_TEXT = [
  'plain',
  'with, comma',
  'with "quote"',
  'line\nbreak',
  'carriage\rreturn',
  'tab\there',
  '=SUM(A1)',
  '+1',
  '-1',
  '@cmd',
  '\tlead tab',
  ' =not a formula',
  '   ',
  '\u00a0',
  '\u00a0x',
  '\u3000',
  '\ufeff',
  '\u2003\u2003',
  'Zürich',
  'São Paulo',
  '東京',
  'Ḩawallī',
  '',
  'Ünïcödé, with comma',
  '\u0085',
  'x\u007f',
  'unit\u001fseparator',
  'record\u001eseparator',
];

const TIMES = [
  '2026-03-29T00:59:59.999Z', // Berlin: the last minute before summer time
  '2026-03-29T01:00:00.000Z',
  '2026-11-01T05:59:00.000Z', // New York: around the end of summer time
  '2026-11-01T06:00:30.000Z',
  '2026-10-04T15:29:59.000Z', // Lord Howe: the 30-minute change
  '2026-10-04T15:30:00.000Z',
  '1999-12-31T23:59:59.999Z', // before PostgreSQL's epoch
  '1937-06-30T23:59:00.000Z', // Amsterdam's offset with seconds
  '1919-03-01T12:00:00.123Z',
  '2026-11-25T21:30:15.123Z',
];

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'America/St_Johns', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Europe/Amsterdam'];

function rows(dialect: TestDialect): WaitlistEntry[] {
  const random = prng(42);
  const pick = <T,>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const out: WaitlistEntry[] = [];
  let n = 0;
  // Every tricky value in every text column, each with a tricky time.
  for (const text of TRICKY_TEXT) {
    for (const field of ['email', 'ip_address', 'city', 'region', 'country'] as const) {
      const entry = waitlistEntry({ email: `t${n}@example.com`, created_at: TIMES[n % TIMES.length]!, ip_address: '10.0.0.1', city: 'Berlin', region: 'Land Berlin', country: 'Germany' });
      // The address is unique in the table (case-insensitively), so a tricky one gets a suffix.
      entry[field] = field === 'email' ? `${text}${n}` : text;
      out.push(entry);
      n++;
    }
  }
  // Mixes: random NULL and tricky parts, times over a century.
  const start = Date.UTC(1925, 0, 1);
  const span = Date.UTC(2030, 0, 1) - start;
  // More than two batches of SQLite's 5,000 rows, so batches meet within ties and after fallbacks.
  for (let i = 0; i < 11_000; i++) {
    const part = () => (random() < 0.3 ? null : random() < 0.8 ? pick(['Berlin', 'Canada', 'Île-de-France', 'Tōkyō', 'Ontario']) : pick(TRICKY_TEXT));
    out.push(
      waitlistEntry({
        email: random() < 0.9 ? `user${i}@example.com` : `${pick(TRICKY_TEXT)}${i}@x.org`,
        created_at: new Date(start + Math.floor(random() * span)).toISOString(),
        ip_address: random() < 0.2 ? null : random() < 0.9 ? `192.168.${i % 256}.${i % 199}` : pick(TRICKY_TEXT),
        city: part(),
        region: part(),
        country: part(),
        utm_campaign: i % 3 === 0 ? 'spring' : null,
      }),
    );
  }
  // One hour of a 31st (whose start Date.parse reads), newest first a second and a minute apart,
  // with texts not in the canonical form among them: each row's time comes from its hour's start.
  for (let i = 0; i < 60; i++) {
    const two = (n: number) => String(n).padStart(2, '0');
    const created_at = `2026-01-31T23:${two(59 - i)}:${two(i)}.${String((i * 37) % 1000).padStart(3, '0')}Z`;
    out.push(waitlistEntry({ email: `hour${i}@example.com`, created_at, utm_campaign: 'hour' }), waitlistEntry({ email: `hour-tie${i}@example.com`, created_at, utm_campaign: 'hour' }));
  }
  // Texts that Date.parse reads in its own ways: hour 24 (the next day) and, on SQLite (PostgreSQL's
  // timestamptz refuses it), a 30th of February (in March), which sorts as text before a 1st of
  // March that it follows in time.
  const odd = ['2026-01-31T23:30:00Z', '2026-01-31T23:30:00.5Z', '2026-01-31T23:20:00.000+00:00', '2026-01-31T23:10', '2026-01-31T24:00:00.000Z'];
  if (dialect === 'sqlite') odd.push('2026-02-30T10:05:00.000Z', '2026-02-30T10:00:00.000Z', '2026-03-01T10:00:00.000Z');
  for (const [i, created_at] of odd.entries()) {
    out.push(waitlistEntry({ email: `odd-time${i}@example.com`, created_at, utm_campaign: 'hour' }));
  }
  // Two batches of plain rows (no separator anywhere, so they split into cells), about a hundred an
  // hour with a tie every ten: created_at read per hour across the batches' boundary.
  const plainStart = Date.UTC(2026, 4, 10, 12);
  for (let i = 0; i < 6_000; i++) {
    const created_at = new Date(plainStart - (i % 10 === 9 ? i - 1 : i) * 37_000).toISOString();
    out.push(waitlistEntry({ email: `plain${i}@example.com`, created_at, ip_address: `10.1.${i % 256}.${i % 97}`, city: 'Toronto', region: 'Ontario', country: 'Canada', utm_campaign: 'plain' }));
  }
  // On SQLite, a row whose id is NULL (a TEXT primary key may hold one there) beside a value with one
  // cell separator: the two must not pass for a row of the right shape (set in beforeAll).
  if (dialect === 'sqlite') {
    for (const [i, country] of ['Canada', 'Ger\u001fmany', 'Canada'].entries()) {
      out.push(waitlistEntry({ email: `null-id${i}@example.com`, created_at: `2026-04-0${i + 1}T10:00:00.000Z`, country, utm_campaign: 'null-id' }));
    }
  }
  // Ties on one instant (the order falls back to the id): one large group, and pairs.
  for (let i = 0; i < 50; i++) out.push(waitlistEntry({ email: `tie${i}@example.com`, created_at: '2026-06-01T12:00:00.000Z', country: 'Canada' }));
  for (let i = 0; i < 200; i++) {
    const at = new Date(Date.UTC(2026, 6, 1) + i * 60_000).toISOString();
    out.push(waitlistEntry({ email: `pairA${i}@example.com`, created_at: at }), waitlistEntry({ email: `pairB${i}@example.com`, created_at: at }));
  }
  return out;
}

async function collect(chunks: AsyncIterable<string | Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(parts);
}

/** The export's file of everything `filter` matches, as the export route writes it. */
async function exported(handle: DatabaseHandle, filter: WaitlistFilter, timeZone: string, onRows: (n: number) => void = () => {}): Promise<Buffer> {
  return collect(csvChunks(await exportRows(handle.db, { filter }), timeZone, {}, onRows));
}

/** The file written from the batches of a binary COPY's bytes, cut into `pieces`. */
async function fileOfCopy(pieces: Buffer[], timeZone: string): Promise<Buffer> {
  return collect(csvChunks(copyRows((async function* () { yield* pieces; })()), timeZone, {}, () => {}));
}

/** A binary COPY of the export's six columns holding `rows` (created_at as an ISO text). */
function binaryCopy(rows: Array<Array<string | null>>): Buffer {
  const header = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);
  const parts = [header];
  for (const row of rows) {
    const count = Buffer.alloc(2);
    count.writeInt16BE(row.length);
    parts.push(count);
    row.forEach((value, i) => {
      const length = Buffer.alloc(4);
      if (value === null) {
        length.writeInt32BE(-1);
        parts.push(length);
        return;
      }
      let bytes = Buffer.from(value);
      if (i === 1) {
        bytes = Buffer.alloc(8);
        bytes.writeBigInt64BE(BigInt(Date.parse(value) - Date.UTC(2000, 0, 1)) * 1000n);
      }
      length.writeInt32BE(bytes.length);
      parts.push(length, bytes);
    });
  }
  parts.push(Buffer.from([0xff, 0xff]));
  return Buffer.concat(parts);
}

describe('a row read from a binary COPY', () => {
  it('sees a control byte, a quote or a comma wherever it stands in a cell of any length', async () => {
    const mismatches: string[] = [];
    const odd = ['\u0000', '\u0001', '\t', '\n', '\r', '\u001f', '"', ',', '\u007f', '\u00a0', 'é'];
    for (let length = 1; length <= 19; length++) {
      for (let position = 0; position < length; position++) {
        for (const char of odd) {
          const text = 'abcdefghijklmnopqrstuvwxyz'.slice(0, length).split('');
          text[position] = char;
          const value = text.join('');
          for (const field of ['email', 'ip_address', 'city', 'country'] as const) {
            const entry = waitlistEntry({ email: 'someone@example.com', created_at: '2026-11-25T21:30:15.123Z', ip_address: '203.0.113.9', city: 'Berlin', region: 'Land Berlin', country: 'Germany' });
            entry[field] = value;
            const expected = waitlistCsvRecord(entry, formatDateJoined(entry.created_at, 'UTC'));
            const copy = binaryCopy([SPEC_EXPORT_COLUMNS.map((column) => entry[column])]);
            const actual = (await fileOfCopy([copy], 'UTC')).toString('utf8').split('\r\n').slice(1).join('\r\n');
            if (actual !== expected && mismatches.length < 5) mismatches.push(`${field} ${JSON.stringify(value)}: ${JSON.stringify(actual)} != ${JSON.stringify(expected)}`);
          }
        }
      }
    }
    expect(mismatches).toEqual([]);
  });
});

describe.each(TEST_DIALECTS)('the export file (%s)', (dialect) => {
  let database: TestDatabase;
  let handle: DatabaseHandle;
  let count = 0;

  beforeAll(async () => {
    database = await openTestDatabase(dialect);
    handle = database.handle;
    const all = rows(dialect);
    count = all.length;
    for (let i = 0; i < all.length; i += 500) await handle.db.insertInto('waitlist').values(all.slice(i, i + 500)).execute();
    if (dialect === 'sqlite') await handle.db.updateTable('waitlist').set({ id: null as unknown as string }).where('email', '=', 'null-id1@example.com').execute();
  }, 60_000);
  afterAll(async () => {
    await database?.close();
  });

  /** The COPY's SQL for `filter`. */
  const copySql = (filter: WaitlistFilter) => inlinePostgresParameters(exportRowsQuery(handle.db, filter));

  /** The binary COPY of what `filter` matches, as pg-copy-streams hands it over. */
  async function rawCopy(filter: WaitlistFilter): Promise<Buffer> {
    const client = await postgresPoolOf(handle.db)!.connect();
    try {
      return await collect(client.query(copyTo(`COPY (${copySql(filter)}) TO STDOUT (FORMAT binary)`)));
    } finally {
      client.release();
    }
  }

  /** The file the shared string writer makes from the entries the repository reads, with Intl's dates. */
  const reference = (filter: WaitlistFilter, timeZone: string) =>
    collect(waitlistCsvChunks(iterateMatchingWaitlist(handle.db, filter, [], 5000, SPEC_EXPORT_COLUMNS), timeZone));

  it.each(ZONES)('writes every row byte for byte as the string writer does (%s)', async (timeZone) => {
    let counted = 0;
    const file = await exported(handle, {}, timeZone, (n) => (counted += n));
    const expected = await reference({}, timeZone);
    expect(file.toString('utf8').split('\r\n').length).toBeGreaterThan(count);
    expect(file.equals(expected)).toBe(true);
    expect(counted).toBe(count);
  });

  it.each<[string, WaitlistFilter]>([
    ['a search', { q: 'user1' }],
    ['a domain search', { q: '@x.org' }],
    ["a search with LIKE's special characters and a quote", { q: "o'_%\\" }],
    ['a date range', { from: '2026-01-01', to: '2026-06-01' }],
    ['a country', { country: 'Canada' }],
    ['no country', { country: NONE_VALUE }],
    ['a campaign and a country', { campaign: 'spring', country: 'Berlin' }],
    ['the rows of one hour, in tied pairs', { campaign: 'hour' }],
    ['two batches of plain rows', { campaign: 'plain' }],
    ['a row without an id beside a separator (SQLite)', { campaign: 'null-id' }],
  ])('writes what %s matches, as the string writer does', async (_name, filter) => {
    expect((await exported(handle, filter, 'Europe/Berlin')).equals(await reference(filter, 'Europe/Berlin'))).toBe(true);
  });

  itWhen(dialect === 'postgres')('reads the COPY however its bytes are split', async () => {
    const raw = await rawCopy({ country: 'Canada' });
    const whole = await fileOfCopy([raw], 'UTC');
    expect(whole.equals(await reference({ country: 'Canada' }, 'UTC'))).toBe(true);
    for (const size of [1, 2, 3, 7, 19, 20, 1000]) {
      const pieces: Buffer[] = [];
      for (let i = 0; i < raw.length; i += size) pieces.push(raw.subarray(i, i + size));
      expect((await fileOfCopy(pieces, 'UTC')).equals(whole), `split every ${size} bytes`).toBe(true);
    }
    // A stream cut short is an error, never a file that looks complete.
    await expect(fileOfCopy([raw.subarray(0, raw.length - 2)], 'UTC')).rejects.toThrow(/trailer/);
    await expect(fileOfCopy([Buffer.from('this is not a COPY in binary format')], 'UTC')).rejects.toThrow(/binary/);
  });

  /** The socket pg reads a client's connection through. */
  const socketOf = (client: pg.ClientBase) => (client as unknown as { connection: { stream: net.Socket } }).connection.stream;

  itWhen(dialect === 'postgres')('hands the connection back to pg after the COPY, or after an error part way', async () => {
    const client = await postgresPoolOf(handle.db)!.connect();
    let usable = false;
    try {
      const body = await collect(csvChunks(copyBatches(client, copySql({ country: 'Canada' })), 'UTC', {}, () => {}));
      expect(body.equals(await reference({ country: 'Canada' }, 'UTC'))).toBe(true);
      expect((await client.query<{ n: number }>('SELECT 1 AS n')).rows).toEqual([{ n: 1 }]);
      // A row that fails after thousands were sent: the error, and the connection still usable.
      const failing = copyBatches(
        client,
        `SELECT email, created_at, ip_address, city, region, CASE WHEN n > 5000 THEN (1 / (n - n))::text ELSE country END
           FROM (SELECT *, row_number() OVER (ORDER BY created_at DESC, id DESC) AS n FROM waitlist) w ORDER BY n`,
      );
      await expect(collect(csvChunks(failing, 'UTC', {}, () => {}))).rejects.toThrow(/division by zero/);
      expect((await client.query<{ n: number }>('SELECT 2 AS n')).rows).toEqual([{ n: 2 }]);
      usable = true;
    } finally {
      // A connection left mid-COPY by a failed test is closed, not handed to the next one.
      client.release(!usable);
    }
  });

  itWhen(dialect === 'postgres')('writes the same file for a reader that takes its time', async () => {
    const client = await postgresPoolOf(handle.db)!.connect();
    let complete = false;
    try {
      const total = (await rawCopy({})).length;
      const socket = socketOf(client);
      const readBefore = socket.bytesRead;
      const parts: Buffer[] = [];
      for await (const chunk of csvChunks(copyBatches(client, copySql({})), 'Europe/Berlin', {}, () => {})) {
        if (parts.length === 1) {
          // While the first rows are not taken up, the socket is not read to the end.
          await sleep(200);
          expect(socket.bytesRead - readBefore).toBeLessThan(total / 2);
        }
        parts.push(Buffer.from(chunk));
        await sleep(1);
      }
      expect(parts.length).toBeGreaterThan(3);
      expect(Buffer.concat(parts).equals(await reference({}, 'Europe/Berlin'))).toBe(true);
      expect((await client.query<{ n: number }>('SELECT 3 AS n')).rows).toEqual([{ n: 3 }]);
      complete = true;
    } finally {
      client.release(!complete);
    }
  });

  itWhen(dialect === 'postgres')('lets go of its connection when the reader stops early, or never starts', async () => {
    const pool = postgresPoolOf(handle.db)!;
    // More exports abandoned than the pool has connections: a leak would leave the last query waiting.
    for (let i = 0; i < 12; i++) {
      const copied = await exportRows(handle.db, { filter: {} });
      if (i % 2 === 0) await copied.next();
      await copied.return!();
    }
    expect(pool.totalCount).toBeLessThanOrEqual(10);
    const { rows: result } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM waitlist');
    expect(Number(result[0]!.n)).toBe(count);
    // Connections closed mid-COPY are not handed out again.
    expect((await exported(handle, {}, 'UTC')).length).toBeGreaterThan(0);
    // An export that matches nothing ends its COPY cleanly and gives its connection back to the pool.
    const pooled = pool.totalCount;
    const empty = await exported(handle, { q: 'no-such-address-anywhere' }, 'UTC');
    expect(empty.toString('utf8')).toBe(`\ufeff${'Email,Date Joined,IP Address,Location'}\r\n`);
    expect(pool.totalCount).toBe(pooled);
    expect(pool.idleCount).toBe(pooled);
  });

  itWhen(dialect === 'postgres')('leaves a database whose text is not UTF-8 to the entries', async () => {
    const name = `${new URL(database.url!).pathname.slice(1)}_latin1`;
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE "${name}" ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`);
      const latin1 = openDatabase({ dialect: 'postgres', connectionString: withDatabase(database.url!, name) });
      try {
        expect(await copyExport(latin1.db, {})).toBeNull();
        expect(postgresPoolOf(latin1.db)!.idleCount).toBe(postgresPoolOf(latin1.db)!.totalCount);
      } finally {
        await latin1.close();
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  });

  itWhen(dialect === 'sqlite')('COPY is not offered (entries serve SQLite)', async () => {
    expect(await copyExport(handle.db, {})).toBeNull();
  });
});
