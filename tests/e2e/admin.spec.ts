import fs from 'node:fs/promises';
import type { Page, Route } from '@playwright/test';
import { E2E_ADMIN } from '../../playwright.config.js';
import { NO_CONSENT_RECORD, type WaitlistEntry } from '../../src/shared/waitlist/entry.js';
import { NO_ATTRIBUTION } from '../../src/shared/waitlist/attribution.js';
import { AUTH_STORAGE_KEY } from '../../src/web/session/auth-client.js';
import { expect, test } from './fixtures.js';
import { expectNoAxeViolations } from './mfa-helpers.js';

/**
 * The admin login (/auth) and the admin panel (/admin) against the real server (auth service, admin
 * API, CSV export), plus a few cases with the admin API mocked: thousands of rows, empty, failing, 401.
 *
 * Sessions come from the auth API (see fixtures.ts): one shared per worker for the tests that keep it,
 * and one of its own for each test that ends its session. One test signs in through the /auth page.
 */
test.describe.configure({ mode: 'serial' });

const people = (n: number) => `${n} ${n === 1 ? 'person' : 'people'} signed up`;
const uniqueEmail = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;

async function expectToast(page: Page, title: string, description: string) {
  const toast = page.locator('[data-sonner-toast]').filter({ hasText: title }).filter({ hasText: description });
  await expect(toast.first()).toBeVisible();
}

type MockEntry = WaitlistEntry;

function mockEntries(count: number): MockEntry[] {
  const newest = Date.parse('2026-11-22T06:00:00Z');
  return Array.from({ length: count }, (_, i) => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    email: `mock-${i}@example.com`,
    created_at: new Date(newest - i * 60_000).toISOString(),
    ip_address: i % 3 === 0 ? null : `10.0.${i % 250}.${i % 200}`,
    country: i % 4 === 0 ? null : 'Germany',
    city: i % 4 === 0 ? null : 'Berlin',
    region: null,
    ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION,
  }));
}

/** The mocked lists' counts are taken now, or at their newest entry if the clock is behind it. */
const mockAsOf = () => new Date(Math.max(Date.now(), Date.parse('2026-11-22T06:00:00Z'))).toISOString();

/** Serves GET /api/admin/waitlist from `entries` with keyset-style cursors (the offset, here); counts on the first page only, as the API. */
async function mockWaitlist(page: Page, entries: MockEntry[], seen: Array<{ url: URL; authorization?: string }> = []) {
  await page.route(
    (url) => url.pathname === '/api/admin/waitlist',
    async (route: Route) => {
      const url = new URL(route.request().url());
      seen.push({ url, authorization: route.request().headers()['authorization'] });
      const limit = Number(url.searchParams.get('limit') ?? 1000);
      const start = Number(url.searchParams.get('cursor') ?? 0);
      const slice = entries.slice(start, start + limit);
      const next = start + limit < entries.length ? String(start + limit) : null;
      const count = start === 0 ? entries.length : null;
      await route.fulfill({ json: { entries: slice, total: count, matching: count, asOf: mockAsOf(), nextCursor: next } });
    },
  );
}

