/**
 * Wall-clock time in an IANA time zone, turned into an instant with the runtime's own zone data
 * (Intl): the arithmetic the CSV import needs to read a "Date Joined" written in the exporting
 * browser's zone.
 */
export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

export function isValidWallTime(t: WallTime): boolean {
  const date = new Date(Date.UTC(t.year, t.month - 1, t.day));
  return (
    t.year >= 1000 &&
    date.getUTCFullYear() === t.year &&
    date.getUTCMonth() === t.month - 1 &&
    date.getUTCDate() === t.day &&
    t.hour <= 23 &&
    t.minute <= 59 &&
    t.second <= 59
  );
}

const offsetFormatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC, in milliseconds, at the instant `utcMs`. */
function zoneOffsetMs(timeZone: string, utcMs: number): number {
  let formatter = offsetFormatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    offsetFormatters.set(timeZone, formatter);
  }
  const get = (parts: Intl.DateTimeFormatPart[], type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const parts = formatter.formatToParts(new Date(utcMs));
  const wallAsUtc = Date.UTC(get(parts, 'year'), get(parts, 'month') - 1, get(parts, 'day'), get(parts, 'hour') % 24, get(parts, 'minute'), get(parts, 'second'));
  return wallAsUtc - (utcMs - (((utcMs % 1000) + 1000) % 1000));
}

/**
 * The instant a wall-clock time in `timeZone` names. Around a DST change the clocks skip or repeat
 * an hour: a skipped time is read with the offset from before the change (so it lands after it),
 * a repeated time resolves to one of its two instants.
 */
export function wallTimeToUtc(t: WallTime, timeZone: string): number {
  const wall = Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second, t.millisecond);
  if (timeZone === 'UTC') return wall;
  const first = zoneOffsetMs(timeZone, wall);
  const guess = wall - first;
  const second = zoneOffsetMs(timeZone, guess);
  return second === first ? guess : wall - second;
}
