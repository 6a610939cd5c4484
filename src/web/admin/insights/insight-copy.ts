/**
 * Texts of the admin's insight panel (issue 10) and the pure helpers that word its numbers: the
 * chart's title and summary, bucket labels and shares. Days are UTC days (the database groups by
 * them), so every date here is formatted in UTC, whatever the admin's own zone.
 */
import type { WaitlistInsights } from '../../../shared/admin/waitlist-api.js';
import type { EntryStatus } from '../../../shared/waitlist/entry.js';
import { statusTexts } from '../common/copy.js';

export type InsightBucket = WaitlistInsights['bucket'];
export type InsightPoint = WaitlistInsights['series'][number];
/** The panel's three top lists, named as the filter fields they narrow. */
export type TopListKey = 'country' | 'source' | 'campaign';

const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();
function utcFormatter(key: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  let formatter = formatters.get(key);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', { ...options, timeZone: 'UTC' });
    formatters.set(key, formatter);
  }
  return formatter;
}

/** Milliseconds of a bucket's UTC start ("2026-11-20", or a full ISO instant); NaN when unreadable. */
export function bucketTime(start: string): number {
  return Date.parse(`${start.slice(0, 10)}T00:00:00Z`);
}

/** "Nov 20" (UTC). */
export function shortDay(time: number): string {
  return utcFormatter('short', { month: 'short', day: 'numeric' }).format(time);
}

/** "Nov 20, 2026" (UTC). */
export function longDay(time: number): string {
  return utcFormatter('long', { month: 'short', day: 'numeric', year: 'numeric' }).format(time);
}

/** "Nov 20 2026": the year written without a comma, as in a running sentence's range. */
function dayWithYear(time: number): string {
  return `${shortDay(time)} ${new Date(time).getUTCFullYear()}`;
}

const counts = new Intl.NumberFormat('en-US');
/** "1,234". One formatter for all: `toLocaleString` builds a new one per call, costly over hundreds of rows. */
export const formatCount = (n: number): string => counts.format(n);
const count = formatCount;
const plural = (n: number, one: string, many: string) => `${count(n)} ${n === 1 ? one : many}`;

const labels = new Map<string, string>();

/**
 * A bucket in the table alternative's first column: "Nov 20, 2026" or "Week of Nov 16, 2026".
 * Remembered: the table re-renders its hundreds of rows on every refresh, and Intl formatting is
 * the costly part of a row.
 */
export function bucketLabel(start: string, bucket: InsightBucket): string {
  const key = `${bucket}:${start}`;
  let label = labels.get(key);
  if (label === undefined) {
    const time = bucketTime(start);
    label = Number.isNaN(time) ? start : bucket === 'week' ? `Week of ${longDay(time)}` : longDay(time);
    // A few years of days and weeks at most; start over rather than grow without end.
    if (labels.size >= 5000) labels.clear();
    labels.set(key, label);
  }
  return label;
}

/** A bucket in the hover read-out and the summary's peak: "Nov 20" / "the week of Nov 16". */
function bucketPhrase(time: number, bucket: InsightBucket): string {
  return bucket === 'week' ? `the week of ${shortDay(time)}` : shortDay(time);
}

/** "Nov 1 to Nov 25 2026", "Dec 20 2025 to Jan 5 2026", or one day "Nov 25 2026". */
export function rangeText(first: number, last: number): string {
  if (first === last) return dayWithYear(first);
  const sameYear = new Date(first).getUTCFullYear() === new Date(last).getUTCFullYear();
  return `${sameYear ? shortDay(first) : dayWithYear(first)} to ${dayWithYear(last)}`;
}

/**
 * The chart's accessible name: its range, total and peak, e.g. "Signups per day, Nov 1 to Nov 25
 * 2026: 1,234 in total, peak 210 on Nov 20". The first peak wins a tie. One pass over the series.
 */
export function chartSummary(series: readonly InsightPoint[], bucket: InsightBucket): string {
  const title = insightTexts.tableCaption(bucket);
  const facts = seriesFacts(series, bucket);
  return facts === null ? `${title}: no signups` : `${title}, ${facts}`;
}

