import { afterEach } from 'vitest';
import { createAdmin } from '../../src/server/auth/admins.js';
import type { MailWorkerOverrides } from '../../src/server/mail/index.js';
import type { TestDialect } from './databases.js';
import { signIn, type Credentials } from './sign-in.js';
import { startSmtpServer, type TestSmtpServer } from './smtp.js';
import { createTestApp, type TestApp, type TestAppOptions } from './test-app.js';

/**
 * The set-up the admin API and e-mail suites share: an app with one admin signed in, an app that
 * sends e-mail to a test SMTP server with a worker the test drives, and the clean-ups after each test.
 */

/** The admin the admin-API suites sign in as. */
export const TEST_ADMIN: Credentials = { email: 'admin@example.com', password: 'correct horse battery staple' };
/** The site's origin and sender of the apps that send e-mail. */
export const TEST_PUBLIC_URL = 'https://waitlist.example.com';
export const TEST_MAIL_FROM = 'Product <hello@example.com>';

/** What to undo after each test, last first: push onto the list this returns (one list per file). */
export function cleanupsAfterEach(): Array<() => Promise<void>> {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  return cleanups;
}

/** The app (createTestApp) with TEST_ADMIN created and signed in through the auth API; `token` is the access token. */
export async function createAdminTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<{ t: TestApp; token: string }> {
  const t = await createTestApp(env, options);
  try {
    await createAdmin(t.app.database.db, TEST_ADMIN.email, TEST_ADMIN.password);
    return { t, token: (await signIn(t.app, TEST_ADMIN)).access_token };
  } catch (err) {
    await t.close();
    throw err;
  }
}

/** The environment of an app that sends e-mail through `smtpUrl`. */
export function mailEnv(smtpUrl: string): Record<string, string> {
  return { SMTP_URL: smtpUrl, MAIL_FROM: TEST_MAIL_FROM, PUBLIC_URL: TEST_PUBLIC_URL };
}

/** A test SMTP server, closed after the test. */
export async function startTestSmtp(cleanups: Array<() => Promise<void>>, options: Parameters<typeof startSmtpServer>[0] = {}): Promise<TestSmtpServer> {
  const server = await startSmtpServer(options);
  cleanups.push(() => server.close());
  return server;
}

/**
 * An app sending e-mail through `smtpUrl`, closed after the test. Its worker does not poll by itself:
 * the test drives passes with runOnce (or drainOutbox); an enqueue still wakes it.
 */
export async function createMailTestApp(
  cleanups: Array<() => Promise<void>>,
  dialect: TestDialect,
  smtpUrl: string,
  worker: MailWorkerOverrides = {},
  env: Record<string, string> = {},
): Promise<TestApp> {
  const t = await createTestApp({ ...mailEnv(smtpUrl), ...env }, { dialect, mailWorker: { pollIntervalMs: 3_600_000, ...worker } });
  cleanups.push(() => t.close());
  return t;
}

/** Worker passes until one claims nothing. */
export async function drainOutbox(t: TestApp): Promise<void> {
  for (let i = 0; i < 50; i++) if ((await t.app.mail.worker!.runOnce()) === 0) return;
  throw new Error('the outbox did not drain');
}
