import fs from 'node:fs/promises';
import type { APIRequestContext, Page } from '@playwright/test';
import { expect, test } from './fixtures.js';
import { expectNoAxeViolations, screenshotView } from './mfa-helpers.js';

/**
 * The admin's search and filters, select-all of every match, live updates and the Source column
 * (issue 10), against the real server. Every test signs up people at an address domain of its own,
 * so a domain search (`@domain`) shows exactly them whatever else the e2e database holds.
 */
test.describe.configure({ mode: 'serial' });

const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const domain = (label: string) => `${label}-${run}.example.com`;
const people = (n: number) => `${n} ${n === 1 ? 'person' : 'people'} signed up`;
const matches = (n: number) => `${n} ${n === 1 ? 'entry matches' : 'entries match'} the filters`;

async function signUp(request: APIRequestContext, email: string) {
  const response = await request.post('/api/waitlist', { data: { email } });
  expect(response.status(), email).toBe(201);
}

/** Signs up `count` people at `host`, oldest first (`<label>-0` is the oldest), a few at a time. */
async function signUpMany(request: APIRequestContext, label: string, host: string, count: number): Promise<string[]> {
  const emails = Array.from({ length: count }, (_, i) => `${label}-${i}@${host}`);
  for (let i = 0; i < emails.length; i += 10) await Promise.all(emails.slice(i, i + 10).map((email) => signUp(request, email)));
  return emails;
}

async function expectToast(page: Page, title: string, description: string) {
  const toast = page.locator('[data-sonner-toast]').filter({ hasText: title }).filter({ hasText: description });
  await expect(toast.first()).toBeVisible();
}

const countLine = (page: Page) => page.getByText(/^\d+ (person|people) signed up/);
const matchLine = (page: Page) => page.getByText(/^\d+ (entry matches|entries match) the filters$/);
const filters = (page: Page) => page.getByRole('search', { name: 'Filter the waitlist' });
const rows = (page: Page) => page.locator('tbody tr[data-index]');

async function readTotal(page: Page): Promise<number> {
  await expect(countLine(page)).toBeVisible();
  return Number((await countLine(page).innerText()).split(' ')[0]);
}

/** The data lines of a downloaded CSV (BOM, header and the final line break left out). */
async function csvLines(path: string): Promise<{ header: string; lines: string[] }> {
  const text = (await fs.readFile(path, 'utf8')).replace(/^\uFEFF/, '');
  const [header = '', ...lines] = text.split('\r\n');
  return { header, lines: lines.filter((line) => line !== '') };
}

test('search and a select filter the table; the address keeps them across a reload; Clear filters', async ({ adminPage: page, request }) => {
  const host = domain('filter');
  // One after the other: the table's newest-first order is checked below (signups sent together
  // may share a commit and a timestamp, and are then ordered by their random ids).
  const emails = [0, 1, 2].map((i) => `f-${i}@${host}`);
  for (const email of emails) await signUp(request, email);
  await signUp(request, `other-${run}@${domain('elsewhere')}`);

  await page.goto('/admin');
  const total = await readTotal(page);
  await expect(matchLine(page)).toHaveCount(0);

  const search = filters(page).getByRole('searchbox', { name: 'Search' });
  await expect(search).toHaveAttribute('placeholder', 'E-mail or @domain');
  await search.fill(`@${host}`);
  await search.press('Enter');
  await expect(page).toHaveURL(new RegExp(`/admin\\?q=%40${host.replace(/\./g, '\\.')}$`));
  await expect(matchLine(page)).toHaveText(matches(3));
  // The spec's count line still counts the whole waitlist.
  await expect(countLine(page)).toHaveText(people(total));
  await expect(rows(page)).toHaveCount(3);
  // Newest first.
  await expect(rows(page).nth(0)).toContainText(emails[2]!);

  const status = filters(page).getByRole('combobox', { name: 'Status', exact: true });
  await status.selectOption({ label: 'Joined' });
  await expect(page).toHaveURL(/[?&]status=joined(&|$)/);
  await expect(matchLine(page)).toHaveText(matches(3));
  await status.selectOption({ label: 'Pending' });
  await expect(page).toHaveURL(/[?&]status=pending(&|$)/);
  await expect(page.getByText('No entries match the filters.')).toBeVisible();
  await expect(matchLine(page)).toHaveText(matches(0));
  // The waitlist is not empty: the spec's buttons stay, and its empty-state text is not shown.
  await expect(page.getByRole('button', { name: 'Export All' })).toBeVisible();
  await expect(page.getByText('No waitlist entries yet.')).toHaveCount(0);
  await expectNoAxeViolations(page);

  // A reload (or a shared link) shows the same view.
  const address = page.url();
  await page.reload();
  await expect(page).toHaveURL(address);
  await expect(page.getByText('No entries match the filters.')).toBeVisible();
  await expect(filters(page).getByRole('searchbox', { name: 'Search' })).toHaveValue(`@${host}`);
  await expect(filters(page).getByRole('combobox', { name: 'Status', exact: true })).toHaveValue('pending');

  // Clear filters: the whole waitlist again, and a plain address.
  await page.getByRole('region', { name: 'Waitlist', exact: true }).getByRole('button', { name: 'Clear filters' }).first().click();
  await expect(page).toHaveURL(/\/admin$/);
  await expect(matchLine(page)).toHaveCount(0);
  await expect(filters(page).getByRole('searchbox', { name: 'Search' })).toHaveValue('');
  await expect(filters(page).getByRole('combobox', { name: 'Status', exact: true })).toHaveValue('');
  await expect(rows(page).first()).toBeVisible();

  // Typing searches too, after a short pause (no Enter).
  await filters(page).getByRole('searchbox', { name: 'Search' }).fill(emails[1]!);
  await expect(page).toHaveURL(/[?&]q=/);
  await expect(matchLine(page)).toHaveText(matches(1));
  await expect(rows(page)).toHaveCount(1);
  await expect(rows(page).first()).toContainText(emails[1]!);
});