/** The summary without its title, for the line under the chart's visible title: "Nov 1 to Nov 25 2026: 1,234 in total, peak 210 on Nov 20". */
export function seriesFacts(series: readonly InsightPoint[], bucket: InsightBucket): string | null {
  const first = series[0];
  const last = series[series.length - 1];
  if (!first || !last) return null;
  let total = 0;
  let peak = first;
  for (const point of series) {
    total += point.count;
    if (point.count > peak.count) peak = point;
  }
  const firstTime = bucketTime(first.start);
  // A week bucket spans to its Sunday: the range names the last day it covers.
  const lastTime = bucketTime(last.start) + (bucket === 'week' ? 6 * DAY_MS : 0);
  const range = rangeText(firstTime, lastTime);
  if (total === 0) return `${range}: no signups`;
  const peakText = series.length > 1 ? `, peak ${count(peak.count)} ${bucket === 'week' ? 'in' : 'on'} ${bucketPhrase(bucketTime(peak.start), bucket)}` : '';
  return `${range}: ${count(total)} in total${peakText}`;
}

/** The read-out above the chart for the bucket under the pointer: "Nov 20: 210 signups". */
export function pointText(time: number, value: number, bucket: InsightBucket): string {
  const when = bucket === 'week' ? `Week of ${shortDay(time)}` : shortDay(time);
  return `${when}: ${plural(value, 'signup', 'signups')}`;
}

/** A share as a whole percentage; "<1%" for a small share that is not nothing. */
export function percentText(share: number): string {
  if (!Number.isFinite(share) || share <= 0) return '0%';
  if (share < 0.005) return '<1%';
  return `${Math.round(Math.min(share, 1) * 100)}%`;
}

/** `part` of `whole` as 0..1 (0 when there is no whole). */
export function shareOf(part: number, whole: number): number {
  return whole > 0 ? Math.min(1, Math.max(0, part / whole)) : 0;
}

/** What a top list shows for a value; null is the "no value" group (filtered with NONE_VALUE). */
export function topValueLabel(key: TopListKey, value: string | null): string {
  return value ?? insightTexts.none[key];
}

export const insightTexts = {
  heading: 'Insights',
  loading: 'Loading insights',
  loadFailed: 'The insights could not be loaded.',
  refreshFailed: 'The insights could not be refreshed.',
  tryAgain: 'Try again',
  /** The line beside the heading: how many signups the panel counts. */
  matching: (matching: number, total: number, filtered: boolean) =>
    filtered ? `${count(matching)} of ${plural(total, 'signup', 'signups')} match this view` : plural(total, 'signup', 'signups'),
  /** The chart's visible title; days and weeks are UTC. */
  chartTitle: (bucket: InsightBucket) => (bucket === 'week' ? 'Signups per week (UTC, weeks start Monday)' : 'Signups per day (UTC)'),
  /** The table alternative's caption. */
  tableCaption: (bucket: InsightBucket) => (bucket === 'week' ? 'Signups per week' : 'Signups per day'),
  tableColumns: { bucket: (bucket: InsightBucket) => (bucket === 'week' ? 'Week (UTC)' : 'Day (UTC)'), count: 'Signups' },
  showTable: 'Show as table',
  hideTable: 'Hide table',
  chartFailed: 'The chart could not be loaded; the numbers are in the table below.',
  noSeries: 'No signups to chart in this view.',
  hint: 'Select a value to show only those signups; select it again to remove the filter.',
  lists: { country: 'Top countries', source: 'Top sources', campaign: 'Top campaigns' } satisfies Record<TopListKey, string>,
  none: { country: 'Unknown', source: 'Direct', campaign: 'No campaign' } satisfies Record<TopListKey, string>,
  other: 'Other',
  emptyList: 'No signups in this view.',
  statuses: 'Statuses',
  statusLabel: (status: EntryStatus) => statusTexts.labels[status],
  /** Shown when double opt-in is on (confirmedShare not null). */
  confirmed: (share: number) => `Confirmed: ${percentText(share)}`,
  /** A top value's tooltip (its full text may be cut on screen). */
  valueTitle: (label: string, pressed: boolean) => (pressed ? `${label}: select to remove this filter` : `${label}: select to show only these signups`),
  /** Held and refused signups by reason (ScreeningTable). */
  screening: {
    heading: 'Held and refused signups',
    /** Which period the counts cover: the view's days; its other filters do not apply (these are not entries). */
    period: (from: string | undefined, to: string | undefined) =>
      from && to ? `From ${from} to ${to} (UTC).` : from ? `Since ${from} (UTC).` : to ? `Until ${to} (UTC).` : 'All time.',
    note: 'Counted by reason and by day only: the other filters do not apply.',
    columns: { reason: 'Reason', count: 'Signups' },
  },
} as const;
