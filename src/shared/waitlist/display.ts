import type { EntryLocation } from './entry.js';

/** 'N/A' when the address is unknown. */
export function formatIpAddress(ip: string | null | undefined): string {
  return ip && ip.trim() !== '' ? ip : 'N/A';
}

/** City, region and country joined with commas; 'Unknown' when all three are empty. */
export function formatLocation(entry: EntryLocation): string {
  let text = '';
  for (const part of [entry.city, entry.region, entry.country]) if (part && part.trim() !== '') text = text === '' ? part : `${text}, ${part}`;
  return text === '' ? 'Unknown' : text;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string | undefined): Intl.DateTimeFormat {
  const key = timeZone ?? '';
  let formatter = formatters.get(key);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      month: 'short',
      day: 'numeric',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      ...(timeZone ? { timeZone } : {}),
    });
    formatters.set(key, formatter);
  }
  return formatter;
}

/**
 * Intl formatting costs ~7 µs a call, most of an export's time at a million rows. Every time zone
 * in use today is offset from UTC by a multiple of 15 minutes and changes offset only on such a
 * boundary, so within one 15-minute block of UTC time only the minute differs: the block's text is
 * formatted once and its minute filled in. A block whose local start is not on a quarter hour
 * (historical local mean times) is formatted exactly, every time.
 */
const BLOCK_MS = 15 * 60_000;
/** Per zone: block number → the text around the minute and the block's first minute (-1: format exactly). */
const blocks = new Map<string, Map<number, Block>>();
const MAX_CACHED_BLOCKS = 200_000;
const MINUTES = Array.from({ length: 60 }, (_, m) => String(m).padStart(2, '0'));

const secondFormatters = new Map<string, Intl.DateTimeFormat>();

/** The local wall clock's second at `time` (non-zero at a whole UTC minute only where the offset has seconds, as local mean times did); NaN if it cannot be read. */
function localSecond(time: number, timeZone: string | undefined): number {
  const key = timeZone ?? '';
  let formatter = secondFormatters.get(key);
  if (!formatter) secondFormatters.set(key, (formatter = new Intl.DateTimeFormat('en-US', { second: 'numeric', ...(timeZone ? { timeZone } : {}) })));
  // The text is the second alone ("0" to "59"); format() costs a third of formatToParts().
  const text = formatter.format(new Date(time));
  return text.length <= 2 ? digits(text, 0, text.length) : Number.NaN;
}

/** The digits of iso[from, to) as a number; NaN when one is not a digit. */
function digits(iso: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const digit = iso.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return Number.NaN;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * Date.parse, read directly for the canonical `YYYY-MM-DDTHH:MM:SS.sssZ` that the database layer
 * hands over (Date.parse costs ~0.4 µs, most of an export row's date). Anything else, and days past
 * the 28th (whose validity depends on the month), goes to Date.parse itself.
 */
function parseTime(iso: string): number {
  if (iso.length !== 24 || iso[4] !== '-' || iso[7] !== '-' || iso[10] !== 'T' || iso[13] !== ':' || iso[16] !== ':' || iso[19] !== '.' || iso[23] !== 'Z') {
    return Date.parse(iso);
  }
  const month = digits(iso, 5, 7);
  const day = digits(iso, 8, 10);
  const hour = digits(iso, 11, 13);
  const minute = digits(iso, 14, 16);
  const second = digits(iso, 17, 19);
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= 28 && hour <= 23 && minute <= 59 && second <= 59)) return Date.parse(iso);
  const year = digits(iso, 0, 4);
  const millisecond = digits(iso, 20, 23);
  // Date.UTC reads years 0–99 as 1900–1999; Date.parse does not.
  if (!(year >= 100) || Number.isNaN(millisecond)) return Date.parse(iso);
  return Date.UTC(year, month - 1, day, hour, minute, second, millisecond);
}

/** A block's text around the minute, and the local minute it starts on (-1: format each time exactly). */
type Block = { index: number; before: string; minute: number; after: string };

/** The block the previous call used: an export's rows come in time order, so most calls reuse it. */
let last: { zone: string; cached: Block } | null = null;

/** en-US short month, day, year, hour and minute, e.g. "Nov 22, 2026, 06:04 AM". */
export function formatDateJoined(iso: string, timeZone?: string): string {
  const time = parseTime(iso);
  if (!Number.isFinite(time)) return formatterFor(timeZone).format(new Date(iso));
  return formatDateJoinedAt(time, timeZone);
}

