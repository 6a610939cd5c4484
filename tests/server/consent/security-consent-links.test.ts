import { afterEach, describe, expect, it, vi } from 'vitest';
import { verifyLinkToken, createLinkToken } from '../../../src/server/consent/links.js';
import { ERASE_LINK_TTL_SECONDS, MANAGE_LINK_TTL_SECONDS } from '../../../src/server/consent/emails/index.js';
import { findWaitlistEntryByEmail } from '../../../src/server/db/waitlist-entries.js';
import { emailContent, siteContent } from '../../../src/shared/site/content.js';
import {
  ERASE_API_PATH,
  ERASE_LINK_API_PATH,
  ERASE_PAGE_PATH,
  LINK_ERRORS,
  MANAGE_LINK_TTL_DAYS,
  PREFERENCES_API_PATH,
  PREFERENCES_PAGE_PATH,
  UNSUBSCRIBE_API_PATH,
  type LinkErrorCode,
  type LinkPurpose,
} from '../../../src/shared/waitlist/consent-contract.js';
import { SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { mailParts } from '../../support/mime.js';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../../support/smtp.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Security review, finding 6: the one-click unsubscribe link (List-Unsubscribe, seen by mail
 * providers, forwarders and archives) only unsubscribes and shows the address masked; erasure takes
 * a fresh link e-mailed at that moment (valid an hour, usable once); manage links expire after 90
 * days, and an expired link says which it was.
 */

const PUBLIC_URL = 'https://waitlist.example.com';
const EMAIL = 'alice.private@example.com';
const MASKED = 'a•••@example.com';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe.each(TEST_DIALECTS)('e-mail links (%s)', (dialect: TestDialect) => {
  let t: TestApp;
  let smtp: TestSmtpServer;

  async function start(): Promise<void> {
    smtp = await startSmtpServer();
    cleanups.push(() => smtp.close());
    t = await createTestApp(
      { SMTP_URL: smtp.url, MAIL_FROM: 'Product <hello@example.com>', PUBLIC_URL, MAIL_WELCOME: 'on', SIGNUP_RATE_LIMIT_MAX: '1000' },
      { dialect, mailWorker: { pollIntervalMs: 3_600_000 } },
    );
    cleanups.push(() => t.close());
  }

  /** Sends what is queued (the worker runs only when asked here). */
  async function drain(): Promise<void> {
    await vi.waitFor(async () => {
      while ((await t.app.mail.worker!.runOnce()) !== 0);
      const waiting = await t.app.database.db.selectFrom('mail_outbox').select('id').where('status', 'in', ['queued', 'sending']).execute();
      expect(waiting).toEqual([]);
    });
  }

  const post = (url: string, payload: unknown) =>
    t.app.inject({ method: 'POST', url, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } });
  const postForm = (url: string, body: string) => t.app.inject({ method: 'POST', url, payload: body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  const entry = () => findWaitlistEntryByEmail(t.app.database.db, EMAIL);
  const tokenIn = (url: string, path: string) => {
    const parsed = new URL(url);
    expect(parsed.origin + parsed.pathname).toBe(`${PUBLIC_URL}${path}`);
    return parsed.searchParams.get('token')!;
  };
  const mailsTo = (subject: string) => smtp.messages.filter((m) => m.header('subject') === subject.replace('{productName}', siteContent.productName));
  const expectLinkError = (res: { statusCode: number; json(): unknown }, code: LinkErrorCode) => {
    expect(res.statusCode).toBe(LINK_ERRORS[code].status);
    expect(res.json()).toEqual({ error: { code, message: LINK_ERRORS[code].message } });
  };
  const sign = (entryId: string, purpose: LinkPurpose, expiresAt: number) => createLinkToken(t.app.secretBox, { entryId, purpose, expiresAt });

  /** Signs up and returns the welcome e-mail's List-Unsubscribe token. */
  async function signUpAndManageToken(): Promise<string> {
    expect((await t.app.inject({ method: 'POST', url: SIGNUP_PATH, payload: { email: EMAIL } })).statusCode).toBe(201);
    await drain();
    const [welcome] = mailsTo(emailContent.welcome.subject);
    return tokenIn(welcome!.header('list-unsubscribe')!.slice(1, -1), PREFERENCES_PAGE_PATH);
  }

  function erasureLinkIn(mail: ReceivedMail): string {
    const { text } = mailParts(mail);
    const url = new RegExp(`${PUBLIC_URL}${ERASE_PAGE_PATH}\\?token=[A-Za-z0-9._-]+`).exec(text ?? '')?.[0];
    if (!url) throw new Error(`no erasure link in:\n${mail.raw}`);
    return url;
  }

  it('the List-Unsubscribe link does not erase, shows the address masked, and expires after 90 days', async () => {
    await start();
    const manage = await signUpAndManageToken();
    const claims = verifyLinkToken(t.app.secretBox, manage, 'manage');
    expect(claims.ok && Math.abs(claims.claims.expiresAt - (Date.now() / 1000 + MANAGE_LINK_TTL_DAYS * 86_400))).toBeLessThan(600);
    expect(MANAGE_LINK_TTL_SECONDS).toBe(90 * 86_400);

    // Whose link it is: masked, never the address.
    const view = await post(PREFERENCES_API_PATH, { token: manage });
    expect(view.json()).toEqual({ email: MASKED, status: 'joined', link: 'manage' });
    expect(view.body).not.toContain('alice');
    // Erasing with it, by every route there is: refused, nothing changes.
    expectLinkError(await post(ERASE_API_PATH, { token: manage }), 'link_invalid');
    expect((await postForm(`${ERASE_PAGE_PATH}?token=${manage}`, 'action=erase')).statusCode).toBe(400);
    const asked = await postForm(`${PREFERENCES_PAGE_PATH}?token=${manage}`, 'action=erase');
    expect(asked.statusCode).toBe(200);
    expect(asked.body).toContain(siteContent.preferencesPage.eraseLink.sent.title);
    expect(asked.body).toContain(MASKED);
    expect(asked.body).not.toContain('alice');
    expect(await entry()).toMatchObject({ email: EMAIL, status: 'joined' });
    // It still unsubscribes.
    expect((await post(UNSUBSCRIBE_API_PATH, { token: manage })).json()).toEqual({ outcome: 'unsubscribed' });

    // Expired: the page says so, in words for this link.
    const { id } = (await entry())!;
    const expired = sign(id, 'manage', Math.floor(Date.now() / 1000) - 60);
    expectLinkError(await post(PREFERENCES_API_PATH, { token: expired }), 'manage_link_expired');
    const page = await postForm(`${PREFERENCES_PAGE_PATH}?token=${expired}`, 'action=unsubscribe');
    expect(page.statusCode).toBe(410);
    expect(page.body).toContain(LINK_ERRORS.manage_link_expired.title);
    expect(page.body).toContain(`${MANAGE_LINK_TTL_DAYS} days`);
  });

  it('erasure takes a fresh link e-mailed on request: valid an hour, usable once, sent even to an unsubscribed address', async () => {
    await start();
    const manage = await signUpAndManageToken();
    const requested = await post(ERASE_LINK_API_PATH, { token: manage });
    expect(requested.statusCode).toBe(200);
    expect(requested.json()).toEqual({ outcome: 'sent', email: MASKED });
    // Asked again at once: the link just sent works; no second e-mail.
    expect((await post(ERASE_LINK_API_PATH, { token: manage })).json()).toEqual({ outcome: 'sent', email: MASKED });
    // Unsubscribing meanwhile stops our e-mail, not the answer to the person's request.
    expect((await post(UNSUBSCRIBE_API_PATH, { token: manage })).json()).toEqual({ outcome: 'unsubscribed' });
    await drain();
    const erasureMails = mailsTo(emailContent.erasure.subject);
    expect(erasureMails).toHaveLength(1);
    const [mail] = erasureMails;
    expect(mail!.to).toEqual([EMAIL]);
    expect(mail!.header('list-unsubscribe')).toBeUndefined();
    const eraseToken = tokenIn(erasureLinkIn(mail!), ERASE_PAGE_PATH);
    const claims = verifyLinkToken(t.app.secretBox, eraseToken, 'erase');
    expect(claims.ok).toBe(true);
    expect(claims.ok && Math.abs(claims.claims.expiresAt - (Date.now() / 1000 + ERASE_LINK_TTL_SECONDS))).toBeLessThan(60);
    expect(ERASE_LINK_TTL_SECONDS).toBe(3600);
    // It is not a manage link either.
    expectLinkError(await post(UNSUBSCRIBE_API_PATH, { token: eraseToken }), 'link_invalid');

    // Its page shows whose it is (masked); opening changes nothing; the button erases, once.
    expect((await post(PREFERENCES_API_PATH, { token: eraseToken })).json()).toEqual({ email: MASKED, status: 'unsubscribed', link: 'erase' });
    expect((await t.app.inject({ method: 'GET', url: `${ERASE_PAGE_PATH}?token=${eraseToken}` })).statusCode).not.toBe(500);
    expect(await entry()).toBeDefined();
    expect((await post(ERASE_API_PATH, { token: eraseToken })).json()).toEqual({ outcome: 'erased' });
    expect(await entry()).toBeUndefined();
    expectLinkError(await post(ERASE_API_PATH, { token: eraseToken }), 'entry_gone');
    const again = await postForm(`${ERASE_PAGE_PATH}?token=${eraseToken}`, 'action=erase');
    expect(again.statusCode).toBe(404);

    // An hour later it has expired, and says so.
    const late = sign(claims.ok ? claims.claims.entryId : '', 'erase', Math.floor(Date.now() / 1000) - 1);
    expectLinkError(await post(ERASE_API_PATH, { token: late }), 'erase_link_expired');
    const latePage = await postForm(`${ERASE_PAGE_PATH}?token=${late}`, 'action=erase');
    expect(latePage.statusCode).toBe(410);
    expect(latePage.body).toContain(LINK_ERRORS.erase_link_expired.title);
  });

  it('the erasure page form (no JavaScript) erases with the e-mailed link, and only with it', async () => {
    await start();
    const manage = await signUpAndManageToken();
    await post(ERASE_LINK_API_PATH, { token: manage });
    await drain();
    const eraseToken = tokenIn(erasureLinkIn(mailsTo(emailContent.erasure.subject)[0]!), ERASE_PAGE_PATH);
    const page = await postForm(`${ERASE_PAGE_PATH}?token=${eraseToken}`, 'action=erase');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(siteContent.preferencesPage.erase.done.title);
    expect(await entry()).toBeUndefined();
    expect(await t.app.database.db.selectFrom('mail_outbox').select('id').execute()).toEqual([]);
  });
});
