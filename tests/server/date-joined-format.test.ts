import { describe, expect, it } from 'vitest';
import { formatDateJoined } from '../../src/shared/waitlist/display.js';
import { intlDateJoined as exact } from '../support/intl-date-joined.js';

/**
 * formatDateJoined against Intl's own en-US format, on a few days of the first centuries, every ISO
 * form, and text that is not a time. The sweeps over every minute around offset changes and over
 * every zone are *.slow.test.ts files beside this one (`npm run test:slow`).
 */
describe('formatDateJoined', () => {
  it('reads exactly as Intl does in the first centuries, before year 1 and across 1582 (the Gregorian calendar)', () => {
    for (const zone of ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata']) {
      const intl = exact(zone);
      const mismatches: string[] = [];
      const check = (time: number) => {
        const expected = intl.format(new Date(time));
        const actual = formatDateJoined(new Date(time).toISOString(), zone);
        if (actual !== expected && mismatches.length < 5) mismatches.push(`${new Date(time).toISOString()}: ${actual} != ${expected}`);
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

  it('reads every ISO form as Date.parse does, the canonical one included, with zones taking turns', () => {
    const forms = [
      '2026-11-25T21:30:15.123Z',
      '2026-11-25T21:30:15Z',
      '2026-11-25T21:30:15.123+05:45',
      '2026-11-25 21:30:15.123Z',
      '2024-02-29T23:59:59.999Z',
      '2026-01-31T23:59:59.999Z',
      '0050-06-01T12:00:00.000Z',
      '2026-13-01T00:00:00.000Z',
      '2026-11-25T24:00:00.000Z',
      '2026-11-25T21:60:00.000Z',
      '2026-11-2xT21:30:15.123Z',
    ];
    for (const iso of forms) {
      // The same instant in one zone, then another, then the first again (the previous block is reused only for its own zone).
      for (const zone of ['UTC', 'Asia/Kathmandu', 'UTC', 'America/St_Johns']) {
        const time = Date.parse(iso);
        if (Number.isNaN(time)) expect(() => formatDateJoined(iso, zone), iso).toThrow(RangeError);
        else expect(formatDateJoined(iso, zone), `${iso} in ${zone}`).toBe(exact(zone).format(new Date(time)));
      }
    }
  });

  it('treats text that is not a time as Intl does (a RangeError)', () => {
    expect(() => exact('UTC').format(new Date('not a date'))).toThrow(RangeError);
    expect(() => formatDateJoined('not a date', 'UTC')).toThrow(RangeError);
  });
});