/** formatDateJoined of a time in milliseconds since the epoch (what a binary database read gives). */
export function formatDateJoinedAt(time: number, timeZone?: string): string {
  if (!Number.isFinite(time)) return formatterFor(timeZone).format(new Date(time));
  const cached = blockAt(time, timeZone);
  if (cached.minute === -1) return formatterFor(timeZone).format(new Date(time));
  return cached.before + MINUTES[cached.minute + Math.floor((time - cached.index * BLOCK_MS) / 60_000)]! + cached.after;
}

/**
 * Date Joined for a writer that fills in the minute itself (the PostgreSQL export writes bytes):
 * every time in [start, start + 15 minutes) reads `before`, then the two digits of `minute` plus the
 * whole minutes since `start`, then `after`. Null where the block holding `time` cannot be written
 * so (formatDateJoinedAt formats each of its times exactly).
 */
export function dateJoinedBlock(time: number, timeZone?: string): { start: number; before: string; minute: number; after: string } | null {
  if (!Number.isFinite(time)) return null;
  const cached = blockAt(time, timeZone);
  return cached.minute === -1 ? null : { start: cached.index * BLOCK_MS, before: cached.before, minute: cached.minute, after: cached.after };
}

/** The cached 15-minute block of UTC time holding `time`, in the zone. */
function blockAt(time: number, timeZone: string | undefined): Block {
  const key = timeZone ?? '';
  const index = Math.floor(time / BLOCK_MS);
  if (last !== null && last.cached.index === index && last.zone === key) return last.cached;
  let zone = blocks.get(key);
  if (!zone) blocks.set(key, (zone = new Map()));
  let cached = zone.get(index);
  if (!cached) {
    if (zone.size >= MAX_CACHED_BLOCKS) zone.clear();
    cached = fromNeighbour(zone, index, timeZone) ?? computeBlock(index, timeZone);
    zone.set(index, cached);
  }
  last = { zone: key, cached };
  return cached;
}

/**
 * A block read off an adjacent one in the same local hour, with one Intl call instead of four: the
 * block after one starting on local minute m starts on m + 15 with the same text around it, if the
 * offset did not change, which the block's far end (from the neighbour) shows: its text must read
 * as predicted. (An offset changes at most once in 15 minutes, so the neighbour's constant offset
 * and a matching far end leave no room for a change inside.) Null when no neighbour fits.
 */
function fromNeighbour(zone: Map<number, Block>, index: number, timeZone: string | undefined): Block | null {
  const earlier = zone.get(index - 1);
  if (earlier && earlier.minute !== -1 && earlier.minute <= 30) {
    const minute = earlier.minute + 15;
    const end = formatterFor(timeZone).format(new Date((index + 1) * BLOCK_MS - 60_000));
    if (end === earlier.before + MINUTES[minute + 14] + earlier.after) return { index, before: earlier.before, minute, after: earlier.after };
  }
  const later = zone.get(index + 1);
  if (later && later.minute !== -1 && later.minute >= 15) {
    const minute = later.minute - 15;
    const start = formatterFor(timeZone).format(new Date(index * BLOCK_MS));
    if (start === later.before + MINUTES[minute] + later.after) return { index, before: later.before, minute, after: later.after };
  }
  return null;
}

/**
 * A block worked out from Intl alone, from format()'s own text (formatToParts costs 2.5 times as
 * much, and may space differently: Node writes a plain space before AM/PM there and U+202F here).
 * The minute is the two digits after the text's last colon (en-US "06:04 AM"); the block's last
 * minute reading as predicted from them confirms where they are.
 */
function computeBlock(index: number, timeZone: string | undefined): Block {
  const start = index * BLOCK_MS;
  const formatter = formatterFor(timeZone);
  const text = formatter.format(new Date(start));
  const at = text.lastIndexOf(':') + 1;
  const minute = at > 0 ? digits(text, at, at + 2) : Number.NaN;
  // The block must start exactly on a local quarter hour (whole-minute offset, no seconds).
  if (!(minute % 15 === 0 && localSecond(start, timeZone) === 0)) return { index, before: '', minute: -1, after: '' };
  const before = text.slice(0, at);
  const after = text.slice(at + 2);
  // The block's last minute must read as its first one plus 14: the digits are the minute, and no
  // offset changed inside the block (St. John's, Newfoundland, changed at 00:01 local time for years).
  return formatter.format(new Date(start + BLOCK_MS - 60_000)) === before + MINUTES[minute + 14] + after
    ? { index, before, minute, after }
    : { index, before: '', minute: -1, after: '' };
}

/** True when the runtime knows the IANA time zone name (used to validate client-supplied zones). */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}
