import { zoneOffsetMs } from '../time-zone.js';
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
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const BLOCKS_PER_DAY = DAY_MS / BLOCK_MS;
/** Days of blocks a zone keeps (about five years), and UTC hours of text kept for all zones. */
const MAX_CACHED_DAYS = 2_000;
const MAX_CACHED_HOURS = 24 * MAX_CACHED_DAYS;
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

/** The block the previous call used, and its zone: an export's rows come in time order, so most calls reuse it. */
let lastBlock: Block | null = null;
let lastZone = '';

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
 * Date Joined for a writer that fills in the minute itself (the exports write bytes): every time
 * in block `index` (the 15 minutes from index × 900,000 ms since the epoch) reads `before`, then the
 * two digits of `minute` plus the whole minutes since the block's start, then `after`. Null where
 * the block holding `time` cannot be written so (formatDateJoinedAt formats each of its times
 * exactly). The block is the cache's own, not a copy.
 */
export function dateJoinedBlock(time: number, timeZone?: string): Readonly<Block> | null {
  if (!Number.isFinite(time)) return null;
  const cached = blockAt(time, timeZone);
  return cached.minute === -1 ? null : cached;
}

/** The cached 15-minute block of UTC time holding `time`, in the zone. */
function blockAt(time: number, timeZone: string | undefined): Block {
  const key = timeZone ?? '';
  const index = Math.floor(time / BLOCK_MS);
  if (lastBlock !== null && lastBlock.index === index && lastZone === key) return lastBlock;
  let zone = zones.get(key);
  if (!zone) zones.set(key, (zone = new ZoneBlocks(timeZone)));
  lastBlock = zone.block(index);
  lastZone = key;
  return lastBlock;
}

/** Per zone: its blocks (the text around the minute and the block's first minute; -1: format exactly). */
const zones = new Map<string, ZoneBlocks>();

/**
 * A zone's blocks by UTC day. Most cost no Intl call of the zone at all: its offset from UTC changes
 * a few times a year at most (in the tz database the shortest time between two changes of one zone
 * is ~4 days: tzdata 2025b, every zone, all history; Node 20's ICU carries 2025c), so where the
 * offset is the same at the start of a UTC day and of the next, it holds all day, and a block's text
 * is the UTC text of the same instant moved by the offset; the UTC hours' texts are made once for
 * all zones, two Intl calls a day (utcDay). A year of blocks: about one offset reading a day (the
 * next day's start is the following day's) instead of one to three Intl calls a block, ~100 → ~25
 * ms. The days with a change are read block by block as before; an offset that is not a whole
 * quarter hour (none since 1970) has each row's time formatted by Intl, as before.
 */
class ZoneBlocks {
  /** UTC day number → its blocks, and the offset that holds all day (NaN: none; read each block alone). */
  private readonly days = new Map<number, { offset: number; blocks: Array<Block | undefined> }>();
  /** UTC day number → the zone's offset at that day's start, ms (NaN: not readable). */
  private readonly offsets = new Map<number, number>();

  constructor(private readonly timeZone: string | undefined) {}

  block(index: number): Block {
    const dayNumber = Math.floor(index / BLOCKS_PER_DAY);
    let day = this.days.get(dayNumber);
    if (!day) {
      if (this.days.size >= MAX_CACHED_DAYS) {
        this.days.clear();
        this.offsets.clear();
      }
      day = { offset: this.dayOffset(dayNumber), blocks: new Array<Block | undefined>(BLOCKS_PER_DAY) };
      this.days.set(dayNumber, day);
    }
    const at = index - dayNumber * BLOCKS_PER_DAY;
    return (day.blocks[at] ??= shiftedBlock(index, day.offset) ?? fromNeighbour(this, index, this.timeZone) ?? computeBlock(index, this.timeZone));
  }

  /** The block if it is known already. */
  known(index: number): Block | undefined {
    const day = Math.floor(index / BLOCKS_PER_DAY);
    return this.days.get(day)?.blocks[index - day * BLOCKS_PER_DAY];
  }

  /**
   * The offset that holds all through UTC day `day` (see below): the same at its start and at the
   * next day's. NaN when it changes during the day, or for a day it cannot be used for.
   */
  private dayOffset(day: number): number {
    const start = day * DAY_MS;
    if (!(start >= SHIFTED_FROM) || hourParts() === null) return Number.NaN;
    const offset = this.offsetAt(day);
    return offset === this.offsetAt(day + 1) ? offset : Number.NaN;
  }

  private offsetAt(day: number): number {
    let offset = this.offsets.get(day);
    if (offset === undefined) this.offsets.set(day, (offset = zoneOffsetMs(this.timeZone, day * DAY_MS)));
    return offset;
  }
}

