import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test, type Page } from '@playwright/test';
import { signIn } from '../support/sign-in.js';
import { expectNoAxeViolations, startE2eServer, uniqueAdminEmail, type E2eServer } from './mfa-helpers.js';

/**
 * The signup form on another site (issue 32 point 3), in Chromium against the production build:
 * pages served by a "partner" on another port (its own origin, http://localhost:…, another site
 * than the server's http://127.0.0.1:…) under a strict Content-Security-Policy that allows only our
 * origin, with the script tag and with a plain form; and the same pages from an origin the server
 * does not allow, which are refused.
 */
interface Site {
  origin: string;
  close(): Promise<void>;
}

/** A small site on its own port: the pages embedding our form, with a strict CSP. */
async function startSite(pages: (base: string, origin: string) => Record<string, { type: string; body: string }>): Promise<Site> {
  let origin = '';
  let base = '';
  const server = http.createServer((req, res) => {
    const page = pages(base, origin)[new URL(req.url ?? '/', origin).pathname];
    if (!page) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'content-type': page.type,
      // Nothing inline; scripts, connections and form posts only to the waitlist's origin (and, as
      // form-action also governs the redirect after a post, the site's own thanks page).
      'content-security-policy': `default-src 'none'; script-src ${base}; connect-src ${base}; form-action ${base} 'self'; style-src 'self'; img-src 'none'; base-uri 'none'`,
    });
    res.end(page.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    set base(value: string) {
      base = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  } as Site & { base: string };
}

const HOST_CSS = '* { color: rgb(255, 0, 0) !important; font-size: 40px !important; font-family: serif !important; } input, button { display: none !important; }';

function partnerPages(base: string, origin: string) {
  const html = (title: string, body: string, css = '') => ({
    type: 'text/html; charset=utf-8',
    body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${css}</head><body><main><h1>${title}</h1>${body}</main></body></html>`,
  });
  return {
    '/host.css': { type: 'text/css', body: HOST_CSS },
    // A host page whose styles try to reach the form.
    '/script.html': html('Partner news', `<p>Before the form.</p><script src="${base}/embed.js" async></script><p>After the form.</p>`, '<link rel="stylesheet" href="/host.css">'),
    '/form.html': html(
      'Partner form',
      `<form action="${base}/api/waitlist" method="post"><label for="email">Email</label> <input id="email" name="email" type="email" required>` +
        `<input type="hidden" name="thanks_url" value="${origin}/thanks.html"><button type="submit">Join</button></form>`,
    ),
    '/thanks.html': html('Thanks from the partner', '<p>See you soon.</p>'),
  };
}

test.describe('the signup form on another site', () => {
  const admin = { email: uniqueAdminEmail('embed-admin'), password: 'correct horse battery staple 42' };
  let server: E2eServer;
  let partner: Site & { base: string };
  let stranger: Site & { base: string };

  test.beforeAll(async () => {
    partner = (await startSite(partnerPages)) as Site & { base: string };
    stranger = (await startSite(partnerPages)) as Site & { base: string };
    server = await startE2eServer({
      E2E_ADMIN_EMAIL: admin.email,
      E2E_ADMIN_PASSWORD: admin.password,
      EMBED_ORIGINS: partner.origin,
      EMBED_THANKS_URLS: `${partner.origin}/thanks.html`,
      SIGNUP_RATE_LIMIT_MAX: '10000',
    });
    partner.base = server.baseUrl;
    stranger.base = server.baseUrl;
  });

  test.afterAll(async () => {
    await server?.stop();
    await partner?.close();
    await stranger?.close();
  });

  /** The entry of `email`, read through the admin API. */
  async function entryOf(email: string) {
    const { access_token } = await signIn(server.baseUrl, admin);
    const res = await fetch(`${server.baseUrl}/api/admin/waitlist?q=${encodeURIComponent(email)}`, { headers: { authorization: `Bearer ${access_token}` } });
    const page = (await res.json()) as { entries: Array<{ email: string; referrer: string | null; utm_source: string | null; landing_path: string | null }> };
    return page.entries.find((entry) => entry.email === email);
  }

  /** Content-Security-Policy violations the page reports. */
  function cspViolations(page: Page): string[] {
    const seen: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) seen.push(message.text());
    });
    return seen;
  }

  test('the script tag renders an accessible form in place, under the host\'s strict CSP, and signs up with the keyboard', async ({ page }) => {
    const violations = cspViolations(page);
    await page.goto(`${partner.origin}/script.html?utm_source=partner-news`);
    const email = page.getByRole('textbox', { name: 'Email address' });
    await expect(email).toBeVisible();
    // Where the tag stands, between the two paragraphs, in a shadow root the host's styles do not reach.
    const order = await page.evaluate(() => [...document.querySelector('main')!.children].map((el) => el.tagName + (el.hasAttribute('data-waitlist-embed') ? '#embed' : '')));
    expect(order).toEqual(['H1', 'P', 'SCRIPT', 'DIV#embed', 'P']);
    const button = page.getByRole('button', { name: 'Join the Waitlist' });
    await expect(button).toBeVisible();
    expect(await button.evaluate((el) => getComputedStyle(el).fontSize)).toBe('16px');
    expect(await email.evaluate((el) => getComputedStyle(el).color)).not.toBe('rgb(255, 0, 0)');
    // The legends are there.
    await expect(page.getByText('Securities are offered through a registered funding portal intermediary under Regulation Crowdfunding')).toBeVisible();
    await expect(page.getByRole('heading', { name: 'Meridian Private Markets' })).toBeVisible();
    await expectNoAxeViolations(page);

    // Keyboard only: Tab into the field, type, Tab to the button, Enter.
    const address = `embed-${Date.now()}@example.com`;
    await page.keyboard.press('Tab');
    await expect(email).toBeFocused();
    await page.keyboard.type(address);
    await page.keyboard.press('Tab');
    await expect(button).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(page.getByText('Thank You!')).toBeVisible();
    await expect(page.getByText("You're now on the waitlist.")).toBeVisible();
    expect(await entryOf(address)).toMatchObject({ referrer: partner.origin, utm_source: 'partner-news', landing_path: '/script.html' });
    expect(violations).toEqual([]);
  });

  test('a plain form posts to the signup and ends on the partner\'s allowed thanks page', async ({ page }) => {
    await page.goto(`${partner.origin}/form.html`);
    const address = `plain-${Date.now()}@example.com`;
    await page.getByLabel('Email').fill(address);
    await page.getByRole('button', { name: 'Join' }).click();
    await expect(page).toHaveURL(`${partner.origin}/thanks.html`);
    await expect(page.getByRole('heading', { name: 'Thanks from the partner' })).toBeVisible();
    expect(await entryOf(address)).toMatchObject({ referrer: partner.origin });
  });

  test('another origin is refused, with the script and with a plain form', async ({ page }) => {
    await page.goto(`${stranger.origin}/script.html`);
    const scripted = `refused-${Date.now()}@example.com`;
    await page.getByRole('textbox', { name: 'Email address' }).fill(scripted);
    await page.getByRole('button', { name: 'Join the Waitlist' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Something went wrong: Please try again later.' })).toBeVisible();

    await page.goto(`${stranger.origin}/form.html`);
    const plain = `refused-plain-${Date.now()}@example.com`;
    await page.getByLabel('Email').fill(plain);
    const [answer] = await Promise.all([page.waitForResponse(`${server.baseUrl}/api/waitlist`), page.getByRole('button', { name: 'Join' }).click()]);
    expect(answer.status()).toBe(403);
    expect(await entryOf(scripted)).toBeUndefined();
    expect(await entryOf(plain)).toBeUndefined();
  });
});
