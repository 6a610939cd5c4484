import { randomBytes } from 'node:crypto';
import { expect, test, type Browser, type BrowserContext, type ConsoleMessage, type Page } from '@playwright/test';
import { createSecretBox } from '../../src/server/crypto/secret-box.js';
import { createLinkToken } from '../../src/server/consent/links.js';
import { emailContent, siteContent } from '../../src/shared/site/content.js';
import { LINK_ERRORS, PREFERENCES_API_PATH } from '../../src/shared/waitlist/consent-contract.js';
import { LEAVE_ALL_WORDS } from '../../src/shared/lists/contract.js';
import type { EntryStatus } from '../../src/shared/waitlist/entry.js';
import { mailParts } from '../support/mime.js';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../support/smtp.js';
import { signIn } from '../support/sign-in.js';
import { sessionStorageState } from './fixtures.js';
import { expectNoAxeViolations, screenshotView, startE2eServer, uniqueAdminEmail, type E2eServer } from './mfa-helpers.js';

/**
 * The public pages of double opt-in in Chromium, against a server of their own (the production
 * build, SIGNUP_CONFIRMATION=required, e-mail to a real SMTP server started here): the thanks page's
 * check-inbox line, the links taken from the e-mails as received, the Confirm page (opening it changes
 * nothing, the button does), the e-mail preferences page (unsubscribe; the address masked; erasure by
 * a fresh link it e-mails, whose page erases after a dialog: security review, finding 6), forged,
 * expired and missing tokens, and the pages' forms without JavaScript.
 */

const { thanks, confirmPage, preferencesPage, erasePage } = siteContent;
const uniqueEmail = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
/** How the link pages show an address (consent/service.ts maskEmail): `p•••@example.com`. */
const masked = (email: string) => `${email[0]}•••${email.slice(email.indexOf('@'))}`;

let smtp: TestSmtpServer;
let server: E2eServer;
/** The server's secret key (AUTH_SECRET_KEY): lets the test sign a token the server accepts, an expired one. */
const secretKey = randomBytes(32);
/** An admin of this server, to see the entry's status where the team sees it. */
const admin = { email: uniqueAdminEmail('consent-admin'), password: 'correct horse battery staple 42' };

// Long flows through several pages (axe and two screenshots on each): more than the default 30 s on a busy machine.
test.describe.configure({ mode: 'serial', timeout: 120_000 });

test.beforeAll(async () => {
  smtp = await startSmtpServer();
  // PUBLIC_URL, which the e-mails' links start with: the server's own origin (startE2eServer's `publicUrl`).
  server = await startE2eServer(
    {
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Meridian Private Markets <hello@meridian-markets.example>',
      SIGNUP_CONFIRMATION: 'required',
      AUTH_SECRET_KEY: secretKey.toString('base64'),
      E2E_ADMIN_EMAIL: admin.email,
      E2E_ADMIN_PASSWORD: admin.password,
      SIGNUP_RATE_LIMIT_MAX: '10000',
    },
    { publicUrl: true },
  );
});

test.afterAll(async () => {
  await server?.stop();
  await smtp?.close();
});

// ------------------------------------------------------------------------------------------------
// Helpers

/** Collects console errors and warnings (hydration mismatches are reported there). */
function watchConsole(page: Page): ConsoleMessage[] {
  const messages: ConsoleMessage[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') messages.push(msg);
  });
  return messages;
}

/** The decoded text part of a message as sent. */
function textPart(mail: ReceivedMail): string {
  const { text } = mailParts(mail);
  if (text === null) throw new Error(`no text part in:\n${mail.raw}`);
  return text;
}

/** The message the SMTP server received for `address` (waits for the outbox worker); the first, or the first whose subject has `subject`. */
async function mailTo(address: string, subject?: string): Promise<ReceivedMail> {
  const matches = (m: ReceivedMail) => m.to.includes(address) && (subject === undefined || (m.header('subject') ?? '').includes(subject));
  await expect.poll(() => smtp.messages.some(matches), { timeout: 15_000 }).toBe(true);
  return smtp.messages.find(matches)!;
}

