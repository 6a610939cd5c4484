import { describe, expect, it } from 'vitest';
import { DateJoinedTexts } from '../../../src/server/export/dates.js';
import { formatDateJoined } from '../../../src/shared/waitlist/display.js';
import { intlDateJoined as exact } from '../../support/intl-date-joined.js';

/**
 * The sweep over every minute around offset changes of date-joined-format.test.ts (run by
 * `npm run test:slow`): the table's formatDateJoined and the export's DateJoinedTexts against Intl.
 */
const ZONES = [
  undefined,
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'America/St_Johns',
  'Australia/Lord_Howe',
  'Asia/Kathmandu',
  'Pacific/Chatham',
  'Africa/Monrovia',
  'Europe/Amsterdam',
  'Asia/Kolkata',
  // Local mean times with seconds that changed to whole offsets inside a quarter hour.
  'Africa/Ndjamena',
  'America/Anchorage',
  'America/Glace_Bay',
  'Pacific/Gambier',
  // Whole days skipped across the date line (Kiritimati 1994-12-31, Apia 2011-12-30).
  'Pacific/Kiritimati',
  'Pacific/Apia',
];

describe('Date Joined around offset changes', () => {
  it.each(ZONES)('reads exactly as Intl does over a century and every minute around offset changes (%s)', (zone) => {
    const intl = exact(zone);
    const texts = new DateJoinedTexts(zone);
    const mismatches: string[] = [];
    let checks = 0;
    const check = (time: number) => {
      const iso = new Date(time).toISOString();
      const expected = intl.format(new Date(time));
      // formatDateJoined makes a formatter per call (~0.1 ms): every 50th time is asked of it too.
      for (const actual of checks++ % 50 === 0 ? [formatDateJoined(iso, zone), texts.at(time)] : [texts.at(time)]) {
        if (actual !== expected && mismatches.length < 5) mismatches.push(`${iso}: ${actual} != ${expected}`);
      }
    };
    const days = ['1900-08-20', '1902-06-15', '1911-12-31', '1912-10-01', '1919-03-01', '1937-07-01', '1989-04-02', '1994-10-30', '2026-03-29', '2026-04-05', '2026-10-04', '2026-10-25', '2026-11-01', '1994-12-31', '2011-12-30'];
    // Every minute (and its last millisecond) of the days around known changes, newest first as an
    // export reads them (a new hour is met at its end), before anything else fills the cache.
    for (const day of days) {
      const start = Date.parse(`${day}T00:00:00Z`) - 86_400_000;
      for (let t = start + 3 * 86_400_000 - 60_000; t >= start; t -= 60_000) {
        check(t + 59_999);
        check(t);
      }
    }
    // A century and more in uneven steps (every hour of the day and second of the minute comes up).
    for (let t = Date.parse('1895-01-01T00:00:00Z'); t < Date.parse('2030-01-01T00:00:00Z'); t += 86_400_000 + 3_659_013) check(t);
    // The same days oldest first, with the blocks cached.
    for (const day of days) {
      const start = Date.parse(`${day}T00:00:00Z`) - 86_400_000;
      for (let t = start; t < start + 3 * 86_400_000; t += 60_000) {
        check(t);
        check(t + 59_999);
      }
    }
    expect(mismatches).toEqual([]);
  });
});
