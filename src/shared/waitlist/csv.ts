import { csvField, csvRecord, CSV_BOM, CSV_EOL } from '../csv.js';
import { isValidWallTime, wallTimeToUtc, zoneOffsets, type WallTime, type ZoneOffsets } from '../time-zone.js';
import { dateJoinedFormat, formatIpAddress, formatLocation } from './display.js';
import { checkWaitlistEmail } from './email.js';
import { ENTRY_STATUSES, type EntryLocation, type EntryStatus, type WaitlistEntry } from './entry.js';
import { cleanLandingPath, cleanReferrer, cleanUtmValue, formatSource, type UtmField } from './attribution.js';

/**
 * The waitlist as CSV, both ways: the admin export and `npm run db -- export` write it, `npm run db
 * -- import` reads it back, or reads the original product's export (the same four columns). Each
 * column is declared once below with its header, how an entry is written into it and how a cell is
 * read back; the file format itself (quoting, BOM, formula rule) is ../csv.ts. The spec's four
 * columns are always written; the consent columns (status and consent record) and the attribution
 * columns (where the signup came from) only on request (`npm run db -- export --consent
 * --attribution`, the admin export's `attribution: true`), and are read back whenever a file has them.
 *
 * Reading accepts:
 * - a UTF-8 byte-order mark, CRLF or LF (or lone CR) line ends, RFC 4180 quoting (commas, doubled
 *   quotes and line breaks inside quoted fields);
 * - the formula-injection quote the export adds;
 * - a header row (required; names case-insensitive, columns in any order). Email is required;
 *   Date Joined, IP Address and Location are optional; unknown columns are ignored with a warning;
 * - Date Joined as en-US "Nov 22, 2026, 06:04 AM" (the admin table's format, in the time zone the
 *   file was written in) or ISO-8601 ("2026-11-22T06:04:00Z"; without an offset it is read in the
 *   time zone too);
 * - IP Address 'N/A' or empty → null;
 * - Location 'Unknown' or empty → no location; otherwise see `parseLocation`;
 * - the consent columns, all optional: Status (empty → joined), Consent Version, Confirmed At,
 *   Invited At, Unsubscribed At (ISO-8601 as written, or like Date Joined; empty → none) and
 *   Confirmed IP (like IP Address). Without them an entry has no consent record (NO_CONSENT_RECORD).
 * - the attribution columns, all optional: UTM Source, UTM Medium, UTM Campaign, UTM Term, UTM
 *   Content, Referrer and Landing Path, cleaned by the signup's rules (attribution.ts): a value
 *   those rules refuse is dropped (empty), never failing the line, as it never fails a signup.
 *   Source is not read back: it is derived again from UTM Source and Referrer, so an imported entry
 *   groups exactly as a signup with the same values would (a hand-edited Source cannot disagree).
 *
 * The file is read by the server (../../server/csv/read-waitlist.ts), with these columns.
 */

/** What a cell contributes to an imported entry, or why the line is bad. */
type CellResult = { ok: true; fields: Partial<ImportedEntry> } | { ok: false; reason: string };

export interface WaitlistCsvColumn {
  header: string;
  /**
   * The cell as the admin table shows it. Date Joined, the one cell that depends on the file's time
   * zone, is `dateJoined`: the writer's text for the entry's created_at (dateJoinedFormat's).
   */
  format: (entry: WaitlistEntry, dateJoined: string) => string;
  /** The cell read back (formula quote already removed), dates in the zone whose offsets `zone` reads. */
  parse: (cell: string, zone: ZoneOffsets) => CellResult;
}

/** An entry as a line of an imported file gives it: everything but the id the database assigns. */
export type ImportedEntry = Omit<WaitlistEntry, 'id'>;

// ---------------------------------------------------------------------------------------------
// Cells

/** 'N/A' (any case) or empty → null, else the trimmed address (kept as text, not validated). */
export function parseIpAddress(value: string): string | null {
  const v = value.trim();
  return v === '' || v.toUpperCase() === 'N/A' ? null : v;
}

export type ParsedLocation = EntryLocation;

export const NO_LOCATION: ParsedLocation = { city: null, region: null, country: null };

/**
 * The export writes Location as the non-empty parts of (city, region, country) joined with ", ",
 * so the split back is a heuristic:
 * - 'Unknown' (any case) or empty → no location;
 * - 3 or more parts → city = the first, country = the last, region = the part(s) in between,
 *   joined again with ", " (so "Washington, D.C., District of Columbia, United States" keeps
 *   "D.C., District of Columbia" as its region);
 * - 2 parts → city and country (no region);
 * - 1 part → country only.
 * A stored city + region without country, or a region alone, therefore comes back differently.
 */
