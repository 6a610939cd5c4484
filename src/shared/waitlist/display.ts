import type { EntryLocation } from './entry.js';

/** 'N/A' when the address is unknown. */
export function formatIpAddress(ip: string | null | undefined): string {
  return ip && ip.trim() !== '' ? ip : 'N/A';
}

/** City, region and country joined with commas; 'Unknown' when all three are empty. */
export function formatLocation(entry: EntryLocation): string {
  const parts = [entry.city, entry.region, entry.country].filter((p): p is string => !!p && p.trim() !== '');
  return parts.length > 0 ? parts.join(', ') : 'Unknown';
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
const blocks = new Map<string, Map<number, { before: string; minute: number; after: string }>>();
const MAX_CACHED_BLOCKS = 200_000;
const MINUTES = Array.from({ length: 60 }, (_, m) => String(m).padStart(2, '0'));

const secondFormatters = new Map<string, Intl.DateTimeFormat>();

/** The local wall clock's second at `time` (non-zero at a whole UTC minute only where the offset has seconds, as local mean times did). */
function localSecond(time: number, timeZone: string | undefined): number {
  const key = timeZone ?? '';
  let formatter = secondFormatters.get(key);
  if (!formatter) secondFormatters.set(key, (formatter = new Intl.DateTimeFormat('en-US', { second: 'numeric', ...(timeZone ? { timeZone } : {}) })));
  return Number(formatter.formatToParts(new Date(time)).find((p) => p.type === 'second')?.value ?? NaN);
}

/** en-US short month, day, year, hour and minute, e.g. "Nov 22, 2026, 06:04 AM". */
export function formatDateJoined(iso: string, timeZone?: string): string {
  const time = Date.parse(iso);
  if (!Number.isFinite(time)) return formatterFor(timeZone).format(new Date(iso));
  const key = timeZone ?? '';
  let zone = blocks.get(key);
  if (!zone) blocks.set(key, (zone = new Map()));
  const block = Math.floor(time / BLOCK_MS);
  let cached = zone.get(block);
  if (!cached) {
    if (zone.size >= MAX_CACHED_BLOCKS) zone.clear();
    const start = block * BLOCK_MS;
    const parts = formatterFor(timeZone).formatToParts(new Date(start));
    const at = parts.findIndex((p) => p.type === 'minute');
    const minute = at === -1 ? NaN : Number(parts[at]!.value);
    // The block must start exactly on a local quarter hour (whole-minute offset, no seconds).
    const onQuarter = Number.isInteger(minute) && minute % 15 === 0 && localSecond(start, timeZone) === 0;
    // The text itself comes from format(), which may space differently from formatToParts (Node
    // writes a plain space before AM/PM there and U+202F here); the parts only say where the minute is.
    const text = formatterFor(timeZone).format(new Date(start));
    const offset = parts.slice(0, at).reduce((n, p) => n + p.value.length, 0);
    const before = text.slice(0, offset);
    const after = text.slice(offset + 2);
    // The block's last minute must read as its first one plus 14: no offset change inside it
    // (St. John's, Newfoundland, changed at 00:01 local time for years).
    const last = onQuarter ? formatterFor(timeZone).format(new Date(start + BLOCK_MS - 60_000)) : '';
    cached =
      onQuarter && text.slice(offset, offset + 2) === MINUTES[minute] && last === before + MINUTES[minute + 14] + after
        ? { before, minute, after }
        : { before: '', minute: -1, after: '' };
    zone.set(block, cached);
  }
  if (cached.minute === -1) return formatterFor(timeZone).format(new Date(time));
  return cached.before + MINUTES[cached.minute + Math.floor((time - block * BLOCK_MS) / 60_000)]! + cached.after;
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
