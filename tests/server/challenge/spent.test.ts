import { afterEach, describe, expect, it } from 'vitest';
import { spentChallenges } from '../../../src/server/challenge/spent.js';
import {
  openTestDatabase,
  TEST_DIALECTS,
  type TestDatabase,
  type TestDialect,
} from '../../support/databases.js';

/** The spent-challenge store (challenge/spent.ts): each solution is good once; expired ones are purged. */
describe.each(TEST_DIALECTS)(
  'spent challenges (%s)',
  (dialect: TestDialect) => {
    let t: TestDatabase | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });

    const rows = async () =>
      (
        await t!.handle.db
          .selectFrom('signup_challenges_spent')
          .select(['signature', 'expires_at'])
          .orderBy('signature')
          .execute()
      ).map((r) => [r.signature, Number(r.expires_at)]);

    it('spends a solution once, whether repeated in one write, in a later one, or in a write beside another', async () => {
      t = await openTestDatabase(dialect);
      const spent = spentChallenges(t.handle.db);
      const expires = Math.floor(Date.now() / 1000) + 600;
      // One turn of the event loop: one write; the repeat in it is refused.
      expect(
        await Promise.all([
          spent.spend('a', expires),
          spent.spend('b', expires),
          spent.spend('a', expires),
        ]),
      ).toEqual([true, true, false]);
      expect(await spent.spend('b', expires)).toBe(false);
      // Spends that arrive while a write is under way: their own write, after it.
      const first = spent.spend('c', expires);
      await new Promise((resolve) => setImmediate(resolve));
      expect(
        await Promise.all([
          first,
          spent.spend('c', expires),
          spent.spend('d', expires),
        ]),
      ).toEqual([true, false, true]);
      expect(await rows()).toEqual([
        ['a', expires],
        ['b', expires],
        ['c', expires],
        ['d', expires],
      ]);
    });

    it('deletes the expired solutions, at most once a minute, with a write', async () => {
      t = await openTestDatabase(dialect);
      let now = Date.parse('2026-12-01T10:00:00Z');
      const spent = spentChallenges(t.handle.db, () => now);
      const second = Math.floor(now / 1000);
      expect(await spent.spend('old', second + 30)).toBe(true);
      expect(await spent.spend('new', second + 600)).toBe(true);
      now += 59_000;
      expect(await spent.spend('later', second + 600)).toBe(true);
      expect((await rows()).map(([signature]) => signature)).toEqual([
        'later',
        'new',
        'old',
      ]);
      now += 2_000; // 61 s after the first write's purge: 'old' expired 31 s ago
      expect(await spent.spend('last', second + 600)).toBe(true);
      expect((await rows()).map(([signature]) => signature)).toEqual([
        'last',
        'later',
        'new',
      ]);
    });
  },
);
