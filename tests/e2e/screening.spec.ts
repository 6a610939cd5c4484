import { expect, test } from '@playwright/test';
import { startDnsServer, type TestDnsServer } from '../support/dns.js';
import { expectNoAxeViolations, expectToast, startE2eServer, type E2eServer } from './mfa-helpers.js';

/**
 * Throwaway and dead domains refused at signup (issue 28, point 3): the form's toast and the page
 * without JavaScript. The shared e2e server has the throwaway list on and the MX check off (it never
 * depends on the network's DNS); the dead domain is shown by a server of its own whose MX check asks
 * a DNS server started here.
 */

const unique = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

test.describe('address screening', () => {
  test('a throwaway address: the toast asks for a permanent address, and the visitor stays on the form', async ({ page }) => {
    await page.goto('/');
    await page.getByPlaceholder('Enter your email').fill(`${unique('visitor')}@mailinator.com`);
    await page.getByRole('button', { name: 'Join the Waitlist' }).click();
    await expectToast(page, 'Permanent email required', 'Please use a permanent email address.');
    await expect(page).toHaveURL(/\/$/);
    await expect(page.getByRole('button', { name: 'Join the Waitlist' })).toBeEnabled();
    await expectNoAxeViolations(page);
  });

  test('without JavaScript: the error page says it', async ({ browser }) => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto('/');
    await page.getByPlaceholder('Enter your email').fill(`${unique('nojs')}@yopmail.com`);
    await page.getByRole('button', { name: 'Join the Waitlist' }).click();
    await expect(page.getByRole('heading', { name: 'Permanent email required' })).toBeVisible();
    await expect(page.getByText('Please use a permanent email address.')).toBeVisible();
    await expect(page.getByRole('link', { name: /back/i })).toHaveAttribute('href', '/');
    await context.close();
  });

  test.describe('with the MX check on, against a DNS server of the test', () => {
    let dns: TestDnsServer;
    let server: E2eServer;
    test.beforeAll(async () => {
      dns = await startDnsServer({ 'gone-mx.example': { kind: 'null-mx' }, 'lives.example': { kind: 'mx', exchange: 'mail.lives.example' } });
      server = await startE2eServer({ SIGNUP_CHECK_MX: 'on', DNS_SERVERS: dns.address, SIGNUP_MX_TIMEOUT_MS: '3000' });
    });
    test.afterAll(async () => {
      await server?.stop();
      await dns?.close();
    });

    test('a domain that cannot receive mail: its toast; a domain with MX joins', async ({ page }) => {
      await page.goto(`${server.baseUrl}/`);
      await page.getByPlaceholder('Enter your email').fill(`${unique('dead')}@gone-mx.example`);
      await page.getByRole('button', { name: 'Join the Waitlist' }).click();
      await expectToast(page, 'Email cannot be delivered', 'This email domain cannot receive email.');
      await page.getByPlaceholder('Enter your email').fill(`${unique('alive')}@lives.example`);
      await page.getByRole('button', { name: 'Join the Waitlist' }).click();
      await expect(page).toHaveURL(/\/thanks$/);
    });
  });
});
