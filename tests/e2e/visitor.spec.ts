import { AxeBuilder } from '@axe-core/playwright';
import { gzipSync } from 'node:zlib';
import { expect, test, type ConsoleMessage, type Page } from '@playwright/test';

const uniqueEmail = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;

/** Collects console errors and warnings (hydration mismatches are reported there). */
function watchConsole(page: Page): ConsoleMessage[] {
  const messages: ConsoleMessage[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') messages.push(msg);
  });
  return messages;
}

async function expectToast(page: Page, title: string, description: string) {
  const toast = page.locator('[data-sonner-toast]').filter({ hasText: title });
  await expect(toast).toBeVisible();
  await expect(toast).toContainText(description);
}

test.describe('landing page', () => {
  test('shows the spec texts and hydrates without console errors', async ({ page }) => {
    const messages = watchConsole(page);
    const response = await page.goto('/');
    expect(response?.status()).toBe(200);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Private Markets On Chain');
    await expect(page.getByText('Compliant Tokenization Solutions')).toBeVisible();
    await expect(page.getByPlaceholder('Enter your email')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Join the Waitlist' })).toBeVisible();
    await expect(page.getByText('Be the first to access tokenized private assets.')).toBeVisible();
    await expect(page.locator('header a[href^="mailto:"]')).toBeVisible();
    const footer = page.locator('footer');
    await expect(footer).toContainText('Regulation CF');
    await expect(footer).toContainText(/investment advice/i);
    await expect(footer).toContainText(/funding/i);
    await expect(footer.getByRole('link', { name: /terms/i })).toHaveAttribute('href', /^https?:\/\//);
    // Give hydration a moment to report any mismatch.
    await page.waitForLoadState('networkidle');
    expect(messages.map((m) => m.text())).toEqual([]);
  });

  test('the prerendered HTML carries the text before any script runs', async ({ request }) => {
    const html = await (await request.get('/')).text();
    expect(html).toContain('Private Markets On Chain');
    expect(html).toContain('Join the Waitlist');
    expect(html).toContain('Be the first to access tokenized private assets.');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });

  test('everything / loads, lazy toaster included, stays within 90 KB of JS and 10 KB of CSS gzipped', async ({ page }) => {
    const loaded: Array<{ path: string; type: 'js' | 'css'; gzip: number }> = [];
    page.on('response', async (response) => {
      const path = new URL(response.url()).pathname;
      const type = path.endsWith('.js') ? 'js' : path.endsWith('.css') ? 'css' : null;
      if (!type) return;
      loaded.push({ path, type, gzip: gzipSync(await response.body(), { level: 9 }).length });
    });
    await page.goto('/');
    await page.waitForLoadState('networkidle');
    // The toaster is fetched when the browser is idle; its (empty) notifications region shows it has arrived.
    await expect(page.locator('section[aria-label^="Notifications"]')).toBeAttached({ timeout: 10_000 });
    await page.waitForLoadState('networkidle');
    const total = (type: 'js' | 'css') => loaded.filter((f) => f.type === type).reduce((sum, f) => sum + f.gzip, 0);
    console.log(`/ loads ${loaded.map((f) => `${f.path} ${(f.gzip / 1024).toFixed(1)} KB`).join(', ')}`);
    expect(total('js')).toBeLessThanOrEqual(90 * 1024);
    expect(total('css')).toBeLessThanOrEqual(10 * 1024);
    expect(loaded.map((f) => f.path).join(' ')).not.toMatch(/Admin|Auth/);
  });

  test('the rotating line moves through the five categories', async ({ page }) => {
    await page.goto('/');
    const line = page.getByTestId('rotating-category');
    const seen = new Set<string>();
    await expect
      .poll(
        async () => {
          seen.add((await line.textContent())?.trim() ?? '');
          return seen.size;
        },
        { timeout: 12_000, intervals: [250] },
      )
      .toBeGreaterThanOrEqual(3);
    for (const item of seen) {
      expect(['Artificial Intelligence', 'Blockchain', 'IP', 'Art', 'Pre-IPO']).toContain(item);
    }
  });

  test('under prefers-reduced-motion the line still cycles every 2 s, without the slide animation', async ({ browser }) => {
    const context = await browser.newContext({ reducedMotion: 'reduce' });
    const page = await context.newPage();
    await page.goto('/');
    const line = page.getByTestId('rotating-category');
    const first = (await line.textContent()) ?? '';
    await expect(line).not.toHaveText(first, { timeout: 4_500 });
    await expect(line.locator('span')).toHaveCSS('animation-name', 'none');
    await context.close();
  });
});

test.describe('signup', () => {
  test('join → /thanks → back to / after 5 seconds', async ({ page }) => {
    await page.goto('/');
    await page.getByPlaceholder('Enter your email').fill(`  ${uniqueEmail('join')}  `);
    await page.getByRole('button', { name: 'Join the Waitlist' }).click();
    await expect(page).toHaveURL(/\/thanks$/);
    await expect(page.getByRole('heading', { name: 'Thank You!' })).toBeVisible();
    await expect(page.getByText("You're now on the waitlist.")).toBeVisible();
    await expect(page.getByText("You'll be notified when we")).toContainText('🚀');
    await expect(page.getByText('Redirecting you back to the homepage in a few seconds...')).toBeVisible();
    await expect(page.getByRole('status')).toBeVisible();
    await expect(page).toHaveURL(/\/$/, { timeout: 8_000 });
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Private Markets On Chain');
  });

  test('blank address → "Email required" toast, nothing sent', async ({ page }) => {
    let posted = false;
    page.on('request', (r) => {
      if (r.url().endsWith('/api/waitlist')) posted = true;
    });
    await page.goto('/');
    await page.getByPlaceholder('Enter your email').fill('   ');
    await page.getByRole('button', { name: 'Join the Waitlist' }).click();
    await expectToast(page, 'Email required', 'Please enter your email address to join the waitlist.');
    expect(posted).toBe(false);
    await expect(page).toHaveURL(/\/$/);
  });

  test('an address already on the list, in another case → "Already registered" toast', async ({ page, request }) => {
    const email = uniqueEmail('dup');
    expect((await request.post('/api/waitlist', { data: { email } })).status()).toBe(201);
    await page.goto('/');
    await page.getByPlaceholder('Enter your email').fill(email.toUpperCase());
    await page.getByRole('button', { name: 'Join the Waitlist' }).click();
    await expectToast(page, 'Already registered', 'This email is already on our waitlist.');
    await expect(page).toHaveURL(/\/$/);
    await expect(page.getByRole('button', { name: 'Join the Waitlist' })).toBeEnabled();
  });

  test('a server failure → "Something went wrong" toast and back to idle', async ({ page }) => {
    await page.route('**/api/waitlist', (route) => route.fulfill({ status: 500, contentType: 'application/json', body: '{"error":{"code":"internal_error","message":"x"}}' }));
    await page.goto('/');
    await page.getByPlaceholder('Enter your email').fill(uniqueEmail('fail'));
    await page.getByRole('button', { name: 'Join the Waitlist' }).click();
    await expectToast(page, 'Something went wrong', 'Please try again later.');
    await expect(page.getByRole('button', { name: 'Join the Waitlist' })).toBeEnabled();
  });

  test('a network failure → "Something went wrong" toast', async ({ page }) => {
    await page.route('**/api/waitlist', (route) => route.abort('connectionreset'));
    await page.goto('/');
    await page.getByPlaceholder('Enter your email').fill(uniqueEmail('net'));
    await page.getByRole('button', { name: 'Join the Waitlist' }).click();
    await expectToast(page, 'Something went wrong', 'Please try again later.');
  });

  test('busy state: input and button disabled, button reads "Joining..."', async ({ page }) => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/waitlist', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto('/');
    const input = page.getByPlaceholder('Enter your email');
    await input.fill(uniqueEmail('busy'));
    await page.getByRole('button', { name: 'Join the Waitlist' }).click();
    const busyButton = page.getByRole('button', { name: 'Joining...' });
    await expect(busyButton).toBeVisible();
    await expect(busyButton).toBeDisabled();
    await expect(input).toBeDisabled();
    release();
    await expect(page).toHaveURL(/\/thanks$/);
  });

  test('works with JavaScript disabled: the plain form posts and lands on /thanks', async ({ browser }) => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto('/');
    const email = uniqueEmail('nojs');
    await page.getByPlaceholder('Enter your email').fill(email);
    await page.getByRole('button', { name: 'Join the Waitlist' }).click();
    await expect(page).toHaveURL(/\/thanks$/);
    await expect(page.getByRole('heading', { name: 'Thank You!' })).toBeVisible();

    // The same address again: a readable error page, not a JSON blob.
    await page.goto('/');
    await page.getByPlaceholder('Enter your email').fill(email);
    await page.getByRole('button', { name: 'Join the Waitlist' }).click();
    await expect(page.getByText('This email is already on our waitlist.')).toBeVisible();
    await expect(page.getByRole('link', { name: /back/i })).toHaveAttribute('href', '/');
    await context.close();
  });
});