test('select-all of a filtered view covers rows not loaded yet: Export Selected and Delete Selected act on exactly its matches', async ({
  adminPage: page,
  request,
}) => {
  test.setTimeout(90_000);
  const host = domain('bulk');
  // More than the first page holds, so most matches are not loaded when select-all is pressed.
  const count = 170;
  const emails = await signUpMany(request, 'b', host, count);
  const keeper = `keep-${run}@${domain('keep')}`;
  await signUp(request, keeper);

  // A shared link opens the filtered view. The first page is asked for once, for that filter
  // (early, from the stored session, and taken up by the table).
  const firstPages: URL[] = [];
  const onRequest = (sent: { url(): string }) => {
    const url = new URL(sent.url());
    if (url.pathname === '/api/admin/waitlist' && url.searchParams.get('limit') === '150') firstPages.push(url);
  };
  page.on('request', onRequest);
  await page.goto(`/admin?q=${encodeURIComponent(`@${host}`)}`);
  await expect(matchLine(page)).toHaveText(matches(count));
  page.off('request', onRequest);
  expect(firstPages.map((url) => url.searchParams.get('q'))).toEqual([`@${host}`]);
  const total = await readTotal(page);
  await expect(page.getByRole('region', { name: 'Waitlist entries' }).getByRole('table')).toHaveAttribute('aria-rowcount', String(count + 1));

  const selectAll = page.getByRole('checkbox', { name: 'Select all' });
  await selectAll.click();
  await expect(countLine(page)).toHaveText(`${people(total)} (${count} selected)`);
  await expect(selectAll).toHaveAttribute('aria-checked', 'true');
  // Untick the newest one: it stays.
  const spared = emails[count - 1]!;
  await page.getByRole('checkbox', { name: `Select ${spared}` }).click();
  await expect(countLine(page)).toHaveText(`${people(total)} (${count - 1} selected)`);
  await expect(selectAll).toHaveAttribute('aria-checked', 'mixed');

  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export Selected' }).click();
  const file = await download;
  expect(file.suggestedFilename()).toBe('waitlist_selected.csv');
  const { header, lines } = await csvLines((await file.path())!);
  expect(header).toBe('Email,Date Joined,IP Address,Location');
  expect(lines).toHaveLength(count - 1);
  expect(lines.map((line) => line.split(',')[0]).sort()).toEqual(emails.filter((e) => e !== spared).sort());
  await expectToast(page, 'Export successful', `Exported ${count - 1} selected entries`);

  await page.getByRole('button', { name: 'Delete Selected' }).click();
  const dialog = page.getByRole('alertdialog', { name: 'Are you sure?' });
  await expect(dialog).toContainText(`This will permanently delete ${count - 1} selected waitlist entries. This action cannot be undone.`);
  await dialog.getByRole('button', { name: 'Delete' }).click();
  await expectToast(page, 'Delete successful', `Deleted ${count - 1} entries`);
  await expect(dialog).toBeHidden();
  await expect(matchLine(page)).toHaveText(matches(1));
  await expect(countLine(page)).toHaveText(people(total - (count - 1)));
  await expect(rows(page)).toHaveCount(1);
  await expect(rows(page).first()).toContainText(spared);

  // Nothing outside the filter was touched.
  await page.goto(`/admin?q=${encodeURIComponent(keeper)}`);
  await expect(matchLine(page)).toHaveText(matches(1));
  await expect(rows(page).first()).toContainText(keeper);
});