/** The erasure link of the erasure e-mail sent to `address` (the preferences page asked for it). */
async function erasureLink(address: string): Promise<string> {
  const mail = await mailTo(address, emailContent.erasure.heading);
  const link = new RegExp(`${server.baseUrl.replace(/[.]/g, '\\.')}/erase\\?token=[A-Za-z0-9._-]+`).exec(textPart(mail))?.[0];
  if (!link) throw new Error(`no erasure link in the e-mail to ${address}:\n${mail.raw}`);
  return link;
}

interface Links {
  confirm: string;
  manage: string;
}

/** The confirmation e-mail's links: the Confirm link from its text, the manage link from List-Unsubscribe. */
async function confirmationLinks(address: string): Promise<Links> {
  const mail = await mailTo(address);
  const text = textPart(mail);
  const base = server.baseUrl.replace(/[.]/g, '\\.');
  const confirm = new RegExp(`${base}/confirm\\?token=[A-Za-z0-9._-]+`).exec(text)?.[0];
  const manage = /^<([^>]+)>$/.exec(mail.header('list-unsubscribe') ?? '')?.[1];
  if (!confirm || !manage) throw new Error(`links not found in the e-mail to ${address}:\n${mail.raw}`);
  expect(manage.startsWith(`${server.baseUrl}/unsubscribe?token=`)).toBe(true);
  expect(text).toContain(manage);
  return { confirm, manage };
}

const tokenOf = (link: string) => new URL(link).searchParams.get('token') ?? '';

