import type { Page, Request } from '@playwright/test';
import { ADMIN_INSIGHTS_PATH, type WaitlistInsights } from '../../src/shared/admin/waitlist-api.js';
import { expect, test } from './fixtures.js';
import { expectNoAxeViolations, screenshotView } from './mfa-helpers.js';

/**
 * The insight panel on /admin (issue 10): signups per UTC day or week as a chart with a table
 * alternative, the top countries, sources and campaigns (each value narrows the view: the filter
 * goes into the page's address), the statuses and the confirmed share.
 *
 * Against the real server, a campaign of its own keeps the numbers known while other tests add
 * signups to the same database. With the insights API mocked, a long weekly series and a named
 * country (the e2e server's loopback signups have none).
 */
test.describe.configure({ mode: 'serial' });

const unique = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

/** "Nov 25, 2026" for a UTC day, as the table alternative writes it. */
const utcDayLabel = (time: number) => new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' }).format(time);

function panel(page: Page) {
  return page.getByRole('region', { name: 'Insights', exact: true });
}

const isInsightsRequest = (request: Request) => new URL(request.url()).pathname === ADMIN_INSIGHTS_PATH;

test.describe('insight panel with the real admin API', () => {
  test('shows the signups of a campaign per day, as a chart and a table, and narrows by a top value', async ({ adminPage: page, request }) => {
    const campaign = unique('insights');
    const signups = [
      { email: `${unique('ins-a')}@example.com`, utm_source: 'E2E-News', utm_campaign: campaign },
      { email: `${unique('ins-b')}@example.com`, utm_source: 'e2e-news', utm_campaign: campaign },
      { email: `${unique('ins-c')}@example.com`, utm_campaign: campaign },
    ];
    for (const data of signups) expect((await request.post('/api/waitlist', { data })).status()).toBe(201);
    const today = utcDayLabel(Date.now());

    // The panel's first request goes out as the table's first page arrives, and is the only one
    // made before the first answer (a live update may ask again later).
    const asked: URL[] = [];
    let answered = false;
    page.on('request', (sent) => {
      const url = new URL(sent.url());
      if (url.pathname === ADMIN_INSIGHTS_PATH && !answered) asked.push(url);
    });
    page.on('response', (received) => {
      if (new URL(received.url()).pathname === ADMIN_INSIGHTS_PATH) answered = true;
    });
    await page.goto(`/admin?campaign=${encodeURIComponent(campaign)}`);
    const insights = panel(page);
    await expect(insights.getByRole('heading', { level: 2, name: 'Insights' })).toBeVisible();
    await expect(insights.getByRole('heading', { name: 'Signups per day (UTC)' })).toBeVisible();
    await expect(insights.getByText(/^3 of [\d,]+ signups match this view$/)).toBeVisible();
    expect(asked.map((url) => url.searchParams.get('campaign'))).toEqual([campaign]);

    // The chart is an image named by its summary; its numbers are in a real table.
    await expect(insights.getByRole('img', { name: /^Signups per day, .+: 3 in total/ })).toBeVisible();
    const table = insights.getByRole('table', { name: 'Signups per day' });
    await expect(table.getByRole('columnheader')).toHaveText(['Day (UTC)', 'Signups']);
    await expect(table.getByRole('row', { name: `${today} 3`, exact: true })).toHaveCount(1);

    // Top lists: the source is lower-cased at signup; no utm_source and no referrer is "Direct".
    const sources = insights.getByRole('list', { name: 'Top sources' });
    await expect(sources.getByRole('listitem')).toHaveCount(2);
    await expect(sources.getByRole('listitem').nth(0)).toContainText('e2e-news');
    await expect(sources.getByRole('listitem').nth(0)).toContainText('2 · 67%');
    await expect(sources.getByRole('listitem').nth(1)).toContainText('Direct');
    await expect(sources.getByRole('listitem').nth(1)).toContainText('1 · 33%');
    const campaigns = insights.getByRole('list', { name: 'Top campaigns' });
    await expect(campaigns.getByRole('button', { name: campaign })).toHaveAttribute('aria-pressed', 'true');
    await expect(campaigns.getByRole('listitem')).toContainText(['3 · 100%']);
    // Loopback signups have no location.
    const countries = insights.getByRole('list', { name: 'Top countries' });
    await expect(countries.getByRole('listitem')).toHaveCount(1);
    await expect(countries.getByRole('listitem')).toContainText('3 · 100%');
    await expectNoAxeViolations(page);

    // "Show as table" shows the same table on screen.
    await insights.getByRole('button', { name: 'Show as table' }).click();
    await expect(insights.getByRole('button', { name: 'Hide table' })).toHaveAttribute('aria-expanded', 'true');
    await expect(insights.getByRole('region', { name: 'Signups per day' }).getByRole('cell', { name: '3', exact: true })).toBeVisible();
    await expectNoAxeViolations(page);

    // A top country narrows the view: into the address, and the panel asks for it.
    const narrowed = page.waitForRequest((r) => isInsightsRequest(r) && new URL(r.url()).searchParams.get('country') === '(none)');
    await countries.getByRole('button', { name: 'Unknown' }).click();
    await narrowed;
    await expect(page).toHaveURL((url) => url.searchParams.get('country') === '(none)' && url.searchParams.get('campaign') === campaign);
    await expect(countries.getByRole('button', { name: 'Unknown' })).toHaveAttribute('aria-pressed', 'true');
    await expect(insights.getByText(/^3 of [\d,]+ signups match this view$/)).toBeVisible();

    // Pressed again, the filter goes.
    await countries.getByRole('button', { name: 'Unknown' }).click();
    await expect(page).toHaveURL((url) => !url.searchParams.has('country') && url.searchParams.get('campaign') === campaign);
    await expect(countries.getByRole('button', { name: 'Unknown' })).toHaveAttribute('aria-pressed', 'false');

    // The filter survives a reload.
    await sources.getByRole('button', { name: 'Direct' }).click();
    await expect(page).toHaveURL((url) => url.searchParams.get('source') === '(none)');
    await page.reload();
    await expect(insights.getByText(/^1 of [\d,]+ signups match this view$/)).toBeVisible();
    await expect(insights.getByRole('img', { name: /^Signups per day, .+: 1 in total/ })).toBeVisible();
    await expect(insights.getByRole('list', { name: 'Top sources' }).getByRole('button', { name: 'Direct' })).toHaveAttribute('aria-pressed', 'true');
  });

  test('a new signup reaches the chart without a reload', async ({ adminPage: page, request }) => {
    const campaign = unique('insights-live');
    expect((await request.post('/api/waitlist', { data: { email: `${unique('live-a')}@example.com`, utm_campaign: campaign } })).status()).toBe(201);
    await page.goto(`/admin?campaign=${encodeURIComponent(campaign)}`);
    const insights = panel(page);
    await expect(insights.getByRole('img', { name: /^Signups per day, .+: 1 in total/ })).toBeVisible();

    expect((await request.post('/api/waitlist', { data: { email: `${unique('live-b')}@example.com`, utm_campaign: campaign } })).status()).toBe(201);
    await expect(insights.getByRole('img', { name: /^Signups per day, .+: 2 in total/ })).toBeVisible({ timeout: 15_000 });
    await expect(insights.getByRole('table', { name: 'Signups per day' }).getByRole('row', { name: `${utcDayLabel(Date.now())} 2`, exact: true })).toHaveCount(1);
  });
});

