import { test as base, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { E2E_ADMIN, E2E_BASE_URL, E2E_DATA_DIR } from '../../playwright.config.js';
import { AUTH_STORAGE_KEY } from '../../src/web/session/auth-client.js';
import { signIn, type AuthSession, type Credentials } from '../support/sign-in.js';
import { createAdmin, uniqueAdminEmail } from './mfa-helpers.js';

export type StorageState = Awaited<ReturnType<BrowserContext['storageState']>>;

/**
 * A browser storage state holding a new admin session, made through the auth API instead of the /auth
 * page: auth-js finds it in localStorage, as if the admin had just signed in.
 */
async function adminStorageState(credentials: Credentials = E2E_ADMIN): Promise<StorageState> {
  return sessionStorageState(E2E_BASE_URL, await signIn(E2E_BASE_URL, credentials));
}

/** A browser storage state holding `session` for the site at `origin`, where auth-js looks for it. */
export function sessionStorageState(origin: string, session: AuthSession): StorageState {
  return {
    cookies: [],
    origins: [{ origin, localStorage: [{ name: AUTH_STORAGE_KEY, value: JSON.stringify(session) }] }],
  };
}

async function newAdminContext(browser: Browser, storageState: StorageState): Promise<BrowserContext> {
  return browser.newContext({ storageState, acceptDownloads: true });
}

export const test = base.extend<
  {
    /** A page signed in with the worker's shared session: for tests that keep the session. */
    adminPage: Page;
    /**
     * A context signed in as `ownAdmin`, with a session of its own: for tests that end it. Not the
     * shared admin: a global sign-out ends every session of its user, the other worker's included.
     */
    ownAdminContext: BrowserContext;
  },
  { adminSession: StorageState; ownAdmin: Credentials }
>({
  // One sign-in per worker: the auth service limits sign-in attempts per address.
  // eslint-disable-next-line no-empty-pattern -- Playwright requires the pattern; this fixture uses no other.
  adminSession: [async ({}, use) => use(await adminStorageState()), { scope: 'worker' }],
  adminPage: async ({ browser, adminSession }, use) => {
    const context = await newAdminContext(browser, adminSession);
    await use(await context.newPage());
    await context.close();
  },
  // An admin of this worker's own, whose sessions no other test file uses.
  ownAdmin: [
    // eslint-disable-next-line no-empty-pattern -- Playwright requires the pattern; this fixture uses no other.
    async ({}, use) => {
      const credentials = { email: uniqueAdminEmail('own'), password: 'copper lantern orchard violet 58' };
      createAdmin(E2E_DATA_DIR, credentials.email, credentials.password);
      await use(credentials);
    },
    { scope: 'worker' },
  ],
  ownAdminContext: async ({ browser, ownAdmin }, use) => {
    const context = await newAdminContext(browser, await adminStorageState(ownAdmin));
    await use(context);
    await context.close();
  },
});

export { expect } from '@playwright/test';
