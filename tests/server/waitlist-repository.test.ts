import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isUniqueViolation } from '../../src/server/db/database.js';
import {
  countWaitlistEntries,
  deleteWaitlistEntries,
  findWaitlistEntryByEmail,
  insertWaitlistEntry,
  listWaitlistEntries,
  type NewWaitlistEntry,
} from '../../src/server/waitlist/repository.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});
afterEach(async () => {
  await t.close();
});

function entry(n: number, createdAt: string): NewWaitlistEntry {
  return { id: randomUUID(), email: `user${n}@example.com`, createdAt, ipAddress: null, country: null, city: null, region: null };
}

describe('waitlist repository', () => {
  it('inserts, finds case-insensitively and counts', async () => {
    const db = t.app.database.db;
    await insertWaitlistEntry(db, { ...entry(1, '2026-01-01T00:00:00.000Z'), ipAddress: '8.8.8.8', country: 'United States' });
    expect(await countWaitlistEntries(db)).toBe(1);
    expect(await findWaitlistEntryByEmail(db, 'USER1@example.com')).toMatchObject({
      email: 'user1@example.com',
      created_at: '2026-01-01T00:00:00.000Z',
      ip_address: '8.8.8.8',
      country: 'United States',
      city: null,
    });
  });

  it('rejects a second row for the same address in any case with a unique violation', async () => {
    const db = t.app.database.db;
    await insertWaitlistEntry(db, entry(1, '2026-01-01T00:00:00.000Z'));
    const err = await insertWaitlistEntry(db, { ...entry(1, '2026-01-02T00:00:00.000Z'), email: 'USER1@EXAMPLE.COM' }).catch((e: unknown) => e);
    expect(isUniqueViolation(err)).toBe(true);
  });

  it('lists newest first with keyset pages, ties broken by id', async () => {
    const db = t.app.database.db;
    const same = '2026-01-02T00:00:00.000Z';
    const all = [entry(1, '2026-01-01T00:00:00.000Z'), entry(2, same), entry(3, same), entry(4, '2026-01-03T00:00:00.000Z')];
    for (const e of all) await insertWaitlistEntry(db, e);
    const first = await listWaitlistEntries(db, { limit: 2 });
    const last = first.at(-1)!;
    const second = await listWaitlistEntries(db, { limit: 2, after: { createdAt: last.created_at, id: last.id } });
    const ids = [...first, ...second].map((e) => e.id);
    const tied = [all[1]!.id, all[2]!.id].sort().reverse();
    expect(ids).toEqual([all[3]!.id, ...tied, all[0]!.id]);
  });

  it('deletes the given ids and returns the rows that existed', async () => {
    const db = t.app.database.db;
    const a = entry(1, '2026-01-01T00:00:00.000Z');
    const b = entry(2, '2026-01-02T00:00:00.000Z');
    await insertWaitlistEntry(db, a);
    await insertWaitlistEntry(db, b);
    const deleted = await deleteWaitlistEntries(db, [a.id, randomUUID()]);
    expect(deleted.map((e) => e.id)).toEqual([a.id]);
    expect(await deleteWaitlistEntries(db, [])).toEqual([]);
    expect(await countWaitlistEntries(db)).toBe(1);
  });
});
