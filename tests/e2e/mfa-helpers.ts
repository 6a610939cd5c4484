import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { expect, type Page } from '@playwright/test';
import { Secret, TOTP } from 'otpauth';
import { e2eServerEnv } from '../support/e2e-server.js';

export { startE2eServer, type E2eServer } from '../support/e2e-server.js';

/**
 * Helpers of the MFA end-to-end tests: TOTP codes computed from the secret the page shows (with
 * `otpauth`, the library the server uses, and GoTrue's parameters), extra admins made with the
 * admin CLI of the production build, and a second server started with its own environment.
 */

const PERIOD_SECONDS = 30;

function totp(secret: string): TOTP {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: PERIOD_SECONDS });
}

/**
 * The code of the time step `offset` steps from now. The server accepts one step either way but
 * each step only once per factor, so a second sign-in soon after the enrolment uses the next step.
 */
export function totpCode(secret: string, offset = 0): string {
  return totp(secret).generate({ timestamp: Date.now() + offset * PERIOD_SECONDS * 1000 });
}

/** Six digits the server refuses: none of the codes of the steps it would accept. */
export function wrongTotpCode(secret: string): string {
  const accepted = new Set([-2, -1, 0, 1, 2].map((offset) => totpCode(secret, offset)));
  for (let n = 0; ; n += 1) {
    const candidate = String(n).padStart(6, '0');
    if (!accepted.has(candidate)) return candidate;
  }
}

export const uniqueAdminEmail = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;

/** Creates an admin in the database of the e2e server whose data directory is `dataDir`, with the production CLI. */
export function createAdmin(dataDir: string, email: string, password: string, options: string[] = []): void {
  const created = spawnSync(process.execPath, [path.resolve('dist/server/cli/admin.js'), 'create', email, ...options], {
    env: e2eServerEnv(dataDir),
    input: `${password}\n`,
    encoding: 'utf8',
  });
  if (created.status !== 0) throw new Error(`could not create ${email}:\n${created.stdout}${created.stderr}`);
}

export async function expectToast(page: Page, title: string, description?: string | RegExp) {
  let toast = page.locator('[data-sonner-toast]').filter({ hasText: title });
  if (description !== undefined) toast = toast.filter({ hasText: description });
  await expect(toast.first()).toBeVisible();
}

/**
 * axe on the page once every finite animation has ended: a toast sliding in or fading behind a
 * newer one is otherwise measured half-transparent, a colour-contrast failure of the moment.
 * Spinners (infinite animations) are left running.
 */
export async function expectNoAxeViolations(page: Page) {
  let violations = await axeOnceSettled(page);
  // A toast whose time ran out while axe was reading the page was measured as it faded out. If every
  // failure is a contrast failure of a toast's own markup (sonner's data-* attributes, which nothing
  // else on our pages carries) and that toast is leaving (sonner marked it removed) or gone, the page
  // is measured again once it has settled; a toast that stays is measured as it is.
  const TOAST_MARKUP = /^<[a-z]+[^>]*\sdata-(sonner-toast|title|description|content|icon|button|close-button)\b/;
  const targets = violations.flatMap((v) => v.nodes.map((n) => ({ id: v.id, html: n.html, selector: n.target.join(' ') })));
  if (targets.length > 0 && targets.every((t) => t.id === 'color-contrast' && TOAST_MARKUP.test(t.html))) {
    const leaving = await page.evaluate(
      (selectors) => selectors.every((s) => document.querySelector(s)?.closest('[data-sonner-toast][data-removed="true"]') ?? !document.querySelector(s)),
      targets.map((t) => t.selector),
    );
    if (leaving) violations = await axeOnceSettled(page);
  }
  expect(violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
}

async function axeOnceSettled(page: Page) {
  await page.waitForFunction(() =>
    document.getAnimations().every((animation) => animation.effect?.getTiming().iterations === Infinity || animation.playState !== 'running'),
  );
  return (await new AxeBuilder({ page }).analyze()).violations;
}

/**
 * With E2E_SHOTS_DIR set, saves full-page screenshots of the current view at 1280 and 390 px wide
 * (for a person to look at; nothing is compared), then restores the viewport.
 */
export async function screenshotView(page: Page, name: string) {
  const dir = process.env.E2E_SHOTS_DIR;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  const original = page.viewportSize();
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
    await page.screenshot({ path: path.join(dir, `${name}-${width}.png`), fullPage: true, animations: 'disabled' });
  }
  if (original) await page.setViewportSize(original);
}

/** The `aal` claim of the access token auth-js keeps in localStorage (null when signed out). */
export async function storedAal(page: Page, storageKey: string): Promise<string | null> {
  const raw = await page.evaluate((key) => localStorage.getItem(key), storageKey);
  if (!raw) return null;
  const token = (JSON.parse(raw) as { access_token: string }).access_token;
  const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { aal?: string };
  return payload.aal ?? null;
}
