import { afterEach, describe, expect, it } from 'vitest';
import { solutionSpender } from '../../../src/server/challenge/spent.js';
import {
  openTestDatabase,
  TEST_DIALECTS,
  type TestDatabase,
  type TestDialect,
} from '../../support/databases.js';

/** The spent-solution store (challenge/spent.ts): each solution is good once, in the caller's transaction; expired ones are purged. */
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

    it('spends a solution once, whether repeated in one call or in a later one, and only if its transaction commits', async () => {
      t = await openTestDatabase(dialect);
      const db = t.handle.db;
      const spender = solutionSpender(db);
      const expiresAt = Math.floor(Date.now() / 1000) + 600;
      const s = (signature: string) => ({ signature, expiresAt });
      const spend = (...signatures: string[]) => db.transaction().execute((trx) => spender.spend(trx, signatures.map(s)));
      expect(await spend('a', 'b', 'a')).toEqual([true, true, false]);
      expect(await spend('b', 'c')).toEqual([false, true]);
      // Rolled back: not spent.
      await expect(
        db.transaction().execute(async (trx) => {
          expect(await spender.spend(trx, [s('d')])).toEqual([true]);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await spend('d')).toEqual([true]);
      expect(await rows()).toEqual([
        ['a', expiresAt],
        ['b', expiresAt],
        ['c', expiresAt],
        ['d', expiresAt],
      ]);
    });

    it('deletes the expired solutions, at most once a minute, with a spend', async () => {
      t = await openTestDatabase(dialect);
      const db = t.handle.db;
      let now = Date.parse('2026-12-01T10:00:00Z');
      const spender = solutionSpender(db, () => now);
      const spend = (signature: string, expiresAt: number) => db.transaction().execute((trx) => spender.spend(trx, [{ signature, expiresAt }]));
      const second = Math.floor(now / 1000);
      expect(await spend('old', second + 30)).toEqual([true]);
      expect(await spend('new', second + 600)).toEqual([true]);
      now += 59_000;
      expect(await spend('later', second + 600)).toEqual([true]);
      expect((await rows()).map(([signature]) => signature)).toEqual([
        'later',
        'new',
        'old',
      ]);
      now += 2_000; // 61 s after the first spend's purge: 'old' expired 31 s ago
      expect(await spend('last', second + 600)).toEqual([true]);
      expect((await rows()).map(([signature]) => signature)).toEqual([
        'last',
        'later',
        'new',
      ]);
    });
  },
);
