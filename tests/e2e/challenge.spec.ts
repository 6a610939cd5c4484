import { expect, test } from '@playwright/test';
import { ADMIN_WAITLIST_PATH, type WaitlistPage } from '../../src/shared/admin/waitlist-api.js';
import { CHALLENGE_PATH } from '../../src/shared/waitlist/challenge-contract.js';
import { SIGNUP_PATH } from '../../src/shared/waitlist/signup-contract.js';
import { signIn } from '../support/sign-in.js';
import { sessionStorageState } from './fixtures.js';
import { expectNoAxeViolations, expectToast, screenshotView, startE2eServer, uniqueAdminEmail, type E2eServer } from './mfa-helpers.js';

/**
 * SIGNUP_CHALLENGE=proof-of-work in Chromium against a server of its own (the production build):
 * the visitor's browser solves the challenge without being asked anything and lands on /thanks, joined;
 * a script's plain POST is answered the same but held, shows as Held (with its reason) in /admin
 * filtered to Status = Held, and is approved there.
 */

let server: E2eServer;
const admin = { email: uniqueAdminEmail('challenge-admin'), password: 'correct horse battery staple 42' };
const uniqueEmail = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;

test.describe.configure({ mode: 'serial', timeout: 120_000 });

test.beforeAll(async () => {
  server = await startE2eServer({
    SIGNUP_CHALLENGE: 'proof-of-work',
    E2E_ADMIN_EMAIL: admin.email,
    E2E_ADMIN_PASSWORD: admin.password,
    SIGNUP_RATE_LIMIT_MAX: '1000',
  });
});

test.afterAll(async () => {
  await server?.stop();
});

/** The stored entry of `email`, through the admin API. */
async function entryOf(email: string) {
  const { access_token: token } = await signIn(server.baseUrl, admin);
  const response = await fetch(`${server.baseUrl}${ADMIN_WAITLIST_PATH}?q=${encodeURIComponent(email)}`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  const page = (await response.json()) as WaitlistPage;
  return page.entries.find((e) => e.email === email);
}

test('a visitor signs up with the challenge on: no checkbox, nothing to read, /thanks, and the entry is joined', async ({ page }) => {
  const email = uniqueEmail('visitor');
  const challenges: string[] = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname === CHALLENGE_PATH) challenges.push(request.url());
  });
  await page.goto(`${server.baseUrl}/`);
  // The form is the spec's: one field, one button, no checkbox or widget.
  await expect(page.getByRole('checkbox')).toHaveCount(0);
  await expectNoAxeViolations(page);
  const input = page.getByPlaceholder('Enter your email');
  await input.click();
  await input.pressSequentially(email, { delay: 5 });
  await page.getByRole('button', { name: 'Join the Waitlist' }).click();
  await expect(page).toHaveURL(/\/thanks$/);
  await expect(page.getByRole('heading', { name: 'Thank You!' })).toBeVisible();
  expect(challenges).toHaveLength(1);
  expect(await entryOf(email)).toMatchObject({ status: 'joined', held_reason: null });
});

test("a script's plain POST is answered as a signup, shows as Held in /admin and is approved there", async ({ browser }) => {
  const email = uniqueEmail('script');
  const posted = await fetch(`${server.baseUrl}${SIGNUP_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email }),
  });
  expect(posted.status).toBe(201);
  expect(await posted.json()).toEqual({ status: 'joined' });
  expect(await entryOf(email)).toMatchObject({ status: 'held', held_reason: 'challenge_missing' });

  const context = await browser.newContext({ storageState: sessionStorageState(server.baseUrl, await signIn(server.baseUrl, admin)) });
  const page = await context.newPage();
  await page.goto(`${server.baseUrl}/admin?status=held`);
  const row = page.locator('tr').filter({ has: page.getByRole('checkbox', { name: `Select ${email}` }) });
  // The admin page loads its first page of a busy machine: more than the default 5 s at times.
  await expect(row).toBeVisible({ timeout: 30_000 });
  const badge = row.getByText('Held', { exact: true });
  await expect(badge).toBeVisible();
  await expect(row.locator('[data-held-reason="challenge_missing"]')).toHaveAttribute('title', /no proof-of-work solution was sent/);
  await expect(page.getByLabel('Status', { exact: true })).toHaveValue('held');
  await expectNoAxeViolations(page);
  await screenshotView(page, 'challenge-held');

  await page.getByRole('checkbox', { name: `Select ${email}` }).click();
  await page.getByRole('button', { name: 'Approve Selected' }).click();
  await expectToast(page, 'Approved', '1 held signup joined the waitlist');
  await expect(page.getByRole('checkbox', { name: `Select ${email}` })).toHaveCount(0);
  expect(await entryOf(email)).toMatchObject({ status: 'joined', held_reason: null });
  await context.close();
});
