import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { toIsoTimestamp } from '../../../src/server/db/database.js';
import { INSIGHTS_MAX_RANGE_DAYS, seriesBuckets, seriesRange } from '../../../src/server/insights/panel.js';
import {
  ADMIN_INSIGHTS_PATH,
  INSIGHTS_MAX_DAYS,
  INSIGHTS_TOP,
  waitlistInsightsSchema,
  type WaitlistInsights,
} from '../../../src/shared/admin/waitlist-api.js';
import { entryMatchesFilter, filterToSearchParams, NONE_VALUE, type WaitlistFilter } from '../../../src/shared/admin/waitlist-filter.js';
import { ENTRY_STATUSES, type EntryStatus, type WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { SCREENING_REASONS } from '../../../src/shared/waitlist/screening.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { waitlistEntry } from '../../support/entries.js';
import { cleanupsAfterEach, createAdminTestApp, mailEnv, startTestSmtp } from '../../support/admin-app.js';
import type { TestApp } from '../../support/test-app.js';

/**
 * GET /api/admin/waitlist/insights (contract: waitlistInsightsSchema in src/shared/admin/waitlist-api.ts):
 * the panel's aggregates on known data, on both databases, checked against a plain JavaScript count
 * of the same rows (and by hand where it matters).
 */

const DAY_MS = 86_400_000;

const cleanups = cleanupsAfterEach();

interface Harness {
  t: TestApp;
  token: string;
}

async function harness(dialect: TestDialect, confirmation: 'off' | 'required' = 'off'): Promise<Harness> {
  let env: Record<string, string> = {};
  if (confirmation === 'required') {
    // Double opt-in needs e-mail configured.
    const smtp = await startTestSmtp(cleanups);
    env = { ...mailEnv(smtp.url), SIGNUP_CONFIRMATION: 'required' };
  }
  const { t, token } = await createAdminTestApp(env, { dialect, mailWorker: { pollIntervalMs: 3_600_000 } });
  cleanups.push(() => t.close());
  return { t, token };
}

async function insights(h: Harness, filter: WaitlistFilter = {}): Promise<WaitlistInsights> {
  const params = filterToSearchParams(filter).toString();
  const res = await h.t.app.inject({
    method: 'GET',
    url: `${ADMIN_INSIGHTS_PATH}${params ? `?${params}` : ''}`,
    headers: { authorization: `Bearer ${h.token}` },
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  return waitlistInsightsSchema.parse(res.json());
}

async function insert(h: Harness, rows: WaitlistEntry[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 1000) await h.t.app.database.db.insertInto('waitlist').values(rows.slice(i, i + 1000)).execute();
}

function entry(createdAt: string, over: Partial<WaitlistEntry> = {}): WaitlistEntry {
  return waitlistEntry({ email: `${randomUUID().slice(0, 8)}@example.com`, created_at: createdAt, ...over });
}

const day = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);
const dayNumber = (d: string) => Date.parse(`${d}T00:00:00.000Z`) / DAY_MS;
const today = () => new Date().toISOString().slice(0, 10);

/** 43 entries in March-May 2026 with known countries, sources, campaigns and statuses. */
function knownRows(): WaitlistEntry[] {
  const countries: Array<[string | null, number]> = [
    ['Germany', 9],
    ['France', 7],
    [null, 6],
    ['Spain', 5],
    ['Brazil', 4],
    ['Austria', 4],
    ['Chile', 3],
    ['Egypt', 2],
    ['Denmark', 2],
    ['Finland', 1],
  ];
  const sources = ['google', 'google', null, 'twitter', 'news.example'];
  const campaigns = ['spring', null, 'spring', 'summer'];
  const statuses: EntryStatus[] = ['joined', 'pending', 'confirmed', 'invited', 'unsubscribed', 'joined'];
  const days = ['2026-03-01', '2026-03-01', '2026-03-03', '2026-03-10', '2026-03-31', '2026-04-06', '2026-05-17'];
  const rows: WaitlistEntry[] = [];
  let i = 0;
  for (const [country, n] of countries) {
    for (let k = 0; k < n; k++, i++) {
      const status = statuses[i % statuses.length]!;
      // Invited and unsubscribed entries: every other one had confirmed before.
      const confirmed = status === 'confirmed' || ((status === 'invited' || status === 'unsubscribed') && i % 2 === 0);
      const at = `${days[i % days.length]}T${String(i % 24).padStart(2, '0')}:30:00.000Z`;
      rows.push(
        entry(at, {
          email: `user${i}@${i % 3 ? 'example.com' : 'test.org'}`,
          country,
          source: sources[i % sources.length]!,
          utm_campaign: campaigns[i % campaigns.length]!,
          status,
          confirmed_at: confirmed ? at : null,
          invited_at: status === 'invited' ? at : null,
          unsubscribed_at: status === 'unsubscribed' ? at : null,
        }),
      );
    }
  }
  return rows;
}

/** The panel counted in JavaScript: the oracle. */
function expected(rows: WaitlistEntry[], filter: WaitlistFilter, confirmation: 'off' | 'required') {
  const m = rows.filter((e) => entryMatchesFilter(e, filter));
  const top = (value: (e: WaitlistEntry) => string | null) => {
    const counts = new Map<string | null, number>();
    for (const e of m) counts.set(value(e), (counts.get(value(e)) ?? 0) + 1);
    const sorted = [...counts.entries()]
      .map(([v, count]) => ({ value: v, count }))
      .sort((a, b) => b.count - a.count || (a.value === null ? 1 : b.value === null ? -1 : a.value < b.value ? -1 : 1));
    const kept = sorted.slice(0, INSIGHTS_TOP);
    return { top: kept, other: m.length - kept.reduce((s, x) => s + x.count, 0) };
  };
  const days = m.map((e) => dayNumber(e.created_at.slice(0, 10)));
  let series: WaitlistInsights['series'] = [];
  let bucket: WaitlistInsights['bucket'] = 'day';
  const start = filter.from ? dayNumber(filter.from) : days.length ? Math.min(...days) : null;
  if (start !== null) {
    const end = filter.to ? dayNumber(filter.to) : Math.max(dayNumber(today()), ...days);
    bucket = end - start + 1 > INSIGHTS_MAX_DAYS ? 'week' : 'day';
    // ISO weeks start on Monday (getUTCDay: 0 = Sunday).
    const label = (n: number) => (bucket === 'week' ? n - ((new Date(n * DAY_MS).getUTCDay() + 6) % 7) : n);
    for (let n = label(start); n <= end; n += bucket === 'week' ? 7 : 1) {
      series.push({ start: day(n), count: days.filter((d) => label(d) === n && d >= start && d <= end).length });
    }
  } else {
    series = [];
  }
  const confirmed = m.filter((e) => e.confirmed_at !== null).length;
  return {
    total: rows.length,
    matching: m.length,
    bucket,
    series,
    countries: top((e) => e.country),
    sources: top((e) => e.source),
    campaigns: top((e) => e.utm_campaign),
    statuses: ENTRY_STATUSES.map((status) => ({ status, count: m.filter((e) => e.status === status).length })),
    confirmedShare: confirmation === 'required' && m.length > 0 ? confirmed / m.length : null,
    // No signup was held or refused in these suites (signup/screening.test.ts counts them).
    screening: NO_SCREENING,
  };
}

const NO_SCREENING = SCREENING_REASONS.map((reason) => ({ reason, count: 0 }));

describe.each(TEST_DIALECTS)('admin insights (%s)', (dialect: TestDialect) => {
  it('counts known data by hand: tops with other and ties, statuses, day buckets zero-filled', async () => {
    const h = await harness(dialect);
    const rows = knownRows();
    await insert(h, rows);
    const got = await insights(h, { from: '2026-03-01', to: '2026-03-10' });
    const march = rows.filter((e) => e.created_at < '2026-03-11');
    expect(got.total).toBe(43);
    expect(got.matching).toBe(march.length);
    expect(got.bucket).toBe('day');
    expect(got.series.map((s) => s.start)).toEqual(Array.from({ length: 10 }, (_, i) => `2026-03-${String(i + 1).padStart(2, '0')}`));
    const perDay = (d: string) => march.filter((e) => e.created_at.startsWith(d)).length;
    expect(got.series.map((s) => s.count)).toEqual(got.series.map((s) => perDay(s.start)));
    expect(got.series.find((s) => s.start === '2026-03-02')!.count).toBe(0);
    expect(got.series.reduce((sum, s) => sum + s.count, 0)).toBe(march.length);
    expect(got.confirmedShare).toBeNull();

    const all = await insights(h);
    // Ties by value: Austria before Brazil (4 each), Denmark before Egypt (2 each, Egypt left out).
    expect(all.countries).toEqual({
      top: [
        { value: 'Germany', count: 9 },
        { value: 'France', count: 7 },
        { value: null, count: 6 },
        { value: 'Spain', count: 5 },
        { value: 'Austria', count: 4 },
        { value: 'Brazil', count: 4 },
        { value: 'Chile', count: 3 },
        { value: 'Denmark', count: 2 },
      ],
      other: 3,
    });
    expect(all.statuses.map((s) => s.status)).toEqual([...ENTRY_STATUSES]);
    expect(all.statuses.reduce((sum, s) => sum + s.count, 0)).toBe(43);
    expect(all.statuses.find((s) => s.status === 'joined')!.count).toBe(rows.filter((r) => r.status === 'joined').length);
    expect(Date.parse(all.asOf)).not.toBeNaN();
  });

  it('rolls a range longer than INSIGHTS_MAX_DAYS up to ISO weeks starting on Monday', async () => {
    const h = await harness(dialect);
    const rows = knownRows();
    await insert(h, rows);
    const got = await insights(h, { from: '2026-01-01', to: '2026-06-30' });
    expect(got.bucket).toBe('week');
    // 2026-01-01 is a Thursday: the first week starts on Monday 2025-12-29; the last on 2026-06-29.
    expect(got.series[0]!.start).toBe('2025-12-29');
    expect(got.series[got.series.length - 1]!.start).toBe('2026-06-29');
    expect(got.series).toHaveLength(27);
    for (const s of got.series) expect(new Date(`${s.start}T00:00:00Z`).getUTCDay()).toBe(1);
    // 2026-03-01 (a Sunday) belongs to the week of Monday 2026-02-23; 2026-03-03 and 2026-03-10 to the next two.
    const week = (start: string) => got.series.find((s) => s.start === start)!.count;
    expect(week('2026-02-23')).toBe(rows.filter((e) => e.created_at.startsWith('2026-03-01')).length);
    expect(week('2026-03-02')).toBe(rows.filter((e) => e.created_at.startsWith('2026-03-03')).length);
    expect(week('2026-01-05')).toBe(0);
    expect(got.series.reduce((sum, s) => sum + s.count, 0)).toBe(rows.length);
  });

  it('agrees with a count in JavaScript for every kind of filter', async () => {
    const h = await harness(dialect, 'required');
    const rows = knownRows();
    // A thicker list, so that narrow date ranges are read from the rows and wide ones from the indexes.
    for (let i = 0; i < 200; i++) rows.push(entry(`2026-04-${String(1 + (i % 28)).padStart(2, '0')}T12:00:00.000Z`, { country: 'Germany', source: 'google' }));
    await insert(h, rows);
    const filters: WaitlistFilter[] = [
      {},
      { from: '2026-03-01', to: '2026-05-31' },
      { from: '2026-03-02', to: '2026-03-12' },
      { from: '2026-04-01' },
      { to: '2026-03-31' },
      { country: 'Germany' },
      { country: NONE_VALUE },
      { source: NONE_VALUE, status: 'invited' },
      { campaign: 'spring', from: '2026-03-01', to: '2026-03-31' },
      { q: '@' },
      { q: '@test.org' },
      { q: 'user1' },
      { status: 'confirmed' },
      { country: 'Atlantis' },
    ];
    for (const filter of filters) {
      const got = await insights(h, filter);
      const { asOf: _asOf, ...rest } = got;
      expect(rest, JSON.stringify(filter)).toEqual(expected(rows, filter, 'required'));
    }
  });

  it('keeps agreeing as entries change: status and confirmation updates, deletes, many small statements, deleting everything', async () => {
    const h = await harness(dialect, 'required');
    const { db } = h.t.app.database;
    const rows = knownRows();
    for (let i = 0; i < 100; i++) rows.push(entry(`2026-04-${String(1 + (i % 28)).padStart(2, '0')}T12:00:00.000Z`, { country: 'Germany', source: 'google' }));
    await insert(h, rows);
    // The rows as stored now, for the count in JavaScript.
    const stored = async (): Promise<WaitlistEntry[]> =>
      (await db.selectFrom('waitlist').selectAll().execute()).map((r) => ({ ...r, created_at: toIsoTimestamp(r.created_at), confirmed_at: r.confirmed_at === null ? null : toIsoTimestamp(r.confirmed_at) }) as WaitlistEntry);
    const filters: WaitlistFilter[] = [{}, { from: '2026-03-01', to: '2026-05-31' }, { from: '2026-04-02', to: '2026-04-09' }, { from: '2026-04-15' }, { to: '2026-03-31' }];
    const agree = async (step: string) => {
      const now = await stored();
      for (const filter of filters) {
        const { asOf: _asOf, ...rest } = await insights(h, filter);
        expect(rest, `${step} ${JSON.stringify(filter)}`).toEqual(expected(now, filter, 'required'));
      }
    };
    await agree('inserted');
    const ids = rows.map((r) => r.id);
    await db.updateTable('waitlist').set({ status: 'confirmed', confirmed_at: '2026-05-01T00:00:00.000Z' }).where('id', 'in', ids.slice(0, 40)).execute();
    await db.updateTable('waitlist').set({ status: 'invited', invited_at: '2026-05-02T00:00:00.000Z' }).where('id', 'in', ids.slice(20, 60)).execute();
    await db.updateTable('waitlist').set({ status: 'unsubscribed', unsubscribed_at: '2026-05-03T00:00:00.000Z' }).where('id', 'in', ids.slice(50, 70)).execute();
    await db.updateTable('waitlist').set({ country: 'Chile', source: null, utm_campaign: 'autumn' }).where('id', 'in', ids.slice(65, 90)).execute();
    // An update that changes no counted column.
    await db.updateTable('waitlist').set({ confirmation_sent_at: '2026-05-04T00:00:00.000Z' }).execute();
    await agree('updated');
    await db.deleteFrom('waitlist').where('id', 'in', ids.slice(30, 110)).execute();
    await agree('deleted');
    // Enough single statements to fold the running counts several times over.
    for (let i = 0; i < 150; i++) {
      await insert(h, [entry(`2026-04-${String(1 + (i % 5)).padStart(2, '0')}T08:00:00.000Z`, { country: i % 3 ? 'France' : null, utm_campaign: i % 2 ? 'spring' : null })]);
      if (i % 7 === 0) await db.deleteFrom('waitlist').where('id', '=', ids[110 + i]!).execute();
    }
    await agree('many statements');
    await db.deleteFrom('waitlist').execute();
    await agree('all deleted');
    await insert(h, rows.slice(0, 20));
    await agree('inserted again');
  });

  it('runs the range from the first matching day to today without from and to', async () => {
    const h = await harness(dialect);
    const now = Date.now();
    const rows = [entry(new Date(now - 10 * DAY_MS).toISOString(), { country: 'Germany' }), entry(new Date(now - 3 * DAY_MS).toISOString())];
    await insert(h, rows);
    const got = await insights(h);
    expect(got.bucket).toBe('day');
    expect(got.series).toHaveLength(11);
    expect(got.series[0]!).toEqual({ start: day(dayNumber(today()) - 10), count: 1 });
    expect(got.series[got.series.length - 1]!).toEqual({ start: today(), count: 0 });
    const germany = await insights(h, { country: 'Germany' });
    expect(germany.series).toHaveLength(11);
    expect(germany.series.reduce((s, b) => s + b.count, 0)).toBe(1);
  });

  it('answers an empty panel for an empty waitlist, and a zero-filled one for a range with no match', async () => {
    const h = await harness(dialect, 'required');
    const empty = await insights(h);
    expect(empty).toEqual({
      asOf: expect.any(String),
      total: 0,
      matching: 0,
      bucket: 'day',
      series: [],
      countries: { top: [], other: 0 },
      sources: { top: [], other: 0 },
      campaigns: { top: [], other: 0 },
      statuses: ENTRY_STATUSES.map((status) => ({ status, count: 0 })),
      confirmedShare: null,
      screening: NO_SCREENING,
    });
    const range = await insights(h, { from: '2026-03-01', to: '2026-03-03' });
    expect(range.series).toEqual([
      { start: '2026-03-01', count: 0 },
      { start: '2026-03-02', count: 0 },
      { start: '2026-03-03', count: 0 },
    ]);
  });

  it('gives the confirmed share only with double opt-in on: confirmed, and invited or unsubscribed after confirming', async () => {
    const rows = [
      entry('2026-03-01T00:00:00.000Z', { status: 'confirmed', confirmed_at: '2026-03-01T01:00:00.000Z' }),
      entry('2026-03-01T00:00:01.000Z', { status: 'invited', confirmed_at: '2026-03-01T01:00:00.000Z', invited_at: '2026-03-02T00:00:00.000Z' }),
      entry('2026-03-01T00:00:02.000Z', { status: 'invited', invited_at: '2026-03-02T00:00:00.000Z' }),
      entry('2026-03-01T00:00:03.000Z', { status: 'unsubscribed', confirmed_at: '2026-03-01T01:00:00.000Z', unsubscribed_at: '2026-03-03T00:00:00.000Z' }),
      entry('2026-03-01T00:00:04.000Z', { status: 'pending' }),
      entry('2026-03-01T00:00:05.000Z', { status: 'pending' }),
      entry('2026-03-01T00:00:06.000Z', { status: 'joined' }),
      entry('2026-03-01T00:00:07.000Z', { status: 'unsubscribed', unsubscribed_at: '2026-03-03T00:00:00.000Z' }),
    ];
    const on = await harness(dialect, 'required');
    await insert(on, rows);
    expect((await insights(on)).confirmedShare).toBe(3 / 8);
    expect((await insights(on, { status: 'invited' })).confirmedShare).toBe(1 / 2);
    expect((await insights(on, { status: 'pending' })).confirmedShare).toBe(0);
    expect((await insights(on, { country: 'Atlantis' })).confirmedShare).toBeNull();

    const off = await harness(dialect, 'off');
    await insert(off, rows);
    expect((await insights(off)).confirmedShare).toBeNull();
    expect((await insights(off, { status: 'invited' })).confirmedShare).toBeNull();
  });
});

describe('insights series range', () => {
  const filter = (f: WaitlistFilter) => f;

  it('uses the filter dates, else the first matching day to today (or a later last day)', () => {
    expect(seriesRange('2026-03-05', '2026-03-09', filter({}), '2026-03-20')).toEqual({ start: dayNumber('2026-03-05'), end: dayNumber('2026-03-20'), bucket: 'day' });
    expect(seriesRange('2026-03-05', '2026-04-09', filter({}), '2026-03-20')).toMatchObject({ end: dayNumber('2026-04-09') });
    expect(seriesRange(null, null, filter({ from: '2026-03-01', to: '2026-03-02' }), '2026-03-20')).toEqual({
      start: dayNumber('2026-03-01'),
      end: dayNumber('2026-03-02'),
      bucket: 'day',
    });
    expect(seriesRange(null, null, filter({}), '2026-03-20')).toBeNull();
    // A start in the future with no end: one day.
    expect(seriesRange(null, null, filter({ from: '2027-01-01' }), '2026-03-20')).toMatchObject({ start: dayNumber('2027-01-01'), end: dayNumber('2027-01-01') });
    const days = (f: WaitlistFilter) => {
      const r = seriesRange('2026-03-01', '2026-03-01', f, '2026-03-20')!;
      return r.end - r.start + 1;
    };
    expect(days({ from: '2026-03-01', to: '2026-06-01' })).toBe(93);
    expect(seriesRange('2026-03-01', '2026-03-01', filter({ from: '2026-03-01', to: '2026-05-31' }), '2026-03-20')!.bucket).toBe('day');
    expect(seriesRange('2026-03-01', '2026-03-01', filter({ from: '2026-03-01', to: '2026-06-01' }), '2026-03-20')!.bucket).toBe('week');
  });

  it('clips a range of decades to the matching days, and keeps at most INSIGHTS_MAX_RANGE_DAYS', () => {
    expect(seriesRange('2026-03-05', '2026-03-09', filter({ from: '1970-01-01' }), '2026-03-20')).toEqual({
      start: dayNumber('2026-03-05'),
      end: dayNumber('2026-03-20'),
      bucket: 'day',
    });
    expect(seriesRange('2026-03-05', '2026-03-09', filter({ from: '1970-01-01', to: '9999-12-31' }), '2026-03-20')).toMatchObject({
      start: dayNumber('2026-03-05'),
      end: dayNumber('2026-03-20'),
    });
    const wide = seriesRange('1980-01-01', '2026-03-09', filter({}), '2026-03-20')!;
    expect(wide.end - wide.start + 1).toBe(INSIGHTS_MAX_RANGE_DAYS);
    expect(wide.end).toBe(dayNumber('2026-03-20'));
    expect(wide.bucket).toBe('week');
  });

  it('labels week buckets by their Monday and counts only days inside the range', () => {
    const buckets = seriesBuckets({ start: dayNumber('2026-01-01'), end: dayNumber('2026-01-13'), bucket: 'week' });
    expect(buckets.map((b) => [day(b.start), day(b.lo), day(b.hi)])).toEqual([
      ['2025-12-29', '2026-01-01', '2026-01-05'],
      ['2026-01-05', '2026-01-05', '2026-01-12'],
      ['2026-01-12', '2026-01-12', '2026-01-14'],
    ]);
  });
});
