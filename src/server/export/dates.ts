import { zoneOffsets, type ZoneOffsets } from '../../shared/time-zone.js';
import { dateJoinedFormat } from '../../shared/waitlist/display.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const MINUTES = Array.from({ length: 60 }, (_, m) => String(m).padStart(2, '0'));
/** Intl writes years before 1 with an era that zoneOffsets does not read: those hours are formatted row by row. */
const YEAR_1 = new Date(0).setUTCFullYear(1, 0, 1);

/**
 * Date Joined for one export: the admin table's text (dateJoinedFormat) of each row's created_at in
 * the export's zone. Intl costs 1-3 µs a call, more than the rest of a row; rows come newest first,
 * so the texts are made a UTC hour at a time from Intl's readings of that hour:
 * - the zone's offset at the hour's start and at the next hour's (zoneOffsets): when they are the
 *   same whole number of minutes, the hour's instants read as the UTC text of the instant moved by
 *   that offset; otherwise (a change in that hour, or seconds, as local mean times had) Intl formats each row;
 * - the UTC text of the moved hour's start: within a UTC hour only the minute changes ("Nov 22, 2026, 06:" … " AM").
 * Only the last hour's readings are kept. Correctness rests on Intl's own readings and on no zone
 * changing its offset and back within an hour.
 */
export class DateJoinedTexts {
  private readonly format: Intl.DateTimeFormat;
  private readonly utc = dateJoinedFormat('UTC');
  private readonly offsetAt: ZoneOffsets;
  private hour = Number.NaN;
  /** The zone's offset at `hour`'s start, which is the next hour's end for rows coming newest first. */
  private hourStart = Number.NaN;
  /** The offset all through `hour`, or NaN: format each row. */
  private hourOffset = Number.NaN;
  private minute = Number.NaN;
  private text = '';
  /** The UTC hour last written, and its text before and after the minute (null: Intl did not write "00" there). */
  private utcHour = Number.NaN;
  private around: readonly [string, string] | null = null;

  constructor(timeZone?: string) {
    this.format = dateJoinedFormat(timeZone);
    this.offsetAt = zoneOffsets(timeZone);
  }

  /** The text of `ms` milliseconds since the epoch (a RangeError when it is not a time, as Intl's). */
  at(ms: number): string {
    const hour = Math.floor(ms / HOUR_MS);
    if (hour !== this.hour) {
      const end = hour + 1 === this.hour ? this.hourStart : this.offsetAt((hour + 1) * HOUR_MS);
      const offset = this.offsetAt(hour * HOUR_MS);
      this.hour = hour;
      this.hourStart = offset;
      this.hourOffset = hour * HOUR_MS >= YEAR_1 && offset % MINUTE_MS === 0 && offset === end ? offset : Number.NaN;
      this.minute = Number.NaN;
    }
    if (Number.isNaN(this.hourOffset)) return this.format.format(ms);
    const minute = Math.floor(ms / MINUTE_MS);
    if (minute !== this.minute) {
      this.minute = minute;
      this.text = this.utcText(minute * MINUTE_MS + this.hourOffset);
    }
    return this.text;
  }

  /** The UTC text of a whole minute. */
  private utcText(ms: number): string {
    const hour = Math.floor(ms / HOUR_MS);
    if (hour !== this.utcHour) {
      this.utcHour = hour;
      const text = this.utc.format(hour * HOUR_MS);
      const at = text.lastIndexOf(':') + 1;
      this.around = at > 0 && text.slice(at, at + 2) === '00' ? [text.slice(0, at), text.slice(at + 2)] : null;
    }
    return this.around === null ? this.utc.format(ms) : this.around[0] + MINUTES[(ms - hour * HOUR_MS) / MINUTE_MS]! + this.around[1];
  }
}