test.describe('/auth', () => {
  test('no session: /admin sends you to the login page, which passes axe', async ({ page }) => {
    await page.goto('/admin');
    await expect(page).toHaveURL(/\/auth$/);
    await expect(page.getByRole('heading', { level: 1, name: 'Admin Login' })).toBeVisible();
    await expect(page).toHaveTitle(/^Admin Login · /);
    const email = page.getByLabel('Email');
    const password = page.getByLabel('Password');
    await expect(email).toHaveAttribute('type', 'email');
    await expect(email).toHaveAttribute('required', '');
    await expect(password).toHaveAttribute('type', 'password');
    await expect(password).toHaveAttribute('required', '');
    await expect(password).toHaveAttribute('autocomplete', 'current-password');
    await expect(page.getByRole('link', { name: 'Back to home' })).toHaveAttribute('href', '/');
    await expectNoAxeViolations(page);
  });

  test('wrong password: an "Error" toast with the server message, and the form is usable again', async ({ page }) => {
    await page.goto('/auth');
    await page.getByLabel('Email').fill(E2E_ADMIN.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign In' }).click();
    await expectToast(page, 'Error', 'Invalid login credentials');
    await expect(page).toHaveURL(/\/auth$/);
    await expect(page.getByRole('button', { name: 'Sign In' })).toBeEnabled();
    await expect(page.getByLabel('Password')).toBeFocused();
  });

  test('busy state, then /admin; with a session /auth goes straight to /admin', async ({ adminPage, page: login }) => {
    await adminPage.goto('/auth');
    await expect(adminPage).toHaveURL(/\/admin$/);

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await login.route((url) => url.pathname === '/auth/v1/token', async (route) => {
      await held;
      await route.continue();
    });
    await login.goto('/auth');
    await login.getByLabel('Email').fill(E2E_ADMIN.email);
    await login.getByLabel('Password').fill(E2E_ADMIN.password);
    await login.getByRole('button', { name: 'Sign In' }).click();
    await expect(login.getByRole('button', { name: 'Loading...' })).toBeDisabled();
    await expect(login.getByLabel('Email')).toBeDisabled();
    await expect(login.getByLabel('Password')).toBeDisabled();
    release();
    await expect(login).toHaveURL(/\/admin$/);
    await expect(login.getByText(`Welcome, ${E2E_ADMIN.email}`)).toBeVisible();
  });
});

test.describe('/admin with the real admin API', () => {
  test('lists entries newest first, selects, exports and deletes', async ({ adminPage: page, request }) => {
    // Two exports, a deletion and two axe scans of a page that, for this owner, also holds the Role
    // and Team cards (issue 32): about 30 s on a busy machine, so three times the default.
    test.slow();
    const emails = [uniqueEmail('admin-a'), uniqueEmail('admin-b'), uniqueEmail('admin-c')];
    for (const email of emails) expect((await request.post('/api/waitlist', { data: { email } })).status()).toBe(201);
    const [a, b, c] = emails as [string, string, string];

    await page.goto('/admin');
    await expect(page.getByRole('heading', { name: 'Waitlist' })).toBeVisible();
    await expect(page.getByRole('link', { name: 'View Site' })).toHaveAttribute('href', '/');
    const countLine = page.getByText(/^\d+ (person|people) signed up/);
    await expect(countLine).toBeVisible();
    const total = Number((await countLine.innerText()).split(' ')[0]);
    expect(total).toBeGreaterThanOrEqual(3);

    // Newest first: c was added last.
    const firstRows = page.locator('tbody tr[data-index]');
    await expect(firstRows.nth(0)).toContainText(c);
    await expect(firstRows.nth(1)).toContainText(b);
    // A loopback address has no location; a signup through the API without attribution is 'Direct'.
    await expect(firstRows.nth(0).locator('td').nth(4)).toHaveText('Unknown');
    await expect(page.getByRole('columnheader', { name: 'Source' })).toBeVisible();
    await expect(firstRows.nth(0).locator('td').nth(6)).toHaveText('Direct');
    await expect(firstRows.nth(0).locator('td').nth(2)).toHaveText(/^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{2}:\d{2} [AP]M$/);

    await expect(page.getByRole('button', { name: 'Delete Selected' })).toBeDisabled();
    await expect(page.getByRole('button', { name: 'Export Selected' })).toBeDisabled();
    await expect(page.getByRole('button', { name: 'Export All' })).toBeEnabled();

    await page.getByRole('checkbox', { name: `Select ${c}` }).click();
    await page.getByRole('checkbox', { name: `Select ${a}` }).click();
    await expect(countLine).toHaveText(`${people(total)} (2 selected)`);
    await expect(page.getByRole('checkbox', { name: 'Select all' })).toHaveAttribute('aria-checked', 'mixed');
    await expectNoAxeViolations(page);

    // Export Selected: the file the server names, holding exactly those two rows.
    const selectedDownload = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export Selected' }).click();
    const selectedFile = await selectedDownload;
    expect(selectedFile.suggestedFilename()).toBe('waitlist_selected.csv');
    const selectedCsv = await fs.readFile((await selectedFile.path())!, 'utf8');
    expect(selectedCsv.replace(/^\uFEFF/, '').split('\r\n')[0]).toBe('Email,Date Joined,IP Address,Location');
    expect(selectedCsv).toContain(a);
    expect(selectedCsv).toContain(c);
    expect(selectedCsv).not.toContain(b);
    await expectToast(page, 'Export successful', 'Exported 2 selected entries');

    // Export All: the browser downloads the file itself, from a form post of a one-time ticket
    // (no access token in it, nothing read by the page's scripts), and stays on /admin.
    const downloadRequest = page.waitForRequest((r) => r.url().endsWith('/api/admin/waitlist/exports/download'));
    const allDownload = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export All' }).click();
    const posted = await downloadRequest;
    expect(posted.method()).toBe('POST');
    expect(posted.resourceType()).toBe('document');
    expect(await posted.headerValue('authorization')).toBeNull();
    expect(posted.postData()).toMatch(/^ticket=[A-Za-z0-9_-]{43}$/);
    const allFile = await allDownload;
    expect(allFile.suggestedFilename()).toBe('waitlist_all.csv');
    const allCsv = await fs.readFile((await allFile.path())!, 'utf8');
    expect(allCsv.replace(/^\uFEFF/, '').split('\r\n').filter(Boolean)).toHaveLength(total + 1);
    await expectToast(page, 'Export successful', `Exported ${total} entries`);
    expect(new URL(page.url()).pathname).toBe('/admin');

    // Delete: confirm dialog, Esc cancels, Delete removes the rows and clears the selection.
    await page.getByRole('button', { name: 'Delete Selected' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Are you sure?' });
    await expect(dialog).toContainText('This will permanently delete 2 selected waitlist entries. This action cannot be undone.');
    await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await expectNoAxeViolations(page);
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();
    await expect(page.getByRole('button', { name: 'Delete Selected' })).toBeFocused();

    await page.getByRole('button', { name: 'Delete Selected' }).click();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await expectToast(page, 'Delete successful', 'Deleted 2 entries');
    await expect(dialog).toBeHidden();
    await expect(countLine).toHaveText(people(total - 2));
    await expect(page.getByRole('checkbox', { name: `Select ${c}` })).toHaveCount(0);
    await expect(page.getByRole('checkbox', { name: `Select ${a}` })).toHaveCount(0);
    await expect(firstRows.nth(0)).toContainText(b);

    // Gone on the server too.
    await page.reload();
    await expect(firstRows.nth(0)).toContainText(b);
    await expect(page.getByText(c)).toHaveCount(0);
  });
});

test.describe('/admin with a mocked admin API', () => {
  test('loads the first page, the next ones as the table scrolls; select-all covers rows not loaded yet', async ({ adminPage: page }) => {
    const seen: Array<{ url: URL; authorization?: string }> = [];
    await mockWaitlist(page, mockEntries(12_345), seen);
    await page.goto('/admin');
    await expect(page.getByText('12345 people signed up')).toBeVisible();
    // No filter: no second count line, and the address stays /admin.
    await expect(page.getByText(/match(es)? the filters$/)).toHaveCount(0);
    await expect(page).toHaveURL(/\/admin$/);

    // Only the first page, and a small one: the rest waits for the scroll.
    expect(seen).toHaveLength(1);
    expect(Number(seen[0]?.url.searchParams.get('limit'))).toBeLessThanOrEqual(200);
    expect(seen[0]?.url.searchParams.has('cursor')).toBe(false);
    const firstPage = Number(seen[0]?.url.searchParams.get('limit'));
    expect(await page.locator('tbody tr[data-index]').count()).toBeLessThan(80);
    await expect(page.getByRole('region', { name: 'Waitlist entries' }).getByRole('table')).toHaveAttribute('aria-rowcount', '12346');

    // Select-all selects every entry of the view, loaded or not.
    const selectAll = page.getByRole('checkbox', { name: 'Select all' });
    await selectAll.click();
    await expect(page.getByText('12345 people signed up (12345 selected)')).toBeVisible();
    await expect(selectAll).toHaveAttribute('aria-checked', 'true');

    // Scrolling towards the end of the loaded rows loads the next pages; the last row is reachable, ticked.
    const box = page.getByRole('region', { name: 'Waitlist entries' });
    await box.evaluate((el) => (el.scrollTop = el.scrollHeight));
    await expect.poll(() => seen.length).toBeGreaterThan(1);
    expect(seen[1]?.url.searchParams.get('cursor')).toBe(String(firstPage));
    await page.waitForFunction(
      () => {
        const el = document.querySelector<HTMLElement>('[role="region"][aria-label="Waitlist entries"]')!;
        el.scrollTop = el.scrollHeight;
        return document.querySelector('tbody tr[data-index="12344"]') !== null;
      },
      undefined,
      { timeout: 20_000 },
    );
    expect(seen.every((r) => /^Bearer \S+$/.test(r.authorization ?? ''))).toBe(true);
    expect(await page.locator('tbody tr[data-index]').count()).toBeLessThan(80);
    await expect(page.locator('tbody tr[data-index="12344"]')).toContainText('Unknown');
    const last = page.getByRole('checkbox', { name: 'Select mock-12344@example.com' });
    await expect(last).toHaveAttribute('aria-checked', 'true');

    await last.click();
    await expect(selectAll).toHaveAttribute('aria-checked', 'mixed');
    await expect(page.getByText('12345 people signed up (12344 selected)')).toBeVisible();
    await selectAll.click();
    await expect(selectAll).toHaveAttribute('aria-checked', 'true');
    await expect(last).toHaveAttribute('aria-checked', 'true');
    await selectAll.click();
    await expect(page.getByText('12345 people signed up', { exact: true })).toBeVisible();
    await expect(selectAll).toHaveAttribute('aria-checked', 'false');
  });

  test('one entry: singular count line and dialog text', async ({ adminPage: page }) => {
    await mockWaitlist(page, mockEntries(1));
    await page.goto('/admin');
    await expect(page.getByText('1 person signed up', { exact: true })).toBeVisible();
    await page.getByRole('checkbox', { name: 'Select mock-0@example.com' }).click();
    await expect(page.getByText('1 person signed up (1 selected)')).toBeVisible();
    await page.getByRole('button', { name: 'Delete Selected' }).click();
    await expect(page.getByRole('alertdialog')).toContainText(
      'This will permanently delete 1 selected waitlist entry. This action cannot be undone.',
    );
    await page.getByRole('button', { name: 'Cancel' }).click();
  });

  test('empty waitlist: the empty state and no buttons', async ({ adminPage: page }) => {
    await mockWaitlist(page, []);
    await page.goto('/admin');
    await expect(page.getByText('No waitlist entries yet.')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Export All' })).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Delete Selected' })).toHaveCount(0);
    await expectNoAxeViolations(page);
  });

  test('a spinner while loading; a failed load gives the "Failed to load" toast', async ({ adminPage: page }) => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(
      (url) => url.pathname === '/api/admin/waitlist',
      async (route) => {
        await held;
        await route.fulfill({ status: 500, json: { error: { code: 'internal_error', message: 'x' } } });
      },
    );
    await page.goto('/admin');
    // The table's spinner, by its exact name: the e-mail area's ("Loading e-mail status") may still be
    // showing too, as long as its own request (not held here) takes on a busy machine.
    const spinner = page.getByRole('status', { name: 'Loading', exact: true });
    await expect(spinner).toBeVisible();
    release();
    await expectToast(page, 'Error', 'Failed to load waitlist entries');
    await expect(spinner).toHaveCount(0);
  });

  test('a failed delete keeps the rows and says why', async ({ adminPage: page }) => {
    await mockWaitlist(page, mockEntries(3));
    await page.route('**/api/admin/waitlist/delete', (route) =>
      route.fulfill({ status: 500, json: { error: { code: 'internal_error', message: 'Something went wrong on our side.' } } }),
    );
    await page.goto('/admin');
    await page.getByRole('checkbox', { name: 'Select mock-1@example.com' }).click();
    await page.getByRole('button', { name: 'Delete Selected' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
    await expectToast(page, 'Error', 'Failed to delete entries: Something went wrong on our side.');
    await expect(page.getByText('3 people signed up (1 selected)')).toBeVisible();
  });
});

test.describe('opening /admin with a stored session', () => {
  test("the table's requests do not wait for the server's session check; a session the server refuses still ends on /auth", async ({ ownAdminContext, ownAdmin }) => {
    const page = await ownAdminContext.newPage();
    // Hold the check (GET /auth/v1/user) until the list has been asked for: with the request
    // waiting on the check, this would never happen and the test would time out.
    let listAsked!: () => void;
    const asked = new Promise<void>((resolve) => (listAsked = resolve));
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/api/admin/waitlist') listAsked();
    });
    await page.route(
      (url) => url.pathname === '/auth/v1/user',
      async (route) => {
        await asked;
        await route.continue();
      },
    );
    await page.goto('/admin');
    await expect(page.getByText(/^\d+ (person|people) signed up/)).toBeVisible();
    await expect(page.getByText(`Welcome, ${ownAdmin.email}`)).toBeVisible();
    await expect(page).toHaveURL(/\/admin$/);

    // The server no longer knows the session: the check sends the page to /auth.
    await page.unroute((url) => url.pathname === '/auth/v1/user');
    await page.route(
      (url) => url.pathname === '/auth/v1/user',
      (route) => route.fulfill({ status: 401, json: { code: 401, error_code: 'session_not_found', msg: 'Session from session_id claim in JWT does not exist' } }),
    );
    await page.reload();
    await expect(page).toHaveURL(/\/auth$/);
  });
});