test('a signup made while the page is open appears live, in the table and the count lines, if it matches the filter', async ({ adminPage: page, request }) => {
  const host = domain('live');
  const [first] = await signUpMany(request, 'l', host, 1);
  await page.goto(`/admin?q=${encodeURIComponent(`@${host}`)}`);
  await expect(matchLine(page)).toHaveText(matches(1));
  await expect(rows(page).first()).toContainText(first!);
  const total = await readTotal(page);
  await expect(page.getByRole('status').filter({ hasText: /^Live$/ })).toBeVisible({ timeout: 15_000 });

  const newcomer = `l-new@${host}`;
  await signUp(request, newcomer);
  await expect(page.getByRole('checkbox', { name: `Select ${newcomer}` })).toBeVisible({ timeout: 15_000 });
  await expect(rows(page).first()).toContainText(newcomer);
  await expect(matchLine(page)).toHaveText(matches(2));
  await expect(countLine(page)).toHaveText(people(total + 1));

  // Someone outside the filter: counted in the waitlist, not shown here.
  await signUp(request, `l-other-${run}@${domain('live-other')}`);
  await expect(countLine(page)).toHaveText(people(total + 2), { timeout: 15_000 });
  await expect(matchLine(page)).toHaveText(matches(2));
  await expect(rows(page)).toHaveCount(2);
});

test('arriving with UTM parameters, the signup shows its source in the admin; filter by it; export with attribution', async ({ page: visitor, adminPage: page }) => {
  const email = `utm-${run}@${domain('utm')}`;
  await visitor.goto('/?utm_source=newsletter&utm_campaign=launch');
  await visitor.getByPlaceholder('Enter your email').fill(email);
  await visitor.getByRole('button', { name: 'Join the Waitlist' }).click();
  await expect(visitor).toHaveURL(/\/thanks$/);

  await page.goto(`/admin?q=${encodeURIComponent(email)}`);
  await expect(matchLine(page)).toHaveText(matches(1));
  const source = rows(page).first().locator('td').nth(6);
  await expect(source).toHaveText('newsletter');
  await expect(source).toHaveAttribute('title', /utm_campaign: launch/);

  // The Source and Campaign filters narrow to it too.
  const sourceField = filters(page).getByRole('combobox', { name: 'Source', exact: true });
  await sourceField.fill('newsletter');
  await sourceField.press('Enter');
  await expect(page).toHaveURL(/[?&]source=newsletter(&|$)/);
  const campaign = filters(page).getByRole('combobox', { name: 'Campaign', exact: true });
  await campaign.fill('launch');
  await campaign.press('Enter');
  await expect(page).toHaveURL(/[?&]campaign=launch(&|$)/);
  await expect(matchLine(page)).toHaveText(matches(1));
  await campaign.fill('another-campaign');
  await campaign.press('Enter');
  await expect(page.getByText('No entries match the filters.')).toBeVisible();
  await campaign.fill('launch');
  await campaign.press('Enter');
  await expect(rows(page)).toHaveCount(1);

  // The export's attribution columns, on request only.
  await page.getByRole('checkbox', { name: 'Select all' }).click();
  await page.getByRole('checkbox', { name: 'Include attribution columns' }).check();
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export Selected' }).click();
  const { header, lines } = await csvLines((await (await download).path())!);
  expect(header.startsWith('Email,Date Joined,IP Address,Location,')).toBe(true);
  expect(header.split(',')).toEqual(expect.arrayContaining(['Source', 'UTM Source', 'UTM Campaign', 'Referrer']));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(email);
  expect(lines[0]).toContain('newsletter');
  expect(lines[0]).toContain('launch');
});

test('with filters active the page passes axe and has no sideways scroll at 1280 and 390 px', async ({ adminPage: page, request }) => {
  const host = domain('axe');
  await signUpMany(request, 'a', host, 2);
  await page.goto(`/admin?q=${encodeURIComponent(`@${host}`)}&status=joined&from=2020-01-01`);
  await expect(matchLine(page)).toHaveText(matches(2));
  await expect(filters(page).getByLabel('From')).toHaveValue('2020-01-01');
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
    await expect(rows(page)).toHaveCount(2);
    await expectNoAxeViolations(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `sideways scroll at ${width} px`).toBeLessThanOrEqual(0);
  }
  await screenshotView(page, 'admin-filters');
});
