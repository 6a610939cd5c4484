import fs from 'node:fs/promises';
import { expect, test } from './fixtures.js';
import { expectNoAxeViolations, screenshotView } from './mfa-helpers.js';
import { TESTING_THE_WATERS_STATEMENTS } from '../../src/shared/lists/contract.js';

/**
 * Interest lists per offering (issue 31) in Chromium against the production build, at 1280 and
 * 390 px: an admin makes an offering list and opens it, a visitor indicates interest with an
 * intended amount on its page (no JavaScript needed: a plain form), the admin switches to that list,
 * sees the entry with its band, and exports it with the List and Intended amount columns.
 */
test.describe.configure({ mode: 'serial' });

const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

for (const width of [1280, 390]) {
  test(`a visitor signs up to an offering with an amount; the admin sees it on that list and exports it (${width} px)`, async ({ adminPage: page, browser }) => {
    // Two pages and a download on a shared two-core machine: more than the default 30 s.
    test.setTimeout(90_000);
    await page.setViewportSize({ width, height: 900 });
    const slug = `orbit-${width}-${run}`;
    const name = `Orbit Farms ${width}`;

    // The admin creates the list (a draft), then opens it.
    await page.goto('/admin');
    await page.getByRole('button', { name: 'New offering list' }).click();
    const form = page.getByRole('form', { name: 'New offering list' });
    await form.getByLabel("Slug (the page's address)").fill(slug);
    await form.getByLabel('Issuer name').fill(name);
    await form.getByLabel('Short description').fill('Vertical farms for city rooftops.');
    await form.getByLabel('Amount bands (USD boundaries)').fill('1000, 5000, 25000');
    await form.getByRole('button', { name: 'Create list' }).click();
    await expect(page).toHaveURL(new RegExp(`[?&]list=${slug}(&|$)`));
    await page.getByRole('button', { name: 'Edit list' }).click();
    const edit = page.getByRole('form', { name: 'Edit list' });
    await edit.getByLabel('State').selectOption('open');
    await edit.getByRole('button', { name: 'Save list' }).click();
    await expect(page.getByRole('link', { name: `Public page /offerings/${slug}` })).toBeVisible();

    // A visitor, without JavaScript: the page is a plain form with the statements beside it.
    const visitor = await browser.newContext({ javaScriptEnabled: false, viewport: { width, height: 900 } });
    const offer = await visitor.newPage();
    await offer.goto(`/offerings/${slug}`);
    await expect(offer.getByRole('heading', { level: 1, name })).toBeVisible();
    const statements = offer.getByRole('complementary', { name: 'Testing the waters: please read' });
    for (const statement of TESTING_THE_WATERS_STATEMENTS) await expect(statements).toContainText(statement);
    await expect(offer.getByRole('group', { name: 'Intended amount (optional, non-binding)' })).toBeVisible();
    await screenshotView(offer, 'offering-page');
    // axe runs as a script: the same page in a context that runs scripts (the page has none of its own).
    const checker = await browser.newContext({ viewport: { width, height: 900 } });
    const checked = await checker.newPage();
    await checked.goto(`/offerings/${slug}`);
    await expectNoAxeViolations(checked);
    await checker.close();
    const email = `visitor-${width}-${run}@example.com`;
    await offer.getByLabel('Email').fill(email);
    await offer.getByRole('radio', { name: '$1,000 to $5,000' }).check();
    await offer.getByRole('button', { name: 'Indicate interest' }).click();
    await expect(offer.getByRole('status')).toContainText(`Your indication of interest in ${name} is recorded.`);
    await screenshotView(offer, 'offering-page-recorded');
    await visitor.close();

    // The admin's table of that list: the entry with its band.
    await page.reload();
    const row = page.locator('tbody tr[data-index]').filter({ hasText: email });
    await expect(row).toBeVisible();
    await expect(row).toContainText('$1,000 to $5,000');
    await expect(page.getByRole('columnheader', { name: 'Intended amount' })).toBeVisible();
    // The insight panel sums the list's non-binding amounts by band.
    const sums = page.getByRole('table').filter({ has: page.getByRole('columnheader', { name: "Sum at the band's ends" }) });
    await expect(sums.getByRole('row', { name: /\$1,000 to \$5,000 1 \$1,000 to \$5,000/ })).toBeVisible();
    await screenshotView(page, 'admin-offering-list');

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export All' }).click();
    const file = await download;
    const text = (await fs.readFile((await file.path())!, 'utf8')).replace(/^\uFEFF/, '');
    const [header, ...lines] = text.split('\r\n').filter((line) => line !== '');
    expect(header).toBe('Email,Date Joined,IP Address,Location,List,Intended amount');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^${email.replace(/\./g, '\\.')},.*,${name},"\\$1,000 to \\$5,000"$`));

    // Back to the portal's waitlist: the offering's entry is not on it.
    await page.getByLabel('List', { exact: true }).selectOption('portal');
    await expect(page).not.toHaveURL(/[?&]list=/);
    await expect(page.getByRole('columnheader', { name: 'Intended amount' })).toHaveCount(0);
  });
}