test.describe('ending the session', () => {
  test('a 401 from the admin API signs out locally and goes to /auth', async ({ ownAdminContext, ownAdmin }) => {
    const page = await ownAdminContext.newPage();
    await page.goto('/admin');
    await expect(page).toHaveURL(/\/admin$/);
    await expect(page.getByText(`Welcome, ${ownAdmin.email}`)).toBeVisible();
    await page.route(
      (url) => url.pathname === '/api/admin/waitlist',
      (route) => route.fulfill({ status: 401, json: { error: { code: 'unauthorized', message: 'Sign in again.' } } }),
    );
    await page.reload();
    await expect(page).toHaveURL(/\/auth$/);
    await expectToast(page, 'Session expired', 'Please sign in again.');
    expect(await page.evaluate((key) => localStorage.getItem(key), AUTH_STORAGE_KEY)).toBeNull();
  });

  test('Sign Out: toast, /auth, and another tab follows', async ({ ownAdminContext, ownAdmin }) => {
    const first = await ownAdminContext.newPage();
    await first.goto('/admin');
    await expect(first).toHaveURL(/\/admin$/);
    await expect(first.getByText(`Welcome, ${ownAdmin.email}`)).toBeVisible();
    const second = await ownAdminContext.newPage();
    await second.goto('/admin');
    await expect(second.getByText(`Welcome, ${ownAdmin.email}`)).toBeVisible();

    await first.getByRole('button', { name: 'Sign Out', exact: true }).click();
    await expect(first).toHaveURL(/\/auth$/);
    // The spec's toast is a title only: 'Signed out successfully'.
    const signedOut = first.locator('[data-sonner-toast]').filter({ hasText: 'Signed out successfully' });
    await expect(signedOut.locator('[data-title]')).toHaveText('Signed out successfully');
    await expect(signedOut.locator('[data-description]')).toHaveCount(0);
    await expect(second).toHaveURL(/\/auth$/);

    await first.goto('/admin');
    await expect(first).toHaveURL(/\/auth$/);
  });
});
