import { formatDateJoined, formatIpAddress, formatLocation } from './display.js';
import type { WaitlistEntry } from './entry.js';

export const EXPORT_FILE_NAMES = { all: 'waitlist_all.csv', selected: 'waitlist_selected.csv' } as const;

/** The CSV export's columns, in order; each cell reads as the admin table shows it. */
export const WAITLIST_CSV_COLUMNS: ReadonlyArray<{
  header: string;
  cell: (entry: WaitlistEntry, timeZone?: string) => string;
}> = [
  { header: 'Email', cell: (e) => e.email },
  { header: 'Date Joined', cell: (e, tz) => formatDateJoined(e.created_at, tz) },
  { header: 'IP Address', cell: (e) => formatIpAddress(e.ip_address) },
  { header: 'Location', cell: (e) => formatLocation(e) },
];
