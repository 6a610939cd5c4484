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

/** A zone's offset from UTC, in milliseconds (to the second), at the instant `utcMs`; NaN when Intl gives none of the fields. */
export type ZoneOffsets = (utcMs: number) => number;

/**
 * The offsets of `timeZone` (undefined: the runtime's own zone), read from Intl. Its formatter is
 * made at the first reading (~0.1-0.2 ms) and kept by the returned function: keep the function for
 * many readings. Years before 1 come with an era this does not read, so their offset is wrong:
 * callers keep to year 1 and later.
 */
export function zoneOffsets(timeZone: string | undefined): ZoneOffsets {
  if (timeZone === 'UTC') return () => 0;
  let formatter: Intl.DateTimeFormat | undefined;
  const get = (parts: Intl.DateTimeFormatPart[], type: string) => Number(parts.find((p) => p.type === type)?.value ?? Number.NaN);
  return (utcMs) => {
    formatter ??= new Intl.DateTimeFormat('en-US', {
      ...(timeZone ? { timeZone } : {}),
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    const parts = formatter.formatToParts(new Date(utcMs));
    // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
    const wall = new Date(0);
    wall.setUTCFullYear(get(parts, 'year'), get(parts, 'month') - 1, get(parts, 'day'));
    wall.setUTCHours(get(parts, 'hour') % 24, get(parts, 'minute'), get(parts, 'second'), 0);
    return wall.getTime() - (utcMs - (((utcMs % 1000) + 1000) % 1000));
  };
}

/**
 * The instant a wall-clock time names in the zone whose offsets `offsetAt` reads. Around a DST
 * change the clocks skip or repeat an hour: a skipped time is read with the offset from before the
 * change (so it lands after it), a repeated time resolves to one of its two instants.
 */
export function wallTimeToUtc(t: WallTime, offsetAt: ZoneOffsets): number {
  const wall = Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second, t.millisecond);
  const first = offsetAt(wall);
  const guess = wall - first;
  const second = offsetAt(guess);
  return second === first ? guess : wall - second;
}