/** The entry's status as the preferences API tells it (a POST that changes nothing). */
async function statusOf(links: Links): Promise<EntryStatus | 'gone'> {
  const response = await fetch(`${server.baseUrl}${PREFERENCES_API_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: tokenOf(links.manage) }),
  });
  if (response.status === 404) return 'gone';
  expect(response.status).toBe(200);
  return ((await response.json()) as { status: EntryStatus }).status;
}

/** Signs up through the API (the landing page's own signup is tested once, below) and returns the e-mail's links. */
async function pendingSignup(label: string): Promise<{ email: string; links: Links }> {
  const email = uniqueEmail(label);
  const response = await fetch(`${server.baseUrl}/api/waitlist`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email }),
  });
  expect(response.status).toBe(201);
  expect(await response.json()).toEqual({ status: 'pending' });
  return { email, links: await confirmationLinks(email) };
}

/** The entry id a token names (its payload: version, purpose, expiry, then the id's 16 bytes). */
function entryIdOf(token: string): string {
  const hex = Buffer.from(token.split('.')[0] ?? '', 'base64url').subarray(6).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The same token with one character of its signature changed. */
function forged(token: string): string {
  const last = token.at(-1) === '0' ? '1' : '0';
  return `${token.slice(0, -1)}${last}`;
}

async function newPage(browser: Browser, options: { javaScriptEnabled?: boolean } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext(options);
  return { context, page: await context.newPage() };
}

const resultHeading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name });

/**
 * Waits until React has hydrated the page's form (its code loads after the prerendered HTML). A click
 * before that is the no-JavaScript form post, which works too but is tested on its own below.
 */
async function waitForHydration(page: Page) {
  await page.waitForFunction(() => {
    const form = document.querySelector('main form');
    return form !== null && Object.keys(form).some((key) => key.startsWith('__reactProps'));
  });
}

/** Opens a link page and waits until it is hydrated. */
async function openLink(page: Page, url: string) {
  await page.goto(url);
  await waitForHydration(page);
}

// ------------------------------------------------------------------------------------------------

test('sign up on the landing page → thanks with the check-inbox line → the e-mail link → Confirm', async ({ page, browser }) => {
  const messages = watchConsole(page);
  // The thanks page goes home after 5 s (tested in visitor.spec.ts): here its timer is held, so the page
  // stays while it is checked. Shorter timers (React's) run as usual. (Playwright's paused clock would
  // hold React's scheduling too.)
  await page.addInitScript(() => {
    const setTimeoutOfPage = window.setTimeout;
    window.setTimeout = ((handler: TimerHandler, timeout?: number, ...rest: unknown[]) =>
      (timeout ?? 0) >= 5000 ? 0 : setTimeoutOfPage(handler, timeout, ...rest)) as typeof window.setTimeout;
  });
  await page.goto(`${server.baseUrl}/`);
  await waitForHydration(page);
  await expect(page.getByRole('checkbox')).toHaveCount(0); // no consent text in content.ts: the spec's form
  const email = uniqueEmail('optin');
  await page.getByPlaceholder('Enter your email').fill(email);
  await page.getByRole('button', { name: 'Join the Waitlist' }).click();

  await expect(page).toHaveURL(`${server.baseUrl}/thanks`);
  await expect(page.getByRole('heading', { name: thanks.title })).toBeFocused();
  await expect(page.getByText(thanks.lead)).toBeVisible();
  await expect(page.getByText(thanks.notified)).toContainText(thanks.rocketEmoji);
  await expect(page.getByText(thanks.redirecting)).toBeVisible();
  await expect(page.getByText(thanks.checkInbox)).toBeVisible();
  await expectNoAxeViolations(page);
  await screenshotView(page, 'thanks-check-inbox');

  // A page load of /thanks (a reload, the no-JavaScript form's redirect) is the server's variant with the line, hydrated as is.
  await page.reload();
  await expect(page.getByText(thanks.checkInbox)).toBeVisible();
  await page.waitForLoadState('networkidle');

  expect(messages.map((m) => m.text())).toEqual([]);

  const links = await confirmationLinks(email);
  expect(await statusOf(links)).toBe('pending');

  const { context, page: linkPage } = await newPage(browser);
  await confirmAndCheck(linkPage, links);
  await context.close();
  // The admin sees the entry confirmed, in the Status column beside the spec's columns.
  const adminContext = await browser.newContext({ storageState: sessionStorageState(server.baseUrl, await signIn(server.baseUrl, admin)) });
  try {
    const adminPage = await adminContext.newPage();
    await adminPage.goto(`${server.baseUrl}/admin`);
    // The waitlist table's row (the outbox below lists the confirmation e-mail to the same address).
    const row = adminPage.getByRole('row', { name: `Select ${email}` });
    await expect(row).toBeVisible();
    await expect(row.getByText('Confirmed', { exact: true })).toBeVisible();
    await screenshotView(adminPage, 'admin-entry-confirmed');
  } finally {
    await adminContext.close();
  }
});

async function confirmAndCheck(page: Page, links: Links) {
  const messages = watchConsole(page);
  // Opening the link (as a mail scanner would) changes nothing.
  await openLink(page, links.confirm);
  await expect(resultHeading(page, confirmPage.title)).toBeVisible();
  await expect(page.getByText(confirmPage.lead)).toBeVisible();
  await page.waitForLoadState('networkidle');
  expect(await statusOf(links)).toBe('pending');
  await expectNoAxeViolations(page);
  await screenshotView(page, 'confirm');

  // The button, busy while the request runs.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route('**/api/waitlist/confirm', async (route) => {
    await held;
    await route.continue();
  });
  await page.getByRole('button', { name: confirmPage.button }).click();
  await expect(page.getByRole('button', { name: confirmPage.busy })).toHaveAttribute('aria-disabled', 'true');
  await screenshotView(page, 'confirm-busy');
  release();
  await expect(resultHeading(page, confirmPage.confirmed.title)).toBeFocused();
  await expect(page.getByText(confirmPage.confirmed.message)).toBeVisible();
  await expect(page.getByRole('link', { name: confirmPage.homeLink })).toHaveAttribute('href', '/');
  expect(await statusOf(links)).toBe('confirmed');
  await expectNoAxeViolations(page);
  await screenshotView(page, 'confirm-done');

  // The same link again: already confirmed, nothing else changes.
  await page.unroute('**/api/waitlist/confirm');
  await openLink(page, links.confirm);
  await page.getByRole('button', { name: confirmPage.button }).click();
  await expect(resultHeading(page, confirmPage.alreadyConfirmed.title)).toBeFocused();
  await expect(page.getByText(confirmPage.alreadyConfirmed.message)).toBeVisible();
  expect(await statusOf(links)).toBe('confirmed');
  await screenshotView(page, 'confirm-already');


  expect(messages.map((m) => m.text())).toEqual([]);
}

test('the preferences page: the address masked, Unsubscribe, then an erasure link by e-mail, whose page erases after the dialog', async ({ page }) => {
  const messages = watchConsole(page);
  const { email, links } = await pendingSignup('prefs');

  await page.goto(links.manage);
  await expect(resultHeading(page, preferencesPage.title)).toBeVisible();
  await expect(page.getByText(masked(email))).toBeVisible();
  await expect(page.getByText(email)).toHaveCount(0);
  await expect(page.getByText(preferencesPage.unsubscribe.explanation)).toBeVisible();
  await expect(page.getByText(preferencesPage.eraseLink.explanation)).toBeVisible();
  // The manage link does not erase: no erase button here. On one list only: no "leave every list".
  await expect(page.getByRole('button', { name: preferencesPage.erase.button, exact: true })).toHaveCount(0);
  await expect(page.getByRole('button', { name: LEAVE_ALL_WORDS.button })).toHaveCount(0);
  expect(await statusOf(links)).toBe('pending');
  await expectNoAxeViolations(page);
  await screenshotView(page, 'preferences');

  await page.getByRole('button', { name: preferencesPage.unsubscribe.button }).click();
  await expect(page.getByRole('heading', { level: 2, name: preferencesPage.unsubscribe.done.title })).toBeFocused();
  await expect(page.getByText(preferencesPage.unsubscribe.done.message)).toBeVisible();
  await expect(page.getByRole('button', { name: preferencesPage.unsubscribe.button })).toHaveCount(0);
  expect(await statusOf(links)).toBe('unsubscribed');
  await expectNoAxeViolations(page);
  await screenshotView(page, 'preferences-unsubscribed');

  // Opened again later: the page says so instead of offering the button.
  await page.reload();
  await expect(page.getByRole('heading', { level: 2, name: preferencesPage.unsubscribe.already.title })).toBeVisible();
  await expect(page.getByText(masked(email))).toBeVisible();

  // Erasure: the page e-mails a fresh link (to an unsubscribed address too).
  await page.getByRole('button', { name: preferencesPage.eraseLink.button }).click();
  await expect(page.getByRole('heading', { level: 2, name: preferencesPage.eraseLink.sent.title })).toBeFocused();
  await expect(page.getByText(preferencesPage.eraseLink.sent.message.replace('{email}', masked(email)))).toBeVisible();
  expect(await statusOf(links)).toBe('unsubscribed');
  await expectNoAxeViolations(page);
  await screenshotView(page, 'preferences-erase-link-sent');

  // The e-mailed link's page: whose it is, and Erase asks first; Cancel changes nothing and gives focus back to the button.
  await page.goto(await erasureLink(email));
  await waitForHydration(page);
  await expect(resultHeading(page, erasePage.title)).toBeVisible();
  await expect(page.getByText(masked(email))).toBeVisible();
  await expect(page.getByText(preferencesPage.erase.explanation)).toBeVisible();
  const eraseButton = page.getByRole('button', { name: preferencesPage.erase.button, exact: true });
  await eraseButton.click();
  const dialog = page.getByRole('alertdialog', { name: preferencesPage.erase.confirmTitle });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText(preferencesPage.erase.confirmDescription);
  await dialog.getByRole('button', { name: preferencesPage.erase.cancel }).click();
  await expect(dialog).toHaveCount(0);
  await expect(eraseButton).toBeFocused();
  expect(await statusOf(links)).toBe('unsubscribed');

  await eraseButton.click();
  await expect(dialog).toBeVisible();
  await expectNoAxeViolations(page);
  await screenshotView(page, 'erase-dialog');
  await dialog.getByRole('button', { name: preferencesPage.erase.confirmButton }).click();
  await expect(resultHeading(page, preferencesPage.erase.done.title)).toBeFocused();
  await expect(page.getByText(preferencesPage.erase.done.message)).toBeVisible();
  expect(await statusOf(links)).toBe('gone');
  await expectNoAxeViolations(page);
  await screenshotView(page, 'erased');
  expect(messages.map((m) => m.text())).toEqual([]);

  // The links after the erasure: nothing left to change (the browser logs the API's 404).
  await page.reload();
  await expect(resultHeading(page, LINK_ERRORS.entry_gone.title)).toBeVisible();
  await page.goto(links.manage);
  await expect(resultHeading(page, LINK_ERRORS.entry_gone.title)).toBeVisible();
  await expect(page.getByText(LINK_ERRORS.entry_gone.message)).toBeVisible();
  await screenshotView(page, 'preferences-entry-gone');
});

test('a forged, an expired and a missing token: a clear page, nothing changed', async ({ page }) => {
  const { links } = await pendingSignup('badlink');
  const confirmToken = tokenOf(links.confirm);

  // Forged: the page opens as usual (it cannot tell), the button gets the refusal.
  await openLink(page, `${server.baseUrl}/confirm?token=${forged(confirmToken)}`);
  await page.getByRole('button', { name: confirmPage.button }).click();
  await expect(resultHeading(page, LINK_ERRORS.link_invalid.title)).toBeFocused();
  await expect(page.getByText(LINK_ERRORS.link_invalid.message)).toBeVisible();
  await expect(page.getByRole('button')).toHaveCount(0);
  expect(await statusOf(links)).toBe('pending');
  await expectNoAxeViolations(page);
  await screenshotView(page, 'confirm-link-invalid');

  // Expired: a token the server signed (same key), whose time is up.
  const expired = createLinkToken(createSecretBox(secretKey), {
    entryId: entryIdOf(confirmToken),
    purpose: 'confirm',
    expiresAt: Math.floor(Date.now() / 1000) - 60,
  });
  await openLink(page, `${server.baseUrl}/confirm?token=${expired}`);
  await page.getByRole('button', { name: confirmPage.button }).click();
  await expect(resultHeading(page, LINK_ERRORS.link_expired.title)).toBeFocused();
  await expect(page.getByText(LINK_ERRORS.link_expired.message)).toBeVisible();
  expect(await statusOf(links)).toBe('pending');
  await screenshotView(page, 'confirm-link-expired');

  // A confirm link is not a manage link: the preferences page refuses it as soon as it opens.
  await page.goto(`${server.baseUrl}/unsubscribe?token=${confirmToken}`);
  await expect(resultHeading(page, LINK_ERRORS.link_invalid.title)).toBeVisible();
  await expect(page.getByRole('button')).toHaveCount(0);
  await page.goto(`${server.baseUrl}/unsubscribe?token=${forged(tokenOf(links.manage))}`);
  await expect(resultHeading(page, LINK_ERRORS.link_invalid.title)).toBeVisible();
  await expectNoAxeViolations(page);
  await screenshotView(page, 'preferences-link-invalid');
  expect(await statusOf(links)).toBe('pending');

  // An expired manage link and an expired erasure link: each page says so as soon as it opens.
  const manageExpired = createLinkToken(createSecretBox(secretKey), { entryId: entryIdOf(confirmToken), purpose: 'manage', expiresAt: Math.floor(Date.now() / 1000) - 60 });
  await page.goto(`${server.baseUrl}/unsubscribe?token=${manageExpired}`);
  await expect(resultHeading(page, LINK_ERRORS.manage_link_expired.title)).toBeVisible();
  await expect(page.getByText(LINK_ERRORS.manage_link_expired.message)).toBeVisible();
  await expect(page.getByRole('button')).toHaveCount(0);
  await expectNoAxeViolations(page);
  await screenshotView(page, 'preferences-link-expired');
  const eraseExpired = createLinkToken(createSecretBox(secretKey), { entryId: entryIdOf(confirmToken), purpose: 'erase', expiresAt: Math.floor(Date.now() / 1000) - 60 });
  await page.goto(`${server.baseUrl}/erase?token=${eraseExpired}`);
  await expect(resultHeading(page, LINK_ERRORS.erase_link_expired.title)).toBeVisible();
  await expect(page.getByText(LINK_ERRORS.erase_link_expired.message)).toBeVisible();
  await expect(page.getByRole('button')).toHaveCount(0);
  await screenshotView(page, 'erase-link-expired');
  // A manage link is not an erasure link.
  await page.goto(`${server.baseUrl}/erase?token=${tokenOf(links.manage)}`);
  await expect(resultHeading(page, LINK_ERRORS.link_invalid.title)).toBeVisible();
  expect(await statusOf(links)).toBe('pending');

  // No token at all: the missing-token text and no buttons.
  await page.goto(`${server.baseUrl}/confirm`);
  await expect(page.getByText(confirmPage.missingToken)).toBeVisible();
  await expect(page.getByRole('button')).toHaveCount(0);
  await expectNoAxeViolations(page);
  await screenshotView(page, 'confirm-missing-token');
  await page.goto(`${server.baseUrl}/unsubscribe`);
  await expect(page.getByText(preferencesPage.missingToken)).toBeVisible();
  await expect(page.getByRole('button')).toHaveCount(0);
  await screenshotView(page, 'preferences-missing-token');
  await page.goto(`${server.baseUrl}/erase`);
  await expect(page.getByText(erasePage.missingToken)).toBeVisible();
  await expect(page.getByRole('button')).toHaveCount(0);
});

test('a network failure is a toast, and the button can be used again', async ({ page }) => {
  const { links } = await pendingSignup('netfail');
  await openLink(page, links.confirm);
  await page.route('**/api/waitlist/confirm', (route) => route.abort('connectionreset'));
  const button = page.getByRole('button', { name: confirmPage.button });
  await button.click();
  await expect(page.locator('[data-sonner-toast]').filter({ hasText: 'Something went wrong' })).toBeVisible();
  await expect(button).toHaveAttribute('aria-disabled', 'false');
  await expect(button).toBeFocused();
  expect(await statusOf(links)).toBe('pending');

  await page.unroute('**/api/waitlist/confirm');
  await button.click();
  await expect(resultHeading(page, confirmPage.confirmed.title)).toBeFocused();
  expect(await statusOf(links)).toBe('confirmed');
});

test.describe('without JavaScript', () => {
  test('signup → thanks with the line; Confirm posts the form and the server answers a page', async ({ browser }) => {
    const { context, page } = await newPage(browser, { javaScriptEnabled: false });
    await page.goto(`${server.baseUrl}/`);
    const email = uniqueEmail('nojs-confirm');
    await page.getByPlaceholder('Enter your email').fill(email);
    await page.getByRole('button', { name: 'Join the Waitlist' }).click();
    await expect(page).toHaveURL(`${server.baseUrl}/thanks`);
    await expect(page.getByRole('heading', { name: thanks.title })).toBeVisible();
    await expect(page.getByText(thanks.checkInbox)).toBeVisible();
    await screenshotView(page, 'nojs-thanks-check-inbox');

    const links = await confirmationLinks(email);
    await page.goto(links.confirm);
    await expect(page.getByText(confirmPage.lead)).toBeVisible();
    expect(await statusOf(links)).toBe('pending');
    await page.getByRole('button', { name: confirmPage.button }).click();
    await expect(resultHeading(page, confirmPage.confirmed.title)).toBeVisible();
    await expect(page.getByText(confirmPage.confirmed.message)).toBeVisible();
    expect(page.url()).toBe(links.confirm);
    expect(await statusOf(links)).toBe('confirmed');
    await screenshotView(page, 'nojs-confirm-done');

    // A forged token: the server's page says what is wrong.
    await page.goto(`${server.baseUrl}/confirm?token=${forged(tokenOf(links.confirm))}`);
    await page.getByRole('button', { name: confirmPage.button }).click();
    await expect(resultHeading(page, LINK_ERRORS.link_invalid.title)).toBeVisible();
    await expect(page.getByText(LINK_ERRORS.link_invalid.message)).toBeVisible();
    await screenshotView(page, 'nojs-confirm-link-invalid');
    await context.close();
  });

  test('preferences: Unsubscribe, then the erasure link by e-mail, whose page erases behind its "are you sure" disclosure', async ({ browser }) => {
    const { email, links } = await pendingSignup('nojs-prefs');
    const { context, page } = await newPage(browser, { javaScriptEnabled: false });

    await page.goto(links.manage);
    await expect(page.getByText(preferencesPage.leadWithoutJs)).toBeVisible();
    // The page cannot know whose link it is without JavaScript: "leave every list" is always there.
    await expect(page.getByRole('button', { name: LEAVE_ALL_WORDS.button })).toBeVisible();
    await screenshotView(page, 'nojs-preferences');
    await page.getByRole('button', { name: preferencesPage.unsubscribe.button, exact: true }).click();
    await expect(resultHeading(page, preferencesPage.unsubscribe.done.title)).toBeVisible();
    expect(await statusOf(links)).toBe('unsubscribed');
    await screenshotView(page, 'nojs-preferences-unsubscribed');

    await page.goto(links.manage);
    await page.getByRole('button', { name: preferencesPage.eraseLink.button, exact: true }).click();
    await expect(resultHeading(page, preferencesPage.eraseLink.sent.title)).toBeVisible();
    await expect(page.getByText(preferencesPage.eraseLink.sent.message.replace('{email}', masked(email)))).toBeVisible();
    expect(await statusOf(links)).toBe('unsubscribed');
    await screenshotView(page, 'nojs-preferences-erase-link-sent');

    await page.goto(await erasureLink(email));
    await expect(page.getByText(erasePage.leadWithoutJs)).toBeVisible();
    const erase = page.getByRole('button', { name: preferencesPage.erase.confirmButton, exact: true });
    await expect(erase).toBeHidden();
    await page.getByText(preferencesPage.erase.button, { exact: true }).click();
    await expect(page.getByText(preferencesPage.erase.confirmDescription)).toBeVisible();
    await screenshotView(page, 'nojs-erase-open');
    expect(await statusOf(links)).toBe('unsubscribed');
    await erase.click();
    await expect(resultHeading(page, preferencesPage.erase.done.title)).toBeVisible();
    expect(await statusOf(links)).toBe('gone');
    await screenshotView(page, 'nojs-erased');
    await context.close();
  });

  test('the prerendered pages, as they are before their code has loaded: no axe violations', async ({ browser }) => {
    const { links } = await pendingSignup('prerendered');
    // JavaScript on (axe needs it), the app's own scripts blocked: the pages as prerendered.
    const { context, page } = await newPage(browser);
    await page.route('**/assets/*.js', (route) => route.abort());
    await page.goto(links.confirm);
    await expect(page.getByRole('button', { name: confirmPage.button })).toBeVisible();
    await expectNoAxeViolations(page);
    await page.goto(links.manage);
    await expect(page.getByRole('button', { name: preferencesPage.eraseLink.button })).toBeVisible();
    await expectNoAxeViolations(page);
    // The erasure page as prerendered (a signed erasure link, so nothing is sent by e-mail here).
    const eraseToken = createLinkToken(createSecretBox(secretKey), { entryId: entryIdOf(tokenOf(links.confirm)), purpose: 'erase', expiresAt: Math.floor(Date.now() / 1000) + 3600 });
    await page.goto(`${server.baseUrl}/erase?token=${eraseToken}`);
    await page.getByText(preferencesPage.erase.button, { exact: true }).click();
    await expect(page.getByText(preferencesPage.erase.confirmDescription)).toBeVisible();
    await expectNoAxeViolations(page);
    expect(await statusOf(links)).toBe('pending');
    await context.close();
  });
});
