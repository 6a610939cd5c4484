import type { BrowserContext, Page } from '@playwright/test';
import { E2E_BASE_URL, E2E_DATA_DIR } from '../../playwright.config.js';
import { AUTH_STORAGE_KEY } from '../../src/web/session/auth-client.js';
import { postPasswordGrant, signIn, type Credentials } from '../support/sign-in.js';
import { expect, sessionStorageState, test } from './fixtures.js';
import {
  createAdmin,
  expectNoAxeViolations,
  expectToast,
  screenshotView,
  startE2eServer,
  storedAal,
  totpCode,
  uniqueAdminEmail,
  wrongTotpCode,
  type E2eServer,
} from './mfa-helpers.js';

/**
 * TOTP two-factor authentication in the browser, against the real server: enrolment from the
 * account area of /admin (the secret read from the page, the code computed here), the code step of
 * /auth, the admin API's refusal of a password-only session, the password change, removing the
 * factor, and ADMIN_MFA=required on a second server. Each test uses admins of its own (made with the
 * admin CLI), so the shared e2e admin of the other specs never gets a factor.
 *
 * With E2E_SHOTS_DIR set, every new view is also saved as a screenshot at 1280 and 390 px.
 */
test.describe.configure({ mode: 'serial' });

const PASSWORD = 'violet anchor quartz meadow 92';
const NEW_PASSWORD = 'amber lantern orbit thistle 47';
const WRONG_CODE_MESSAGE = 'Invalid TOTP code entered';

async function signInAtAuthPage(page: Page, { email, password }: Credentials) {
  await page.goto('/auth');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign In' }).click();
}

