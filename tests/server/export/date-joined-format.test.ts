import { describe, expect, it } from 'vitest';
import { DateJoinedTexts } from '../../../src/server/export/dates.js';
import { formatDateJoined } from '../../../src/shared/waitlist/display.js';
import { intlDateJoined as exact } from '../../support/intl-date-joined.js';

/**
 * Date Joined as the admin table writes it (formatDateJoined) and as the export writes it (its
 * texts made a UTC hour at a time, export/dates.ts, instead of calling Intl for every row). Both
 * must read exactly like Intl's own en-US format, in every zone, including those whose offset
 * changed at odd times: St. John's (changes at 00:01 local), Lord Howe (30-minute DST), Kathmandu
 * and Chatham (:45 offsets), and Monrovia and Amsterdam (offsets with seconds before 1940). The
 * sweeps over every minute around offset changes and over every zone are *.slow.test.ts files
 * beside this one (`npm run test:slow`).
 */
describe('formatDateJoined', () => {


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
        const texts = new DateJoinedTexts(zone);
        if (Number.isNaN(time)) {
          expect(() => formatDateJoined(iso, zone), iso).toThrow(RangeError);
          expect(() => texts.at(time), iso).toThrow(RangeError);
        } else {
          expect(formatDateJoined(iso, zone), `${iso} in ${zone}`).toBe(exact(zone).format(new Date(time)));
          expect(texts.at(time), `${iso} in ${zone}`).toBe(exact(zone).format(new Date(time)));
        }
      }
    }
  });

  it('treats text that is not a time as Intl does (a RangeError)', () => {
    expect(() => exact('UTC').format(new Date('not a date'))).toThrow(RangeError);
    expect(() => formatDateJoined('not a date', 'UTC')).toThrow(RangeError);
  });
});
