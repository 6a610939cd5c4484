import type { Browser, Page } from '@playwright/test';
import { signIn } from '../support/sign-in.js';
import { startWebhookReceiver, verifiedPayload, type WebhookReceiver } from '../support/webhook-receiver.js';
import { expect, sessionStorageState, test } from './fixtures.js';
import { expectNoAxeViolations, expectToast, startE2eServer, uniqueAdminEmail, type E2eServer } from './mfa-helpers.js';

/**
 * The webhooks area of /admin (issue 32): an admin adds an endpoint (a real receiver on this
 * machine, so WEBHOOK_ALLOW_PRIVATE=1 on this server), copies the secret shown once, a signup is
 * delivered and verified with `standardwebhooks`, and the delivery shows in the endpoint's list.
 */
test.describe.configure({ mode: 'serial' });

test.describe('webhooks in /admin', () => {
  const admin = { email: uniqueAdminEmail('webhooks-admin'), password: 'correct horse battery staple 42' };
  let server: E2eServer;
  let receiver: WebhookReceiver;

  test.beforeAll(async () => {
    receiver = await startWebhookReceiver();
    server = await startE2eServer({ E2E_ADMIN_EMAIL: admin.email, E2E_ADMIN_PASSWORD: admin.password, WEBHOOK_ALLOW_PRIVATE: '1' });
  });

  test.afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });

  async function adminPage(browser: Browser): Promise<Page> {
    const context = await browser.newContext({ baseURL: server.baseUrl, storageState: sessionStorageState(server.baseUrl, await signIn(server.baseUrl, admin)) });
    return context.newPage();
  }

  test('add an endpoint, see its secret once, and a signup delivered to it', async ({ browser }) => {
    test.setTimeout(90_000);
    const page = await adminPage(browser);
    try {
      await page.goto('/admin');
      const area = page.getByRole('region', { name: 'Webhooks' });
      // Its own chunk, loaded after the dashboard's first requests: on a busy machine that can take a while.
      await expect(area.getByText('No endpoints yet.')).toBeVisible({ timeout: 20_000 });
      await area.getByLabel('Endpoint URL').fill(receiver.url);
      await area.getByRole('checkbox', { name: 'signup.created' }).check();
      await area.getByRole('button', { name: 'Add Endpoint' }).click();
      await expectToast(page, 'Endpoint added');
      const secret = (await area.getByTestId('webhook-secret').textContent())!.trim();
      expect(secret).toMatch(/^whsec_/);
      await expect(area.getByText(receiver.url, { exact: true })).toBeVisible();
      await expectNoAxeViolations(page);

      const email = `hooked-${Date.now()}@example.com`;
      const res = await fetch(`${server.baseUrl}/api/waitlist`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
      expect(res.status).toBe(201);
      await expect.poll(() => receiver.requests.length, { timeout: 20_000 }).toBe(1);
      const payload = verifiedPayload(secret, receiver.requests[0]!);
      expect(payload).toMatchObject({ type: 'signup.created', data: { email } });

      await area.getByRole('button', { name: 'Done' }).click();
      await area.getByRole('button', { name: 'Recent deliveries' }).click();
      const rows = area.locator('tbody tr');
      await expect(rows).toHaveCount(1);
      await expect(rows.first()).toContainText('signup.created');
      await expect(rows.first()).toContainText('delivered');
      await expect(rows.first()).toContainText('204');

      await rows.first().getByRole('button', { name: /^Replay signup\.created/ }).click();
      await expectToast(page, 'Delivery queued again');
      await expect.poll(() => receiver.requests.length, { timeout: 20_000 }).toBe(2);
      expect(receiver.requests[1]!.headers['webhook-id']).toBe(receiver.requests[0]!.headers['webhook-id']);
      await expectNoAxeViolations(page);
    } finally {
      await page.context().close();
    }
  });
});