/** Starts the set-up in the account area (or the required enrolment) and returns the secret the page shows. */
async function startEnrolment(page: Page): Promise<string> {
  await page.getByRole('button', { name: 'Set up authenticator app' }).click();
  const qr = page.getByRole('img', { name: 'QR code that sets up this admin account in an authenticator app' });
  await expect(qr).toBeVisible();
  // The SVG really renders (a '#' left unescaped in the data URL would break it).
  await expect.poll(() => qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
  const group = page.getByRole('group', { name: 'Setup key' });
  await expect(group).toBeVisible();
  // Shown in groups of four; the authenticator app (and Copy key) take it without the spaces.
  const secret = (await page.getByTestId('totp-secret').innerText()).replace(/\s/g, '');
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  return secret;
}

async function confirmEnrolment(page: Page, code: string) {
  await page.getByLabel('6-digit code from the app').fill(code);
  await page.getByRole('button', { name: 'Confirm' }).click();
}

async function expectCodeField(page: Page, label: string) {
  const field = page.getByLabel(label);
  await expect(field).toHaveAttribute('inputmode', 'numeric');
  await expect(field).toHaveAttribute('autocomplete', 'one-time-code');
  await expect(field).toHaveAttribute('type', 'text');
  return field;
}

test.describe('TOTP from the account area of /admin', () => {
  const admin: Credentials = { email: uniqueAdminEmail('mfa-admin'), password: PASSWORD };
  let context: BrowserContext;
  /** One page for the whole journey: enrol, sign out, sign in with the code, change the password, remove. */
  let page: Page;
  let secret = '';

  test.beforeAll(async ({ browser }) => {
    createAdmin(E2E_DATA_DIR, admin.email, admin.password);
    context = await browser.newContext({
      storageState: sessionStorageState(E2E_BASE_URL, await signIn(E2E_BASE_URL, admin)),
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    page = await context.newPage();
  });

  test.afterAll(async () => {
    await context.close();
  });

  test('enrol: QR code, the secret with a Copy button, a wrong code, then the right one', async () => {
    await page.goto('/admin');
    await expect(page.getByText(`Welcome, ${admin.email}`)).toBeVisible();
    await expect(page.getByRole('heading', { level: 1, name: 'Waitlist' })).toBeVisible();
    await expect(page.getByRole('heading', { level: 2, name: 'Account' })).toBeVisible();
    await expect(page.getByText(/^Not set up\./)).toBeVisible();
    await expect(page.getByRole('heading', { level: 3, name: 'Change password' })).toBeVisible();
    await expectNoAxeViolations(page);
    await screenshotView(page, 'admin-account-area');

    secret = await startEnrolment(page);
    await expect(page.getByText(/^Scan this QR code/)).toBeFocused();
    await page.getByRole('button', { name: 'Copy key' }).click();
    await expectToast(page, 'Setup key copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    const code = await expectCodeField(page, '6-digit code from the app');
    await expectNoAxeViolations(page);
    await screenshotView(page, 'admin-enrol-qr');

    await confirmEnrolment(page, wrongTotpCode(secret));
    await expectToast(page, 'Error', WRONG_CODE_MESSAGE);
    await expect(code).toHaveValue('');
    await expect(code).toBeFocused();

    await confirmEnrolment(page, totpCode(secret));
    await expectToast(page, 'Two-factor authentication is on');
    await expect(page.getByText(/^On: an authenticator app was added on /)).toBeVisible();
    await expect(page.getByRole('heading', { level: 3, name: 'Two-factor authentication' })).toBeFocused();
    await expect(page.getByRole('button', { name: 'Remove' })).toBeVisible();
    expect(await storedAal(page, AUTH_STORAGE_KEY)).toBe('aal2');
    await expectNoAxeViolations(page);
    await screenshotView(page, 'admin-factor-on');
  });

  test('sign out, then the password and the code at /auth lead to /admin; a wrong code gives a toast', async () => {
    await page.getByRole('button', { name: 'Sign Out', exact: true }).click();
    await expect(page).toHaveURL(/\/auth$/);

    await signInAtAuthPage(page, admin);
    await expect(page.getByRole('heading', { level: 2, name: 'Two-factor authentication' })).toBeVisible();
    await expect(page).toHaveURL(/\/auth$/);
    await expect(page.getByRole('heading', { level: 1, name: 'Admin Login' })).toBeVisible();
    await expect(page.getByLabel('Email')).toHaveCount(0);
    const code = await expectCodeField(page, 'Authentication code');
    await expect(code).toBeFocused();
    await expect(page.getByRole('link', { name: 'Back to home' })).toHaveAttribute('href', '/');
    expect(await storedAal(page, AUTH_STORAGE_KEY)).toBe('aal1');
    await expectNoAxeViolations(page);
    await screenshotView(page, 'auth-code-step');

    await code.fill(wrongTotpCode(secret));
    await page.getByRole('button', { name: 'Verify' }).click();
    await expectToast(page, 'Error', WRONG_CODE_MESSAGE);
    await expect(page).toHaveURL(/\/auth$/);
    await expect(code).toHaveValue('');
    await expect(code).toBeFocused();

    // The enrolment used this time step's code; each step is accepted once, so this is the next one's.
    await code.fill(totpCode(secret, 1));
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/\/admin$/);
    await expect(page.getByText(`Welcome, ${admin.email}`)).toBeVisible();
    await expect(page.getByRole('heading', { level: 1, name: 'Waitlist' })).toBeVisible();
    await expect(page.getByText(/^\d+ (person|people) signed up/)).toBeVisible();
    expect(await storedAal(page, AUTH_STORAGE_KEY)).toBe('aal2');
  });

  test('a password-only (aal1) session is refused by the admin API, and /admin asks for the code', async ({ browser, request }) => {
    const session = await signIn(E2E_BASE_URL, admin);
    const refused = await request.get('/api/admin/waitlist', { headers: { Authorization: `Bearer ${session.access_token}` } });
    expect(refused.status()).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_aal');

    const aal1 = await browser.newContext({ storageState: sessionStorageState(E2E_BASE_URL, session) });
    try {
      const other = await aal1.newPage();
      await other.goto('/admin');
      await expect(other).toHaveURL(/\/auth$/);
      await expect(other.getByLabel('Authentication code')).toBeVisible();
      await expect(other.getByText(`Welcome, ${admin.email}`)).toHaveCount(0);

      await other.getByRole('button', { name: 'Sign in with another account' }).click();
      await expect(other.getByLabel('Email')).toBeVisible();
      await expect(other.getByRole('button', { name: 'Sign In' })).toBeEnabled();
      expect(await other.evaluate((key) => localStorage.getItem(key), AUTH_STORAGE_KEY)).toBeNull();
    } finally {
      await aal1.close();
    }
  });

  test("change password: GoTrue's refusals as toasts, then the new password signs in", async () => {
    const current = page.getByLabel('Current password');
    const next = page.getByLabel('New password', { exact: true });
    const confirmation = page.getByLabel('Confirm new password');
    const submit = page.getByRole('button', { name: 'Change password' });
    await expect(current).toHaveAttribute('autocomplete', 'current-password');
    await expect(next).toHaveAttribute('autocomplete', 'new-password');

    await current.fill('not my password at all 1');
    await next.fill(NEW_PASSWORD);
    await confirmation.fill(NEW_PASSWORD);
    await submit.click();
    await expectToast(page, 'Error', 'Your current password is not correct.');
    await expect(current).toBeFocused();

    await current.fill(PASSWORD);
    await confirmation.fill(`${NEW_PASSWORD}!`);
    await submit.click();
    await expectToast(page, 'Error', 'The new password and its confirmation do not match.');

    await next.fill('aaaaaaaaaaaaaaaa');
    await confirmation.fill('aaaaaaaaaaaaaaaa');
    await submit.click();
    await expectToast(page, 'Error', 'Password is known to be weak and easy to guess');

    await next.fill(NEW_PASSWORD);
    await confirmation.fill(NEW_PASSWORD);
    await submit.click();
    await expectToast(page, 'Password changed', 'Your other sessions have been signed out.');
    await expect(current).toHaveValue('');
    await expect(next).toHaveValue('');
    expect((await postPasswordGrant(E2E_BASE_URL, { ...admin, password: NEW_PASSWORD })).status).toBe(200);
    admin.password = NEW_PASSWORD;
  });

  test('remove the factor: a confirm dialog, then signing in needs only the password', async () => {
    const remove = page.getByRole('button', { name: 'Remove' });
    await remove.click();
    const dialog = page.getByRole('alertdialog', { name: 'Remove two-factor authentication?' });
    await expect(dialog).toContainText('Signing in will need only your password.');
    await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await expectNoAxeViolations(page);
    await screenshotView(page, 'admin-remove-factor-dialog');
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();
    await expect(remove).toBeFocused();

    await remove.click();
    await dialog.getByRole('button', { name: 'Remove' }).click();
    await expectToast(page, 'Two-factor authentication removed');
    await expect(dialog).toBeHidden();
    await expect(page.getByText(/^Not set up\./)).toBeVisible();
    await expect(page.getByRole('heading', { level: 3, name: 'Two-factor authentication' })).toBeFocused();

    await page.getByRole('button', { name: 'Sign Out', exact: true }).click();
    await expect(page).toHaveURL(/\/auth$/);
    await signInAtAuthPage(page, admin);
    await expect(page).toHaveURL(/\/admin$/);
    await expect(page.getByText(`Welcome, ${admin.email}`)).toBeVisible();
  });
});

test.describe('ADMIN_MFA=required (a second server)', () => {
  const admin: Credentials = { email: uniqueAdminEmail('mfa-required'), password: PASSWORD };
  let server: E2eServer;

  test.beforeAll(async () => {
    server = await startE2eServer({ ADMIN_MFA: 'required', E2E_ADMIN_EMAIL: admin.email, E2E_ADMIN_PASSWORD: admin.password });
  });

  test.afterAll(async () => {
    await server?.stop();
  });

  test('a new admin sees only the enrolment, and the waitlist once a factor is confirmed', async ({ browser }) => {
    const session = await signIn(server.baseUrl, admin);
    const refused = await fetch(`${server.baseUrl}/api/admin/waitlist`, { headers: { Authorization: `Bearer ${session.access_token}` } });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_aal');

    const context = await browser.newContext({ baseURL: server.baseUrl });
    try {
      const page = await context.newPage();
      await signInAtAuthPage(page, admin);
      await expect(page).toHaveURL(/\/admin$/);
      const heading = page.getByRole('heading', { level: 1, name: 'Set up two-factor authentication' });
      await expect(heading).toBeVisible();
      await expect(heading).toBeFocused();
      await expect(page.getByText(`Welcome, ${admin.email}`)).toBeVisible();
      await expect(page.getByRole('heading', { name: 'Waitlist' })).toHaveCount(0);
      await expect(page.getByRole('heading', { name: 'Account' })).toHaveCount(0);
      await expect(page.getByRole('button', { name: 'Sign Out', exact: true })).toBeVisible();
      await expectNoAxeViolations(page);
      await screenshotView(page, 'admin-mfa-required');

      const secret = await startEnrolment(page);
      await expectNoAxeViolations(page);
      await screenshotView(page, 'admin-mfa-required-qr');
      await confirmEnrolment(page, totpCode(secret));
      await expectToast(page, 'Two-factor authentication is on');
      await expect(page.getByRole('heading', { level: 1, name: 'Waitlist' })).toBeVisible();
      await expect(page.getByText('No waitlist entries yet.')).toBeVisible();
      await expect(page.getByText(/^On: an authenticator app was added on /)).toBeVisible();
      expect(await storedAal(page, AUTH_STORAGE_KEY)).toBe('aal2');
    } finally {
      await context.close();
    }
  });
});