/** 420 weeks from Monday 2018-12-31 (longer than INSIGHTS_MAX_DAYS, so per week), with known counts. */
function weeklyInsights(country: string | null): WaitlistInsights {
  const first = Date.UTC(2018, 11, 31);
  const series = Array.from({ length: 420 }, (_, i) => ({
    start: new Date(first + i * 7 * 86_400_000).toISOString().slice(0, 10),
    count: i === 300 ? 1234 : (i * 13) % 97,
  }));
  const matching = country ? 4100 : 12_345;
  return {
    asOf: new Date().toISOString(),
    total: 12_345,
    matching,
    bucket: 'week',
    series,
    countries: country
      ? { top: [{ value: country, count: 4100 }], other: 0 }
      : {
          top: [
            { value: 'Germany', count: 4100 },
            { value: 'United States', count: 3000 },
            { value: null, count: 2000 },
          ],
          other: 3245,
        },
    sources: { top: [{ value: 'newsletter', count: 6000 }, { value: null, count: matching - 6000 > 0 ? matching - 6000 : 0 }], other: 0 },
    campaigns: { top: [{ value: null, count: matching }], other: 0 },
    statuses: [
      { status: 'pending', count: 1000 },
      { status: 'confirmed', count: matching - 1000 },
    ],
    confirmedShare: 0.62,
    screening: [
      { reason: 'disposable', count: 17 },
      { reason: 'dead-domain', count: 4 },
      { reason: 'no-challenge', count: 0 },
      { reason: 'rate-limit', count: 1203 },
    ],
  };
}

