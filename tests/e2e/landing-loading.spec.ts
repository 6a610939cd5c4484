import { expect, test, type Page } from '@playwright/test';

/**
 * How the landing page loads: on screen before any React code, the app fetched only after the first
 * paint, and a form submitted before the app has hydrated held, then handled by the app (or, if the
 * app never loads, posted as without JavaScript).
 */

const uniqueEmail = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;

/** The app's chunk: everything but the entry script (named in the HTML) and the stylesheet. */
async function entryScript(page: Page): Promise<string> {
  const src = await page.locator('script[type="module"][src]').getAttribute('src');
  expect(src).toBeTruthy();
  return new URL(src!, page.url()).pathname;
}

/** Holds every script but the entry until `release` is called (a slow network for the app's code). */
async function holdAppCode(page: Page): Promise<() => void> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let entry: string | undefined;
  await page.route(/\/assets\/.+\.js$/, async (route) => {
    const path = new URL(route.request().url()).pathname;
    entry ??= (await (await page.context().request.get('/')).text()).match(/<script type="module"[^>]*src="([^"]+)"/)?.[1];
    if (path !== entry) await released;
    await route.continue();
  });
  return release;
}

test('the page paints before the app loads, and hydrates without console errors', async ({ page }) => {
  const errors: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') errors.push(msg.text());
  });
  await page.goto('/');
  const entry = await entryScript(page);
  await expect(page.locator('form[novalidate]')).toBeAttached();

  // The browser's own clock: when the first contentful paint happened, and when each script was requested.
  const { paint, scripts } = await page.evaluate(() => ({
    paint: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null,
    scripts: performance
      .getEntriesByType('resource')
      .filter((r) => new URL(r.name).pathname.endsWith('.js'))
      .map((r) => ({ path: new URL(r.name).pathname, start: r.startTime })),
  }));
  expect(paint, 'no first contentful paint reported').not.toBeNull();
  const appScripts = scripts.filter((s) => s.path !== entry);
  expect(appScripts.length, 'the app chunk was never fetched').toBeGreaterThan(0);
  for (const script of appScripts) expect(script.start, `${script.path} requested before the first paint`).toBeGreaterThan(paint!);
  expect(errors).toEqual([]);
});

test('a blank address submitted before hydration gets the "Email required" toast once the app is in', async ({ page }) => {
  const release = await holdAppCode(page);
  let posted = false;
  page.on('request', (r) => {
    if (r.url().endsWith('/api/waitlist')) posted = true;
  });
  await page.goto('/');
  await page.getByPlaceholder('Enter your email').fill('   ');
  await page.getByRole('button', { name: 'Join the Waitlist' }).click();
  await expect(page.locator('form[novalidate]')).not.toBeAttached();
  release();
  const toast = page.locator('[data-sonner-toast]').filter({ hasText: 'Email required' });
  await expect(toast).toBeVisible();
  await expect(toast).toContainText('Please enter your email address to join the waitlist.');
  expect(posted).toBe(false);
  await expect(page).toHaveURL(/\/$/);
});

test('an address submitted before hydration is sent by the app (fetch), then /thanks', async ({ page }) => {
  const release = await holdAppCode(page);
  const posts: string[] = [];
  page.on('request', (r) => {
    if (r.url().endsWith('/api/waitlist')) posts.push(r.headers()['content-type'] ?? '');
  });
  await page.goto('/');
  await page.getByPlaceholder('Enter your email').fill(uniqueEmail('early'));
  await page.getByRole('button', { name: 'Join the Waitlist' }).click();
  expect(posts).toEqual([]);
  release();
  await expect(page).toHaveURL(/\/thanks$/);
  await expect(page.getByRole('heading', { name: 'Thank You!' })).toBeVisible();
  expect(posts).toEqual(['application/json']);
});

test('if the app cannot load, a held form posts as without JavaScript', async ({ page }) => {
  let entry: string | undefined;
  await page.route(/\/assets\/.+\.js$/, async (route) => {
    entry ??= (await (await page.context().request.get('/')).text()).match(/<script type="module"[^>]*src="([^"]+)"/)?.[1];
    if (new URL(route.request().url()).pathname === entry) await route.continue();
    else await route.abort('connectionrefused');
  });
  await page.goto('/');
  await page.getByPlaceholder('Enter your email').fill(uniqueEmail('nojs-fallback'));
  await page.getByRole('button', { name: 'Join the Waitlist' }).click();
  await expect(page).toHaveURL(/\/thanks$/);
  await expect(page.getByRole('heading', { name: 'Thank You!' })).toBeVisible();
});
