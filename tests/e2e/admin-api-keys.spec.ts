import { E2E_BASE_URL } from '../../playwright.config.js';
import { expect, test } from './fixtures.js';
import { expectNoAxeViolations } from './mfa-helpers.js';

/** The API keys area of /admin (issue 32 point 2): a key made, shown once, used, then revoked. */
test('an admin creates an API key shown once, sees its last use, and revokes it', async ({ adminPage: page }) => {
  test.setTimeout(90_000);
  await page.goto('/admin');
  const area = page.getByRole('region', { name: 'API keys' });
  await expect(area.getByText('No API keys yet.').or(area.getByRole('table'))).toBeVisible({ timeout: 15_000 });
  const name = `Warehouse ${Date.now()}`;
  await area.getByLabel('Name').fill(name);
  await area.getByLabel('Add signups (signups:write)').check();
  await area.getByLabel('Expires after (days, empty for never)').fill('30');
  await area.getByRole('button', { name: 'Create key' }).click();

  const shown = area.getByRole('textbox', { name: 'New API key' });
  await expect(shown).toHaveValue(/^wl_[A-Za-z0-9_-]{43}$/);
  const key = await shown.inputValue();
  await expect(area.getByText('Copy this key now: it is not shown again.')).toBeVisible();
  await expectNoAxeViolations(page);
  await area.getByRole('button', { name: 'Done' }).click();
  await expect(shown).toBeHidden();

  const row = area.getByRole('row').filter({ hasText: name });
  await expect(row).toContainText('entries:read, signups:write');
  await expect(row).toContainText(key.slice(0, 11));
  await expect(row).not.toContainText(key);
  await expect(row).toContainText('Active');

  const used = await fetch(`${E2E_BASE_URL}/api/v1/entries?limit=1`, { headers: { authorization: `Bearer ${key}` } });
  expect(used.status).toBe(200);
  // The last use is written in the background, once a minute at most: it shows after a reload.
  await expect(async () => {
    await page.reload();
    const lastUsed = area.getByRole('row').filter({ hasText: name }).getByRole('cell').nth(5);
    await expect(lastUsed).toBeVisible({ timeout: 15_000 });
    await expect(lastUsed).not.toHaveText('never', { timeout: 1000 });
  }).toPass({ timeout: 45_000 });

  await area.getByRole('button', { name: `Revoke ${name}` }).click();
  const dialog = page.getByRole('alertdialog', { name: 'Revoke this key?' });
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Revoke' }).click();
  await expect(area.getByRole('row').filter({ hasText: name })).toContainText('Revoked');
  const refused = await fetch(`${E2E_BASE_URL}/api/v1/entries?limit=1`, { headers: { authorization: `Bearer ${key}` } });
  expect(refused.status).toBe(401);
});
