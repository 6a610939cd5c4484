import { describe, expect, it } from 'vitest';
import { DateJoinedTexts } from '../../../src/server/export/dates.js';
import { formatDateJoined } from '../../../src/shared/waitlist/display.js';
import { intlDateJoined as exact } from '../../support/intl-date-joined.js';

/**
 * The exhaustive sweep of date-joined-format.test.ts (run by `npm run test:slow`): the table's
 * formatDateJoined and the export's DateJoinedTexts against Intl in every zone Intl knows.
 */
describe('Date Joined in every zone', () => {
  it('reads exactly as Intl does in every zone Intl knows, every day of three years and every quarter hour of the days an offset changes', () => {
    const mismatches: string[] = [];
    const from = Date.parse('2025-01-01T00:00:00Z');
    const until = Date.parse('2028-01-01T00:00:00Z');
    for (const zone of Intl.supportedValuesOf('timeZone')) {
      const intl = exact(zone);
      const texts = new DateJoinedTexts(zone);
      const offsetText = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
      const offset = (time: number) => offsetText.formatToParts(new Date(time)).find((part) => part.type === 'timeZoneName')?.value;
      const check = (time: number) => {
        const expected = intl.format(new Date(time));
        const actual = texts.at(time);
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

  it('reads exactly as Intl does in the first centuries, before year 1 and across 1582 (the Gregorian calendar)', () => {
    for (const zone of ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata']) {
      const intl = exact(zone);
      const texts = new DateJoinedTexts(zone);
      const mismatches: string[] = [];
      let checks = 0;
      const check = (time: number) => {
        const expected = intl.format(new Date(time));
        for (const actual of checks++ % 50 === 0 ? [formatDateJoined(new Date(time).toISOString(), zone), texts.at(time)] : [texts.at(time)]) {
          if (actual !== expected && mismatches.length < 5) mismatches.push(`${new Date(time).toISOString()}: ${actual} != ${expected}`);
        }
      };
      for (let t = Date.parse('-000100-01-01T00:00:00Z'); t < Date.parse('0200-01-01T00:00:00Z'); t += 3 * 86_400_000 + 3_659_013) check(t);
      for (let t = Date.parse('1500-01-01T00:00:00Z'); t < Date.parse('1700-01-01T00:00:00Z'); t += 3 * 86_400_000 + 3_659_013) check(t);
      for (const day of ['0000-12-31', '0001-01-01', '1582-10-04', '1582-10-15']) {
        const start = Date.parse(`${day}T00:00:00Z`) - 86_400_000;
        for (let t = start + 3 * 86_400_000 - 900_000; t >= start; t -= 900_000) check(t + 60_000);
      }
      expect(mismatches, zone).toEqual([]);
    }
  });
});
