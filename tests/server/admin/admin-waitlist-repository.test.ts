import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../../src/server/db/database.js';
import { decodeCursor, deleteWaitlistEntries, encodeCursor } from '../../../src/server/admin/repository.js';
import { countWaitlist } from '../../../src/server/db/waitlist-filter.js';
import { iterateAllWaitlist, listWaitlistPage } from '../../../src/server/db/waitlist-keyset.js';
import { iterateSelectedWaitlist } from '../../../src/server/export/queries.js';
import type { WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { NO_ATTRIBUTION } from '../../../src/shared/waitlist/attribution.js';
import { openTestDatabase, TEST_DIALECTS, type TestDatabase, type TestDialect } from '../../support/databases.js';
import { NO_CONSENT_RECORD } from '../../../src/shared/waitlist/entry.js';

function row(createdAt: string, n: number, over: Partial<WaitlistEntry> = {}): WaitlistEntry {
  return { id: randomUUID(), email: `u${n}.${randomUUID().slice(0, 6)}@example.com`, created_at: createdAt, ip_address: null, country: null, city: null, region: null, ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION, ...over };
}

/** The order the API promises: created_at DESC, id DESC. */
function newestFirst(a: WaitlistEntry, b: WaitlistEntry): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

describe.each(TEST_DIALECTS)('admin waitlist repository (%s)', (dialect: TestDialect) => {
  let database: TestDatabase;
  let handle: DatabaseHandle;
  const insert = async (rows: WaitlistEntry[]) => {
    for (let i = 0; i < rows.length; i += 1000) await handle.db.insertInto('waitlist').values(rows.slice(i, i + 1000)).execute();
  };

  beforeAll(async () => {
    database = await openTestDatabase(dialect);
    handle = database.handle;
  });
  afterAll(async () => {
    await database?.close();
  });
  beforeEach(async () => {
    await sql`DELETE FROM waitlist`.execute(handle.db);
  });

  it('pages 2,500 rows newest first with no gaps or duplicates, ties broken by id', async () => {
    const rows: WaitlistEntry[] = [];
    const base = Date.UTC(2026, 0, 1);
    for (let i = 0; i < 2500; i++) {
      // Groups of 7 rows share a timestamp, so page boundaries fall inside ties.
      rows.push(row(new Date(base + Math.floor(i / 7) * 1000).toISOString(), i));
    }
    await insert(rows);
    expect(await countWaitlist(handle.db)).toBe(2500);

    const seen: WaitlistEntry[] = [];
    let after = null;
    let pages = 0;
    do {
      const page = await listWaitlistPage(handle.db, { limit: 1000, after });
      seen.push(...page.entries);
      after = page.next ? decodeCursor(encodeCursor(page.next)) : null;
      pages++;
    } while (after);
    expect(pages).toBe(3);
    expect(seen.map((e) => e.id)).toEqual([...rows].sort(newestFirst).map((e) => e.id));
  });

  it('keeps microsecond timestamps apart (rows written by now() in an adopted PostgreSQL database)', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID()].sort();
    if (handle.dialect === 'postgres') {
      await sql`INSERT INTO waitlist (id, email, created_at) VALUES
        (${ids[0]}, 'a@x.com', '2026-01-01T00:00:00.123456Z'),
        (${ids[1]}, 'b@x.com', '2026-01-01T00:00:00.123400Z'),
        (${ids[2]}, 'c@x.com', '2026-01-01T00:00:00.123000Z')`.execute(handle.db);
    } else {
      await insert([
        row('2026-01-01T00:00:00.123Z', 1, { id: ids[0]! }),
        row('2026-01-01T00:00:00.123Z', 2, { id: ids[1]! }),
        row('2026-01-01T00:00:00.123Z', 3, { id: ids[2]! }),
      ]);
    }
    const got: string[] = [];
    let after = null;
    do {
      const page = await listWaitlistPage(handle.db, { limit: 1, after });
      got.push(...page.entries.map((e) => e.id));
      after = page.next;
    } while (after);
    expect(got).toEqual(handle.dialect === 'postgres' ? [ids[0], ids[1], ids[2]] : [ids[2], ids[1], ids[0]]);
  });

  it('iterates everything and a selection newest first, in batches', async () => {
    const rows = Array.from({ length: 23 }, (_, i) => row(new Date(Date.UTC(2026, 0, 1) + (i % 5) * 60_000).toISOString(), i));
    await insert(rows);
    const sorted = [...rows].sort(newestFirst);

    const batches: WaitlistEntry[][] = [];
    for await (const b of iterateAllWaitlist(handle.db, 10)) batches.push(b);
    expect(batches.map((b) => b.length)).toEqual([10, 10, 3]);
    expect(batches.flat().map((e) => e.id)).toEqual(sorted.map((e) => e.id));

    const pick = [rows[3]!, rows[9]!, rows[0]!, rows[17]!, rows[5]!];
    const selected: WaitlistEntry[][] = [];
    for await (const b of iterateSelectedWaitlist(handle.db, [...pick.map((p) => p.id), randomUUID(), pick[0]!.id], 2)) selected.push(b);
    expect(selected.map((b) => b.length)).toEqual([2, 2, 1]);
    expect(selected.flat().map((e) => e.id)).toEqual([...pick].sort(newestFirst).map((e) => e.id));
  });

  it('deletes only existing rows, returns them newest first, and handles more ids than one statement takes', async () => {
    const rows = Array.from({ length: 12_000 }, (_, i) => row(new Date(Date.UTC(2026, 0, 1) + i).toISOString(), i));
    await insert(rows);
    const doomed = rows.slice(0, 11_000);
    const deleted = await handle.db
      .transaction()
      .execute((trx) => deleteWaitlistEntries(trx, [...doomed.map((r) => r.id), randomUUID(), randomUUID()]));
    expect(deleted).toHaveLength(11_000);
    expect(deleted.map((e) => e.id)).toEqual([...doomed].sort(newestFirst).map((e) => e.id));
    expect(deleted[0]).toEqual({ ...doomed[doomed.length - 1]! });
    expect(await countWaitlist(handle.db)).toBe(1000);
  });
});

