import { describe, expect, it } from 'vitest';
import { bucketLabel, chartSummary, insightTexts, percentText, pointText, rangeText, seriesFacts, shareOf, topValueLabel } from './insight-copy.js';

const days = (from: string, counts: number[]) => {
  const start = Date.parse(`${from}T00:00:00Z`);
  return counts.map((count, i) => ({ start: new Date(start + i * 86_400_000).toISOString().slice(0, 10), count }));
};

describe('insight panel texts', () => {
  it('summarises a day series with its range, total and first peak', () => {
    const series = days('2026-11-01', [5, 210, 0, 210, 9]);
    expect(chartSummary(series, 'day')).toBe('Signups per day, Nov 1 to Nov 5 2026: 434 in total, peak 210 on Nov 2');
  });

  it('writes both years when a range crosses New Year, and thousands with separators', () => {
    const series = days('2025-12-30', [1000, 234, 0, 1]);
    expect(chartSummary(series, 'day')).toBe('Signups per day, Dec 30 2025 to Jan 2 2026: 1,235 in total, peak 1,000 on Dec 30');
  });

  it('summarises weeks up to the last week’s Sunday', () => {
    const series = [
      { start: '2026-11-02', count: 12 },
      { start: '2026-11-09', count: 40 },
      { start: '2026-11-16', count: 8 },
    ];
    expect(chartSummary(series, 'week')).toBe('Signups per week, Nov 2 to Nov 22 2026: 60 in total, peak 40 in the week of Nov 9');
  });

  it('words one bucket, no signups and an empty series', () => {
    expect(chartSummary([{ start: '2026-11-25', count: 3 }], 'day')).toBe('Signups per day, Nov 25 2026: 3 in total');
    expect(chartSummary(days('2026-11-01', [0, 0]), 'day')).toBe('Signups per day, Nov 1 to Nov 2 2026: no signups');
    expect(chartSummary([], 'week')).toBe('Signups per week: no signups');
    expect(seriesFacts(days('2026-11-01', [1, 4]), 'day')).toBe('Nov 1 to Nov 2 2026: 5 in total, peak 4 on Nov 2');
    expect(seriesFacts([], 'day')).toBeNull();
  });

  it('labels buckets in UTC whatever the start looks like', () => {
    expect(bucketLabel('2026-11-20', 'day')).toBe('Nov 20, 2026');
    expect(bucketLabel('2026-11-16', 'week')).toBe('Week of Nov 16, 2026');
    expect(bucketLabel('2026-01-01T00:00:00.000Z', 'day')).toBe('Jan 1, 2026');
    expect(bucketLabel('not a day', 'day')).toBe('not a day');
    expect(pointText(Date.UTC(2026, 10, 20), 1, 'day')).toBe('Nov 20: 1 signup');
    expect(pointText(Date.UTC(2026, 10, 16), 2500, 'week')).toBe('Week of Nov 16: 2,500 signups');
    expect(rangeText(Date.UTC(2026, 0, 1), Date.UTC(2026, 0, 1))).toBe('Jan 1 2026');
  });

  it('puts UTC in the chart title and names the table alternative', () => {
    expect(insightTexts.chartTitle('day')).toBe('Signups per day (UTC)');
    expect(insightTexts.chartTitle('week')).toContain('UTC');
    expect(insightTexts.tableCaption('day')).toBe('Signups per day');
    expect(insightTexts.tableCaption('week')).toBe('Signups per week');
  });

  it('rounds shares to whole percentages, keeping small ones visible', () => {
    expect(percentText(0.62)).toBe('62%');
    expect(percentText(0.625)).toBe('63%');
    expect(percentText(1)).toBe('100%');
    expect(percentText(0.001)).toBe('<1%');
    expect(percentText(0)).toBe('0%');
    expect(percentText(Number.NaN)).toBe('0%');
    expect(insightTexts.confirmed(0.62)).toBe('Confirmed: 62%');
    expect(shareOf(1, 4)).toBe(0.25);
    expect(shareOf(3, 0)).toBe(0);
  });

  it('names the "no value" groups', () => {
    expect(topValueLabel('country', null)).toBe('Unknown');
    expect(topValueLabel('source', null)).toBe('Direct');
    expect(topValueLabel('campaign', null)).toBe('No campaign');
    expect(topValueLabel('source', 'newsletter')).toBe('newsletter');
  });

  it('says how many signups the view counts', () => {
    expect(insightTexts.matching(1234, 1234, false)).toBe('1,234 signups');
    expect(insightTexts.matching(1, 1, false)).toBe('1 signup');
    expect(insightTexts.matching(12, 1234, true)).toBe('12 of 1,234 signups match this view');
  });
});
