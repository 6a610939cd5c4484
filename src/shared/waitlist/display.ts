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

/**
 * The Date Joined format: en-US short month, day, year, hour and minute, e.g. "Nov 22, 2026, 06:04 AM",
 * in `timeZone` (the runtime's own without one). A new formatter each call: whoever formats many
 * times keeps the one it got (the CSV writers do; the server's export also caches the texts).
 */
export function dateJoinedFormat(timeZone?: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', year: 'numeric', hour: '2-digit', minute: '2-digit', ...(timeZone ? { timeZone } : {}) });
}

/** The runtime's own zone's format, made once: the admin table's (the browser's zone, which a page keeps). */
const LOCAL_FORMAT = dateJoinedFormat();

/**
 * Date Joined as the admin table and the CSV show it (dateJoinedFormat) of an ISO-8601 time, in
 * `timeZone` or the runtime's own zone; a RangeError for text that is not a time.
 */
export function formatDateJoined(iso: string, timeZone?: string): string {
  return (timeZone === undefined ? LOCAL_FORMAT : dateJoinedFormat(timeZone)).format(new Date(iso));
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