describe('cursor encoding', () => {
  it('round-trips', () => {
    const c = { createdAt: '2026-01-01T00:00:00.123456Z', id: randomUUID() };
    expect(decodeCursor(encodeCursor(c))).toEqual(c);
  });

  it('accepts UTC offsets up to ±15:59', () => {
    for (const createdAt of ['2026-01-01T00:00:00+14:00', '2026-01-01T00:00:00-1559', '2026-01-01 00:00:00+05']) {
      const c = { createdAt, id: randomUUID() };
      expect(decodeCursor(encodeCursor(c))).toEqual(c);
    }
  });

  it.each([
    '',
    'not a cursor!',
    Buffer.from('hello').toString('base64url'),
    Buffer.from('["2026-01-01T00:00:00Z"]').toString('base64url'),
    Buffer.from('["2026-13-01T00:00:00Z","00000000-0000-4000-8000-000000000000"]').toString('base64url'),
    Buffer.from('["2026-02-30T00:00:00Z","00000000-0000-4000-8000-000000000000"]').toString('base64url'),
    Buffer.from('["2026-01-01T00:00:00Z","1 OR 1=1"]').toString('base64url'),
    // UTC offsets PostgreSQL cannot parse.
    Buffer.from('["2026-01-01T00:00:00+99:99","00000000-0000-4000-8000-000000000000"]').toString('base64url'),
    Buffer.from('["2026-01-01T00:00:00-16","00000000-0000-4000-8000-000000000000"]').toString('base64url'),
    Buffer.from('["2026-01-01T00:00:00+00:60","00000000-0000-4000-8000-000000000000"]').toString('base64url'),
    Buffer.from('[1,"00000000-0000-4000-8000-000000000000"]').toString('base64url'),
    'A'.repeat(300),
  ])('rejects %j', (value) => {
    expect(decodeCursor(value)).toBeNull();
  });
});
