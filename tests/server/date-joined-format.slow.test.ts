import { describe, expect, it } from 'vitest';
import { formatDateJoined } from '../../src/shared/waitlist/display.js';
import { intlDateJoined as exact } from '../support/intl-date-joined.js';

/**
 * The exhaustive sweep of date-joined-format.test.ts (run by `npm run test:slow`): formatDateJoined
 * against Intl in every zone Intl knows.
 */
describe('formatDateJoined in every zone', () => {
  it('reads exactly as Intl does in every zone Intl knows, every day of three years and every quarter hour of the days an offset changes', () => {
    const mismatches: string[] = [];
    const from = Date.parse('2025-01-01T00:00:00Z');
    const until = Date.parse('2028-01-01T00:00:00Z');
    for (const zone of Intl.supportedValuesOf('timeZone')) {
      const intl = exact(zone);
      const offsetText = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
      const offset = (time: number) => offsetText.formatToParts(new Date(time)).find((part) => part.type === 'timeZoneName')?.value;
      const check = (time: number) => {
        const expected = intl.format(new Date(time));
        const actual = formatDateJoined(new Date(time).toISOString(), zone);
        if (actual !== expected && mismatches.length < 10) mismatches.push(`${zone} ${new Date(time).toISOString()}: ${actual} != ${expected}`);
      };
      // Newest first, as an export reads them.
      let next = offset(until);
      for (let day = until - 86_400_000; day >= from; day -= 86_400_000) {
        const start = offset(day);
        const changes = start !== next;
        next = start;
        if (changes) {
          for (let t = day + 86_400_000 - 900_000; t >= day; t -= 900_000) {
            check(t + 899_999);
            check(t + 60_000);
            check(t);
          }
        } else {
          check(day + ((day / 1000) * 7919) % 86_400_000);
        }
      }
    }
    expect(mismatches).toEqual([]);
    // ~2 million Intl calls: 7 s alone on two cores, more beside the other test files.
  }, 120_000);
});
