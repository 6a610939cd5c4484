import type { BrowserContext, Page } from '@playwright/test';
import { E2E_BASE_URL, E2E_DATA_DIR } from '../../playwright.config.js';
import { ADMIN_WAITLIST_PATH } from '../../src/shared/admin/waitlist-api.js';
import { postPasswordGrant, type AuthSession, type Credentials } from '../support/sign-in.js';
import { expect, sessionStorageState, test } from './fixtures.js';
import { createAdmin, expectNoAxeViolations, expectToast, screenshotView, uniqueAdminEmail } from './mfa-helpers.js';

/**
 * The account area's Sessions card (ASVS 3.3.4) and the password change's show/hide toggle
 * (ASVS 2.1.12), for an admin of its own (made with the admin CLI) signed in from several devices.
 * With E2E_SHOTS_DIR set, the views are saved as screenshots at 1280 and 390 px.
 */
test.describe.configure({ mode: 'serial' });

const PASSWORD = 'copper willow saffron harbor 58';
const DESKTOP_UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const PHONE_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

async function signInFrom(admin: Credentials, userAgent: string): Promise<AuthSession> {
  const res = await postPasswordGrant(E2E_BASE_URL, admin, { 'user-agent': userAgent });
  expect(res.status).toBe(200);
  return (await res.json()) as AuthSession;
}

const waitlistStatus = async (session: AuthSession) =>
  (await fetch(`${E2E_BASE_URL}${ADMIN_WAITLIST_PATH}`, { headers: { authorization: `Bearer ${session.access_token}` } })).status;

test.describe('Account area: sessions and the password toggle', () => {
  const admin: Credentials = { email: uniqueAdminEmail('account-admin'), password: PASSWORD };
  let context: BrowserContext;
  let page: Page;

  test.beforeAll(async ({ browser }) => {
    createAdmin(E2E_DATA_DIR, admin.email, admin.password);
    context = await browser.newContext({ storageState: sessionStorageState(E2E_BASE_URL, await signInFrom(admin, DESKTOP_UA)) });
    page = await context.newPage();
  });

  test.afterAll(async () => {
    await context.close();
  });

  test('the Sessions card lists this device and the others; one, then all others, are signed out', async () => {
    const phone = await signInFrom(admin, PHONE_UA);
    const laptop = await signInFrom(admin, DESKTOP_UA);
    await page.goto('/admin');
    const card = page.getByRole('region', { name: 'Sessions' });
    await expect(card.getByRole('heading', { level: 3, name: 'Sessions' })).toBeVisible();
    const items = card.getByRole('listitem');
    await expect(items).toHaveCount(3);
    await expect(items.filter({ hasText: 'This device' })).toHaveCount(1);
    await expect(items.filter({ hasText: 'Safari on iPhone' })).toHaveCount(1);
    await expect(items.filter({ hasText: 'Chrome on macOS' })).toHaveCount(2);
    await expect(items.filter({ hasText: 'This device' }).getByRole('button')).toHaveCount(0);
    await expect(card.getByText('127.0.0.1').first()).toBeVisible();
    await expectNoAxeViolations(page);
    await screenshotView(page, 'admin-account-sessions');

    // One session, by its own button (named after the device, for screen readers).
    const phoneButton = card.getByRole('button', { name: /^Sign out Safari on iPhone, signed in / });
    await phoneButton.focus();
    await page.keyboard.press('Enter');
    await expectToast(page, 'Session signed out', '1 session signed out.');
    await expect(items).toHaveCount(2);
    await expect(card.getByRole('heading', { level: 3, name: 'Sessions' })).toBeFocused();
    expect(await waitlistStatus(phone)).toBe(401);
    expect(await waitlistStatus(laptop)).toBe(200);

    await card.getByRole('button', { name: 'Sign out all other sessions' }).click();
    await expectToast(page, 'Session signed out', '1 session signed out.');
    await expect(items).toHaveCount(1);
    await expect(items.first()).toContainText('This device');
    await expect(card.getByRole('button', { name: 'Sign out all other sessions' })).toHaveCount(0);
    await expect(card.getByText('No other sessions: this is the only device signed in.')).toBeVisible();
    expect(await waitlistStatus(laptop)).toBe(401);
    // This page's own session still works.
    await page.reload();
    await expect(card.getByRole('listitem')).toHaveCount(1);
    await expectNoAxeViolations(page);
    await screenshotView(page, 'admin-account-sessions-alone');
  });

  test('the Change password form shows and hides what was typed', async () => {
    const toggle = page.getByRole('button', { name: 'Show passwords' });
    const fields = ['Current password', 'New password', 'Confirm new password'].map((label) => page.getByLabel(label, { exact: true }));
    await fields[0]!.fill('typed secret');
    await expect(toggle).toHaveAttribute('aria-pressed', 'false');
    for (const field of fields) await expect(field).toHaveAttribute('type', 'password');

    await toggle.focus();
    await page.keyboard.press('Space');
    await expect(toggle).toHaveAttribute('aria-pressed', 'true');
    for (const field of fields) await expect(field).toHaveAttribute('type', 'text');
    await expect(fields[0]!).toHaveValue('typed secret');
    await expectNoAxeViolations(page);
    await screenshotView(page, 'admin-password-shown');

    await toggle.click();
    await expect(toggle).toHaveAttribute('aria-pressed', 'false');
    for (const field of fields) await expect(field).toHaveAttribute('type', 'password');
  });
});