test.describe('insight panel with the insights API mocked', () => {
  test('a long range is charted per week; a named country narrows the view; fits 390 px', async ({ adminPage: page }) => {
    const asked: URL[] = [];
    await page.route(
      (url) => url.pathname === ADMIN_INSIGHTS_PATH,
      async (route) => {
        const url = new URL(route.request().url());
        asked.push(url);
        await route.fulfill({ json: weeklyInsights(url.searchParams.get('country')) });
      },
    );
    await page.goto('/admin');
    const insights = panel(page);
    await expect(insights.getByRole('heading', { name: 'Signups per week (UTC, weeks start Monday)' })).toBeVisible();
    await expect(insights.getByText('12,345 signups', { exact: true })).toBeVisible();
    // 2018-12-31 + 300 weeks = 2024-09-30; the last week (419) starts 2027-01-11 and ends on Sunday the 17th.
    const chart = insights.getByRole('img', { name: /^Signups per week, Dec 31 2018 to Jan 17 2027: 21,242 in total, peak 1,234 in the week of Sep 30$/ });
    await expect(chart).toBeVisible();
    // The canvas itself is drawn (uPlot arrived in its own chunk).
    await expect(chart.locator('canvas').first()).toBeVisible();
    const table = insights.getByRole('table', { name: 'Signups per week' });
    await expect(table.getByRole('row')).toHaveCount(421);
    await expect(table.getByRole('row', { name: 'Week of Sep 30, 2024 1,234', exact: true })).toHaveCount(1);
    await expect(table.getByRole('columnheader')).toHaveText(['Week (UTC)', 'Signups']);
    await expect(insights.getByText('Confirmed: 62%')).toBeVisible();
    const countries = insights.getByRole('list', { name: 'Top countries' });
    await expect(countries.getByRole('listitem')).toHaveText([/^Germany\s*4,100 · 33%$/, /^United States\s*3,000 · 24%$/, /^Unknown\s*2,000 · 16%$/, /^Other\s*3,245 · 26%$/]);
    // Held and refused signups by reason (issue 28), every reason with its count.
    const screening = insights.getByRole('table', { name: 'Held and refused signups' });
    await expect(screening.getByRole('row')).toHaveText([/^Reason\s*Signups$/, /^Throwaway domain\s*17$/, /^Domain cannot receive mail\s*4$/, /^No proof-of-work\s*0$/, /^Too many signups from one address\s*1,203$/]);
    await expect(insights.getByText('All time. Counted by reason and by day only: the other filters do not apply.')).toBeVisible();
    await expectNoAxeViolations(page);
    await screenshotView(page, 'admin-insights');

    const narrowed = page.waitForRequest((r) => isInsightsRequest(r) && new URL(r.url()).searchParams.get('country') === 'Germany');
    await countries.getByRole('button', { name: 'Germany' }).click();
    await narrowed;
    await expect(page).toHaveURL(/[?&]country=Germany(&|$)/);
    await expect(insights.getByText('4,100 of 12,345 signups match this view')).toBeVisible();
    await expect(countries.getByRole('button', { name: 'Germany' })).toHaveAttribute('aria-pressed', 'true');
    expect(asked.at(-1)?.searchParams.get('country')).toBe('Germany');

    // 390 px wide: no sideways scrolling, the chart narrows with the page.
    await page.setViewportSize({ width: 390, height: 844 });
    await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const box = await chart.boundingBox();
    expect(box?.width ?? 0).toBeLessThanOrEqual(390);
    expect(box?.width ?? 0).toBeGreaterThan(200);
    await expectNoAxeViolations(page);
    await screenshotView(page, 'admin-insights-filtered');
  });

  test('a failed load shows the reason and Try again loads again', async ({ adminPage: page }) => {
    let fail = true;
    await page.route(
      (url) => url.pathname === ADMIN_INSIGHTS_PATH,
      async (route) => {
        if (fail) await route.fulfill({ status: 500, json: { error: { code: 'internal_error', message: 'Something went wrong on our side.' } } });
        else await route.fulfill({ json: weeklyInsights(null) });
      },
    );
    await page.goto('/admin');
    const insights = panel(page);
    await expect(insights.getByText('The insights could not be loaded.')).toBeVisible();
    fail = false;
    await insights.getByRole('button', { name: 'Try again' }).click();
    await expect(insights.getByRole('img', { name: /^Signups per week, / })).toBeVisible();
    await expectNoAxeViolations(page);
  });
});