export function parseLocation(value: string): ParsedLocation {
  const v = value.trim();
  if (v === '' || v.toLowerCase() === 'unknown') return { ...NO_LOCATION };
  const parts = v
    .split(/\s*,\s*/)
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0) return { ...NO_LOCATION };
  if (parts.length === 1) return { city: null, region: null, country: parts[0]! };
  if (parts.length === 2) return { city: parts[0]!, region: null, country: parts[1]! };
  return { city: parts[0]!, region: parts.slice(1, -1).join(', '), country: parts[parts.length - 1]! };
}

// ---------------------------------------------------------------------------------------------
// Dates

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

function monthNumber(name: string): number | null {
  const n = name.toLowerCase();
  if (n === 'sept') return 9;
  if (n.length < 3) return null;
  const index = MONTHS.findIndex((m) => m.startsWith(n));
  return index === -1 ? null : index + 1;
}

// en-US "Nov 22, 2026, 06:04 AM"; tolerant of the narrow no-break space newer ICU puts before
// AM/PM, a missing comma, "at" instead of the second comma, seconds, and a 24-hour clock.
const EN_US_DATE =
  /^([A-Za-z]{3,9})\.?\s+(\d{1,2}),?\s+(\d{4})(?:,\s*|\s+at\s+|\s+)(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([AaPp])\.?\s*[Mm]\.?)?$/;
const ISO_DATE =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * Date Joined as an ISO-8601 UTC string, or null when it is not a date this importer knows.
 * `timeZone` (an IANA name, or its zoneOffsets when many cells are read) applies to the en-US
 * format and to ISO timestamps without an offset.
 */
