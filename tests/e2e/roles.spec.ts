import type { BrowserContext, Page } from '@playwright/test';
import { E2E_BASE_URL, E2E_DATA_DIR } from '../../playwright.config.js';
import { signIn } from '../support/sign-in.js';
import { expect, sessionStorageState, test } from './fixtures.js';
import { createAdmin, expectNoAxeViolations, expectToast, screenshotView, uniqueAdminEmail } from './mfa-helpers.js';

/**
 * Issue 32 point 4 in the browser: a viewer (made with `npm run admin -- create EMAIL --role
 * viewer`) sees the waitlist but no Delete, Export or Invite control; its account area says
 * Viewer. (The e2e server has e-mail off, so no role sees an outbox here; the viewer's 403 on it is
 * the server sweep's.) The worker's admin, the server's first, is an owner: its account area says so
 * and shows the Team with every admin's role. The server's refusals are tests/server/auth.
 */
// Each test loads /admin (one or two pages at once) on a machine that may be busy.
test.describe.configure({ mode: 'serial', timeout: 120_000 });

const PASSWORD = 'amber falcon meadow quartz 93';

test.describe('Roles in /admin', () => {
  const viewer = { email: uniqueAdminEmail('viewer'), password: PASSWORD };
  let context: BrowserContext;
  let page: Page;

  test.beforeAll(async ({ browser, request }) => {
    createAdmin(E2E_DATA_DIR, viewer.email, viewer.password, ['--role', 'viewer']);
    // An entry, so the waitlist's buttons would show for a role that may use them.
    expect((await request.post('/api/waitlist', { data: { email: `${uniqueAdminEmail('entry')}` } })).status()).toBe(201);
    context = await browser.newContext({ storageState: sessionStorageState(E2E_BASE_URL, await signIn(E2E_BASE_URL, viewer)) });
    page = await context.newPage();
  });
  test.afterAll(async () => {
    await context.close();
  });

  test('a viewer sees the waitlist without Export, Delete or Invite, and the role Viewer', async () => {
    await page.goto('/admin');
    await expect(page.getByRole('heading', { name: 'Waitlist', level: 1 })).toBeVisible({ timeout: 30_000 });
    // The count line is there once the first page has loaded (the shared machine can be slow).
    await expect(page.getByText(/\d+ (person|people) signed up/)).toBeVisible({ timeout: 30_000 });
    await expect(page.getByRole('region', { name: 'Waitlist' }).getByRole('table').first()).toBeVisible();
    for (const name of ['Delete Selected', 'Export Selected', 'Export All', 'Invite Selected']) {
      await expect(page.getByRole('button', { name })).toHaveCount(0);
    }
    await expect(page.getByRole('checkbox', { name: /attribution/i })).toHaveCount(0);
    const role = page.getByRole('region', { name: 'Role' });
    await expect(role.getByRole('definition')).toHaveText('Viewer');
    await expect(page.getByRole('region', { name: 'Team' })).toHaveCount(0);
    await expectNoAxeViolations(page);
    await screenshotView(page, 'roles-viewer');
  });

  test('an owner sees the role Owner and the Team, with the viewer in it', async ({ adminPage }) => {
    await adminPage.goto('/admin');
    await expect(adminPage.getByRole('button', { name: 'Export All' })).toBeVisible({ timeout: 30_000 });
    await expect(adminPage.getByRole('region', { name: 'Role' }).getByRole('definition')).toHaveText('Owner');
    const team = adminPage.getByRole('region', { name: 'Team' });
    await expect(team.getByRole('combobox', { name: `Role of ${viewer.email}` })).toHaveValue('viewer');
    await expectNoAxeViolations(adminPage);
    await screenshotView(adminPage, 'roles-owner');
  });

  test("the owner makes the viewer an admin in the Team; the viewer's page follows on its next load", async ({ adminPage }) => {
    await adminPage.goto('/admin');
    const team = adminPage.getByRole('region', { name: 'Team' });
    await team.getByRole('combobox', { name: `Role of ${viewer.email}` }).selectOption('admin');
    await team.getByRole('button', { name: `Change the role of ${viewer.email}` }).click();
    await expectToast(adminPage, 'Role changed', `${viewer.email} is now admin.`);
    // The viewer's stored token still says viewer: the account area asks the server, finds admin and
    // refreshes the session, and the page shows the admin's actions.
    await page.reload();
    await expect(page.getByRole('button', { name: 'Export All' })).toBeVisible({ timeout: 30_000 });
    await expect(page.getByRole('region', { name: 'Role' }).getByRole('definition')).toHaveText('Admin');
  });
});
