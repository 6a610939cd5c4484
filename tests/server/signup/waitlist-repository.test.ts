import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isUniqueViolation } from '../../../src/server/db/database.js';
import { countWaitlist } from '../../../src/server/db/waitlist-filter.js';
import { findWaitlistEntryByEmail } from '../../../src/server/db/waitlist-entries.js';
import { insertWaitlistEntry } from '../../../src/server/signup/repository.js';
import type { WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { NO_ATTRIBUTION } from '../../../src/shared/waitlist/attribution.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';
import { NO_CONSENT_RECORD } from '../../../src/shared/waitlist/entry.js';

function entry(n: number, createdAt: string): WaitlistEntry {
  return { id: randomUUID(), email: `user${n}@example.com`, created_at: createdAt, ip_address: null, country: null, city: null, region: null, ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION };
}

describe.each(TEST_DIALECTS)('waitlist repository (%s)', (dialect: TestDialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({}, { dialect });
  });
  afterEach(async () => {
    await t?.close();
  });

  it('inserts, finds case-insensitively and counts', async () => {
    const db = t.app.database.db;
    await insertWaitlistEntry(db, { ...entry(1, '2026-01-01T00:00:00.000Z'), ip_address: '8.8.8.8', country: 'United States' });
    expect(await countWaitlist(db)).toBe(1);
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
});