test.describe('other pages', () => {
  test('unknown path → 404 status, the 404 page, and the path logged in the console', async ({ page }) => {
    const messages = watchConsole(page);
    const response = await page.goto('/no-such-page');
    expect(response?.status()).toBe(404);
    await expect(page.getByText('Oops! Page not found')).toBeVisible();
    await expect.poll(() => messages.some((m) => m.text().includes('/no-such-page'))).toBe(true);
    await page.getByRole('link', { name: 'Return to Home' }).click();
    await expect(page).toHaveURL(/\/$/);
  });

  test('security headers and caching on pages and assets', async ({ request }) => {
    const page = await request.get('/');
    const headers = page.headers();
    expect(headers['content-security-policy']).toContain("script-src 'self'");
    expect(headers['content-security-policy']).not.toContain('unsafe-eval');
    expect(headers['content-security-policy']).toMatch(/script-src 'self'(;|$)/);
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBeTruthy();
    expect(headers['cache-control']).toBe('no-cache');
    const asset = (await page.text()).match(/\/assets\/[^"']+\.js/)?.[0];
    expect(asset).toBeTruthy();
    const assetResponse = await request.get(asset!, { headers: { 'accept-encoding': 'br, gzip' } });
    expect(assetResponse.headers()['cache-control']).toContain('immutable');
    expect(assetResponse.headers()['content-encoding']).toMatch(/br|gzip/);
  });
});

test.describe('accessibility (axe-core)', () => {
  for (const path of ['/', '/thanks', '/no-such-page']) {
    test(`no violations on ${path}`, async ({ page }) => {
      await page.goto(path);
      await page.waitForLoadState('networkidle');
      const results = await new AxeBuilder({ page }).analyze();
      expect(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
    });
  }
});
