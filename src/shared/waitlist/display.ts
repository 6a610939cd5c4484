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

/** en-US short month, day, year, hour and minute, e.g. "Nov 22, 2026, 06:04 AM". */
export function formatDateJoined(iso: string, timeZone?: string): string {
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
  return formatter.format(new Date(iso));
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