export function parseDateJoined(value: string, timeZone: string | ZoneOffsets = 'UTC'): string | null {
  const zone = typeof timeZone === 'string' ? zoneOffsets(timeZone) : timeZone;
  const v = value.trim();
  let m = EN_US_DATE.exec(v);
  if (m) {
    const month = monthNumber(m[1]!);
    if (month === null) return null;
    let hour = Number(m[4]);
    const meridiem = m[7]?.toLowerCase();
    if (meridiem) {
      if (hour < 1 || hour > 12) return null;
      hour = (hour % 12) + (meridiem === 'p' ? 12 : 0);
    }
    const t: WallTime = { year: Number(m[3]), month, day: Number(m[2]), hour, minute: Number(m[5]), second: Number(m[6] ?? 0), millisecond: 0 };
    if (!isValidWallTime(t)) return null;
    return new Date(wallTimeToUtc(t, zone)).toISOString();
  }
  m = ISO_DATE.exec(v);
  if (m) {
    const t: WallTime = {
      year: Number(m[1]),
      month: Number(m[2]),
      day: Number(m[3]),
      hour: Number(m[4]),
      minute: Number(m[5]),
      second: Number(m[6] ?? 0),
      millisecond: Number((m[7] ?? '0').padEnd(3, '0').slice(0, 3)),
    };
    if (!isValidWallTime(t)) return null;
    const offset = m[8];
    if (!offset) return new Date(wallTimeToUtc(t, zone)).toISOString();
    const wall = Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second, t.millisecond);
    if (offset === 'Z' || offset === 'z') return new Date(wall).toISOString();
    const om = /^([+-])(\d{2}):?(\d{2})?$/.exec(offset)!;
    const offsetMinutes = Number(om[2]) * 60 + Number(om[3] ?? 0);
    if (Number(om[2]) > 23 || Number(om[3] ?? 0) > 59) return null;
    return new Date(wall - (om[1] === '-' ? -1 : 1) * offsetMinutes * 60_000).toISOString();
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Columns

/** Shows a cell in a message: quoted, escaped, and cut short. */
export function show(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
}

const EMAIL_PROBLEMS = { required: 'no e-mail address', too_long: 'e-mail address too long', invalid: 'not a valid e-mail address' } as const;

function parseEmailCell(cell: string): CellResult {
  const email = checkWaitlistEmail(cell);
  if (email.ok) return { ok: true, fields: { email: email.email } };
  return { ok: false, reason: `${EMAIL_PROBLEMS[email.problem]}${email.problem === 'required' ? '' : ` (${show(cell.trim())})`}` };
}

function parseDateCell(cell: string, zone: ZoneOffsets): CellResult {
  const parsed = parseDateJoined(cell, zone);
  if (parsed !== null) return { ok: true, fields: { created_at: parsed } };
  const v = cell.trim();
  return { ok: false, reason: v === '' ? 'no Date Joined' : `unrecognised Date Joined ${show(v)} (expected e.g. "Nov 22, 2026, 06:04 AM" or ISO-8601)` };
}

/** The file's columns, in order. */
export const WAITLIST_CSV_COLUMNS = {
  email: { header: 'Email', format: (e) => e.email, parse: parseEmailCell },
  dateJoined: { header: 'Date Joined', format: (_e, dateJoined) => dateJoined, parse: parseDateCell },
  ipAddress: {
    header: 'IP Address',
    format: (e) => formatIpAddress(e.ip_address),
    parse: (cell) => ({ ok: true, fields: { ip_address: parseIpAddress(cell) } }),
  },
  location: { header: 'Location', format: (e) => formatLocation(e), parse: (cell) => ({ ok: true, fields: parseLocation(cell) }) },
} as const satisfies Record<string, WaitlistCsvColumn>;

type TimestampField = 'confirmed_at' | 'invited_at' | 'unsubscribed_at';

/** A consent timestamp: written as exact ISO-8601 UTC (a record of consent keeps the second), read like Date Joined. */
function timestampColumn(header: string, field: TimestampField): WaitlistCsvColumn {
  return {
    header,
    format: (e) => e[field] ?? '',
    parse: (cell, zone) => {
      const v = cell.trim();
      if (v === '') return { ok: true, fields: { [field]: null } };
      const parsed = parseDateJoined(v, zone);
      if (parsed !== null) return { ok: true, fields: { [field]: parsed } };
      return { ok: false, reason: `unrecognised ${header} ${show(v)} (expected ISO-8601 or e.g. "Nov 22, 2026, 06:04 AM")` };
    },
  };
}

/** The longest Consent Version accepted from a file (content.ts versions are short labels). */
const MAX_CONSENT_VERSION_LENGTH = 200;

function parseStatusCell(cell: string): CellResult {
  const v = cell.trim().toLowerCase();
  if (v === '') return { ok: true, fields: { status: 'joined' } };
  if ((ENTRY_STATUSES as readonly string[]).includes(v)) return { ok: true, fields: { status: v as EntryStatus } };
  return { ok: false, reason: `unknown Status ${show(cell.trim())} (expected one of ${ENTRY_STATUSES.join(', ')})` };
}

function parseConsentVersionCell(cell: string): CellResult {
  const v = cell.trim();
  if (v.length > MAX_CONSENT_VERSION_LENGTH) return { ok: false, reason: `Consent Version longer than ${MAX_CONSENT_VERSION_LENGTH} characters` };
  return { ok: true, fields: { consent_version: v === '' ? null : v } };
}

/** The status and consent record of each entry, after the spec's columns (`export --consent`). */
export const CONSENT_CSV_COLUMNS = {
  status: { header: 'Status', format: (e) => e.status, parse: parseStatusCell },
  consentVersion: { header: 'Consent Version', format: (e) => e.consent_version ?? '', parse: parseConsentVersionCell },
  confirmedAt: timestampColumn('Confirmed At', 'confirmed_at'),
  confirmedIp: {
    header: 'Confirmed IP',
    format: (e) => formatIpAddress(e.confirmed_ip),
    parse: (cell) => ({ ok: true, fields: { confirmed_ip: parseIpAddress(cell) } }),
  },
  invitedAt: timestampColumn('Invited At', 'invited_at'),
  unsubscribedAt: timestampColumn('Unsubscribed At', 'unsubscribed_at'),
} as const satisfies Record<string, WaitlistCsvColumn>;

/** A UTM cell: written as stored, read back cleaned like a signup's value (a refused value is empty). */
function utmColumn(header: string, field: UtmField): WaitlistCsvColumn {
  return { header, format: (e) => e[field] ?? '', parse: (cell) => ({ ok: true, fields: { [field]: cleanUtmValue(cell) } }) };
}

/**
 * Where each entry came from, after the spec's columns (and the consent columns): `export
 * --attribution`, the admin export's `attribution: true`. Source is the admin's (derived, 'Direct'
 * when nothing was captured); it is written for the reader and derived again on import.
 */
export const ATTRIBUTION_CSV_COLUMNS = {
  source: { header: 'Source', format: (e) => formatSource(e.source), parse: () => ({ ok: true, fields: {} }) },
  utmSource: utmColumn('UTM Source', 'utm_source'),
  utmMedium: utmColumn('UTM Medium', 'utm_medium'),
  utmCampaign: utmColumn('UTM Campaign', 'utm_campaign'),
  utmTerm: utmColumn('UTM Term', 'utm_term'),
  utmContent: utmColumn('UTM Content', 'utm_content'),
  referrer: {
    header: 'Referrer',
    format: (e) => e.referrer ?? '',
    parse: (cell) => ({ ok: true, fields: { referrer: cleanReferrer(cell) } }),
  },
  landingPath: {
    header: 'Landing Path',
    format: (e) => e.landing_path ?? '',
    parse: (cell) => ({ ok: true, fields: { landing_path: cleanLandingPath(cell) } }),
  },
} as const satisfies Record<string, WaitlistCsvColumn>;

/** Every column a file may have, in the order the export writes them. */
export const ALL_CSV_COLUMNS = { ...WAITLIST_CSV_COLUMNS, ...CONSENT_CSV_COLUMNS, ...ATTRIBUTION_CSV_COLUMNS };
const SPEC_COLUMNS: readonly WaitlistCsvColumn[] = Object.values(WAITLIST_CSV_COLUMNS);
const CONSENT_COLUMNS: readonly WaitlistCsvColumn[] = Object.values(CONSENT_CSV_COLUMNS);
const ATTRIBUTION_COLUMNS: readonly WaitlistCsvColumn[] = Object.values(ATTRIBUTION_CSV_COLUMNS);

// ---------------------------------------------------------------------------------------------
// Writing

export interface WaitlistCsvOptions {
  /** Add the consent columns (Status, Consent Version, Confirmed At, Confirmed IP, Invited At, Unsubscribed At). */
  consent?: boolean;
  /** Add the attribution columns (Source, UTM Source … UTM Content, Referrer, Landing Path), after the consent ones. */
  attribution?: boolean;
}

/** The four column lists a file can have, built once (the writer asks for them per record). */
const COLUMN_SETS: readonly (readonly WaitlistCsvColumn[])[] = [
  SPEC_COLUMNS,
  [...SPEC_COLUMNS, ...CONSENT_COLUMNS],
  [...SPEC_COLUMNS, ...ATTRIBUTION_COLUMNS],
  [...SPEC_COLUMNS, ...CONSENT_COLUMNS, ...ATTRIBUTION_COLUMNS],
];

const columnsFor = (options: WaitlistCsvOptions) => COLUMN_SETS[(options.consent ? 1 : 0) + (options.attribution ? 2 : 0)]!;

/** The header record: Email, Date Joined, IP Address, Location (then the consent and attribution columns when asked for). */
export function waitlistCsvHeader(options: WaitlistCsvOptions = {}): string {
  return csvRecord(columnsFor(options).map((c) => c.header));
}

/**
 * One entry as a record: the one writer of the file's cells (this CLI's export and the admin
 * export both write every record here). `dateJoined` is the entry's Date Joined text in the file's
 * time zone, dateJoinedFormat(timeZone).format(created_at), which the caller makes (with one
 * formatter per file, or from a cache of the same texts).
 */
export function waitlistCsvRecord(entry: WaitlistEntry, dateJoined: string, options: WaitlistCsvOptions = {}): string {
  // csvRecord's own loop, without the array of cells: an export writes this a million times.
  const columns = columnsFor(options);
  let line = '';
  for (let i = 0; i < columns.length; i++) line += (i === 0 ? '' : ',') + csvField(columns[i]!.format(entry, dateJoined));
  return line + CSV_EOL;
}

/**
 * The whole file as chunks: BOM and header first, then one chunk per batch of entries, so a
 * 100,000-row export never holds more than one batch of text. `onBatch` is told how many rows each written chunk holds.
 */
export async function* waitlistCsvChunks(
  batches: AsyncIterable<readonly WaitlistEntry[]>,
  timeZone: string,
  onBatch?: (rows: number) => void,
  options: WaitlistCsvOptions = {},
): AsyncGenerator<string> {
  const dates = dateJoinedFormat(timeZone);
  yield CSV_BOM + waitlistCsvHeader(options);
  for await (const batch of batches) {
    if (batch.length === 0) continue;
    let chunk = '';
    for (const entry of batch) chunk += waitlistCsvRecord(entry, dates.format(new Date(entry.created_at)), options);
    onBatch?.(batch.length);
    yield chunk;
  }
}