/** Block `index` as the UTC text of its local time, for an offset that holds all its day (NaN: none); null when it cannot be had so. */
function shiftedBlock(index: number, offset: number): Block | null {
  if (Number.isNaN(offset)) return null;
  // A whole offset that is not a quarter hour (Amsterdam's +00:20 until 1940): formatted row by row.
  if (offset % BLOCK_MS !== 0) return { index, before: '', minute: -1, after: '' };
  const local = index * BLOCK_MS + offset;
  const hour = Math.floor(local / HOUR_MS);
  const text = utcHour(hour);
  return text === null ? null : { index, before: text.before, minute: (local - hour * HOUR_MS) / 60_000, after: text.after };
}

/** From year 1: before it, Intl writes the year with an era that zoneOffsetMs() does not read. */
const SHIFTED_FROM = new Date(0).setUTCFullYear(1, 0, 1);
/** UTC hour number → the UTC text around the minute (null: it did not read as expected). */
const utcHours = new Map<number, HourText | null>();

/** The UTC text around the minute for UTC hour `hour` (cached for every zone, a day at a time); null if it did not read as expected. */
function utcHour(hour: number): HourText | null {
  let texts = utcHours.get(hour);
  if (texts === undefined) {
    if (utcHours.size >= MAX_CACHED_HOURS) utcHours.clear();
    const day = Math.floor(hour / 24);
    const derived = utcDay(day);
    for (let h = 0; h < 24; h++) utcHours.set(day * 24 + h, derived ? derived[h]! : hourText(day * 24 + h));
    texts = utcHours.get(hour)!;
  }
  return texts;
}

type HourText = { before: string; after: string };

/** Intl's UTC text of an hour's first minute, around the minute; null if the minute does not read 00. */
function hourText(hour: number): HourText | null {
  const text = formatterFor('UTC').format(new Date(hour * HOUR_MS));
  const at = text.lastIndexOf(':') + 1;
  return at > 0 && text.slice(at, at + 2) === '00' ? { before: text.slice(0, at), after: text.slice(at + 2) } : null;
}

/**
 * A UTC day's 24 hour texts from two Intl calls instead of 24: within a day only the hour's part
 * changes ("Nov 22, 2026, " + "06:" … " AM"), and those parts are learned once from the 24 hours of
 * one day. The day's text at 00:00 gives its date part; its text at 23:00 must read as derived, else
 * (null) each hour is formatted by itself.
 */
function utcDay(day: number): HourText[] | null {
  // Called only once hourParts() has been found (ZoneBlocks.dayOffset).
  const parts = hourParts()!;
  const midnight = hourText(day * 24);
  const first = parts.hours[0]!;
  if (midnight === null || !midnight.before.endsWith(first.before) || midnight.after !== first.after) return null;
  const date = midnight.before.slice(0, midnight.before.length - first.before.length);
  const hours = parts.hours.map((part) => ({ before: date + part.before, after: part.after }));
  const last = hourText(day * 24 + 23);
  return last !== null && last.before === hours[23]!.before && last.after === hours[23]!.after ? hours : null;
}

let learnedParts: { hours: HourText[] } | null | undefined;

/** Each hour's part of the UTC text (after the date, around the minute), from the hours of one day; null if they share no date part. */
function hourParts(): { hours: HourText[] } | null {
  if (learnedParts === undefined) {
    const day = Math.floor(Date.UTC(2026, 0, 15) / DAY_MS);
    const texts = Array.from({ length: 24 }, (_, h) => hourText(day * 24 + h));
    if (texts.some((text) => text === null)) learnedParts = null;
    else {
      const befores = texts.map((text) => text!.before);
      let common = 0;
      while (common < befores[0]!.length && befores.every((before) => before[common] === befores[0]![common])) common++;
      // The date part must end before the hour's digits: hours 0 (12 AM) and 1 (01 AM) share none.
      // And the minute must be where it is taken to be: 13:37 must read as 13:00 with 37 in place of 00.
      const probe = formatterFor('UTC').format(new Date(day * DAY_MS + 13 * HOUR_MS + 37 * 60_000));
      learnedParts =
        common > 0 && probe === `${texts[13]!.before}37${texts[13]!.after}`
          ? { hours: texts.map((text) => ({ before: text!.before.slice(common), after: text!.after })) }
          : null;
    }
  }
  return learnedParts;
}

/**
 * A block read off an adjacent one in the same local hour, with one Intl call instead of four: the
 * block after one starting on local minute m starts on m + 15 with the same text around it, if the
 * offset did not change, which the block's far end (from the neighbour) shows: its text must read
 * as predicted. (An offset changes at most once in 15 minutes, so the neighbour's constant offset
 * and a matching far end leave no room for a change inside.) Null when no neighbour fits.
 */
function fromNeighbour(zone: ZoneBlocks, index: number, timeZone: string | undefined): Block | null {
  const earlier = zone.known(index - 1);
  if (earlier && earlier.minute !== -1 && earlier.minute <= 30) {
    const minute = earlier.minute + 15;
    const end = formatterFor(timeZone).format(new Date((index + 1) * BLOCK_MS - 60_000));
    if (end === earlier.before + MINUTES[minute + 14] + earlier.after) return { index, before: earlier.before, minute, after: earlier.after };
  }
  const later = zone.known(index + 1);
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
