import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/server/db/schema.js';
import { findOutboxMessage } from '../../../src/server/mail/outbox.js';
import { verifyLinkToken } from '../../../src/server/consent/links.js';
import { MANAGE_LINK_TTL_SECONDS, registerWaitlistEmails, waitlistEmailMessage, type WaitlistEmailTemplate } from '../../../src/server/consent/emails/index.js';
import { emailContent, siteContent } from '../../../src/shared/site/content.js';
import { CONFIRM_PAGE_PATH, PREFERENCES_PAGE_PATH } from '../../../src/shared/waitlist/consent-contract.js';
import { NO_CONSENT_RECORD, type EntryStatus, type WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { NO_ATTRIBUTION } from '../../../src/shared/waitlist/attribution.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { mailParts } from '../../support/mime.js';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../../support/smtp.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * The waitlist's e-mails (src/server/consent/emails) as a real SMTP server receives them: rendered
 * by the outbox worker at send time from React templates, with their links signed then, on PUBLIC_URL.
 */

const PUBLIC_URL = 'https://waitlist.example.com';
const MAIL_FROM = 'Meridian <hello@meridian-markets.example>';
const { productName } = siteContent;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setUp(dialect: TestDialect, env: Record<string, string> = {}): Promise<{ t: TestApp; server: TestSmtpServer }> {
  const server = await startSmtpServer();
  cleanups.push(() => server.close());
  const t = await createTestApp(
    { SMTP_URL: server.url, MAIL_FROM, PUBLIC_URL, ...env },
    { dialect, mailWorker: { pollIntervalMs: 3_600_000 } },
  );
  cleanups.push(() => t.close());
  // The waitlist routes register them (H-consent); calling again is harmless.
  registerWaitlistEmails(t.app);
  return { t, server };
}

async function drain(t: TestApp): Promise<void> {
  for (let i = 0; i < 50; i++) if ((await t.app.mail.worker!.runOnce()) === 0) return;
  throw new Error('the outbox did not drain');
}

let seq = 0;
function entry(status: EntryStatus, over: Partial<WaitlistEntry> = {}): WaitlistEntry {
  seq++;
  return {
    id: randomUUID(),
    email: `person${seq}@example.com`,
    created_at: new Date().toISOString(),
    ip_address: '203.0.113.7',
    country: null,
    city: null,
    region: null,
    ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION,
    status,
    ...over,
  };
}

/** Inserts the entry and queues its e-mail in one transaction (as signup and invite do). */
async function queue(t: TestApp, template: WaitlistEmailTemplate, e: WaitlistEntry): Promise<{ id: string; messageId: string }> {
  return t.app.database.db.transaction().execute(async (trx) => {
    await trx.insertInto('waitlist').values(e).execute();
    return (await t.app.mail.enqueue(trx, waitlistEmailMessage(template, e)))!;
  });
}

function tokenOf(url: string, path: string): string {
  const u = new URL(url);
  expect(u.origin + u.pathname).toBe(`${PUBLIC_URL}${path}`);
  return u.searchParams.get('token')!;
}

/** Every URL in a text, as written (`<…>` in the text part, href="…" in the HTML). */
function urlsIn(text: string): string[] {
  return [...text.matchAll(/https?:\/\/[^\s<>"']+/g)].map((m) => m[0].replace(/&amp;/g, '&'));
}

/** What every waitlist e-mail must carry; returns the manage URL and the text part. */
function checkCommon(t: TestApp, mail: ReceivedMail, e: Pick<WaitlistEntry, 'id' | 'email'>, subject: string, messageId: string): { manageUrl: string; text: string; html: string } {
  expect(mail.to).toEqual([e.email]);
  expect(mail.header('subject')).toBe(subject);
  expect(mail.header('from')).toBe(MAIL_FROM);
  expect(mail.header('message-id')).toBe(messageId);
  expect(mail.header('content-type')).toMatch(/^multipart\/alternative/);

  const listUnsubscribe = mail.header('list-unsubscribe')!;
  expect(listUnsubscribe).toMatch(/^<https:\/\/waitlist\.example\.com\/unsubscribe\?token=[^>]+>$/);
  expect(mail.header('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
  const manageUrl = listUnsubscribe.slice(1, -1);

  const claims = verifyLinkToken(t.app.secretBox, tokenOf(manageUrl, PREFERENCES_PAGE_PATH), 'manage');
  expect(claims.ok).toBe(true);
  if (claims.ok) {
    expect(claims.claims.entryId).toBe(e.id);
    expect(Math.abs(claims.claims.expiresAt - (Date.now() / 1000 + MANAGE_LINK_TTL_SECONDS))).toBeLessThan(600);
  }

  const { text, html } = mailParts(mail);
  expect(text).not.toBeNull();
  expect(html).not.toBeNull();
  // The footer: why, the manage link, the sender's name and postal address.
  expect(text).toContain(emailContent.footer.reason.replace('{productName}', productName));
  expect(text).toContain(`${emailContent.footer.manage} <${manageUrl}>`);
  expect(text).toContain(emailContent.postalAddress);
  expect(text).toContain(productName);
  expect(html).toContain(`lang="en"`);
  expect(html).toContain(emailContent.postalAddress);
  expect(html).toContain(`href="${manageUrl.replace(/&/g, '&amp;')}"`);
  expect(html).toContain(emailContent.footer.manage);
  // No image to miss: the product's name is text.
  expect(html).not.toMatch(/<img/i);
  // Links only ever on PUBLIC_URL (no Host header is involved in rendering at all).
  for (const url of [...urlsIn(text!), ...urlsIn(html!).filter((u) => !u.startsWith('http://www.w3.org/'))]) {
    expect(url.startsWith(`${PUBLIC_URL}/`)).toBe(true);
  }
  return { manageUrl, text: text!, html: html! };
}

describe.each(TEST_DIALECTS)('waitlist e-mails (%s)', (dialect: TestDialect) => {
  it('confirmation: subject, headers, a confirm link that works for CONFIRMATION_LINK_TTL_HOURS, the footer', async () => {
    const { t, server } = await setUp(dialect, { CONFIRMATION_LINK_TTL_HOURS: '48' });
    const e = entry('pending');
    const queued = await queue(t, 'confirmation', e);
    const row = await t.app.database.db.selectFrom('mail_outbox').selectAll().where('id', '=', queued.id).executeTakeFirstOrThrow();
    // Nothing rendered, no link stored: only the template and the entry's id.
    expect(row).toMatchObject({ template: 'confirmation', text_body: '', html_body: null, subject: `Confirm your email for the ${productName} waitlist` });
    expect(JSON.parse(row.template_data!)).toEqual({ entryId: e.id });

    await drain(t);
    expect(server.messages).toHaveLength(1);
    const mail = server.messages[0]!;
    const { text, html } = checkCommon(t, mail, e, `Confirm your email for the ${productName} waitlist`, queued.messageId);

    const words = emailContent.confirmation;
    expect(text).toContain(words.heading);
    expect(text).toContain(words.body.replace('{productName}', productName));
    expect(text).toContain(words.expiry.replace('{hours}', '48'));
    const confirmUrl = urlsIn(text).find((u) => u.startsWith(`${PUBLIC_URL}${CONFIRM_PAGE_PATH}?`))!;
    expect(text).toContain(`${words.button} <${confirmUrl}>`);
    expect(html).toContain(`href="${confirmUrl.replace(/&/g, '&amp;')}"`);
    const check = verifyLinkToken(t.app.secretBox, tokenOf(confirmUrl, CONFIRM_PAGE_PATH), 'confirm');
    expect(check.ok).toBe(true);
    if (check.ok) {
      expect(check.claims.entryId).toBe(e.id);
      expect(Math.abs(check.claims.expiresAt - (Date.now() / 1000 + 48 * 3600))).toBeLessThan(600);
    }
    // The confirm token is no manage token, and the other way round.
    expect(verifyLinkToken(t.app.secretBox, tokenOf(confirmUrl, CONFIRM_PAGE_PATH), 'manage')).toEqual({ ok: false, reason: 'invalid' });
    expect(await findOutboxMessage(t.app.database.db, queued.id)).toMatchObject({ status: 'sent' });
  });

  it('welcome: subject, headers, words and footer', async () => {
    const { t, server } = await setUp(dialect);
    const e = entry('confirmed');
    const queued = await queue(t, 'welcome', e);
    await drain(t);
    expect(server.messages).toHaveLength(1);
    const { text } = checkCommon(t, server.messages[0]!, e, `You're on the ${productName} waitlist`, queued.messageId);
    expect(text).toContain(emailContent.welcome.heading);
    expect(text).toContain(emailContent.welcome.body);
  });

  it('invite: subject, headers, the button to emailContent.invite.url on PUBLIC_URL', async () => {
    const { t, server } = await setUp(dialect);
    const e = entry('invited');
    const queued = await queue(t, 'invite', e);
    await drain(t);
    expect(server.messages).toHaveLength(1);
    const { text, html } = checkCommon(t, server.messages[0]!, e, `${productName} is live: your invitation`, queued.messageId);
    const inviteUrl = new URL(emailContent.invite.url, PUBLIC_URL).toString();
    expect(text).toContain(emailContent.invite.heading);
    expect(text).toContain(emailContent.invite.body.replace('{productName}', productName));
    expect(text).toContain(`${emailContent.invite.button} <${inviteUrl}>`);
    expect(html).toContain(`href="${inviteUrl}"`);
  });

  it('each message gets its own Message-ID and fresh links; the same entry twice gets two valid manage links', async () => {
    const { t, server } = await setUp(dialect);
    const e = entry('joined');
    const first = await queue(t, 'welcome', e);
    const second = (await t.app.mail.enqueue(t.app.database.db, waitlistEmailMessage('invite', e)))!;
    await drain(t);
    expect(server.messages.map((m) => m.header('message-id')).sort()).toEqual([first.messageId, second.messageId].sort());
    for (const m of server.messages) expect(verifyLinkToken(t.app.secretBox, tokenOf(m.header('list-unsubscribe')!.slice(1, -1), PREFERENCES_PAGE_PATH), 'manage').ok).toBe(true);
  });

  it('a signup over HTTP with a forged Host: the confirmation links are on PUBLIC_URL all the same', async () => {
    const { t, server } = await setUp(dialect, { SIGNUP_CONFIRMATION: 'required', TRUST_PROXY: 'true' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const res = await fetch(`http://127.0.0.1:${port}/api/waitlist`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', host: 'evil.example.net', 'x-forwarded-host': 'evil.example.net', 'x-forwarded-proto': 'http' },
      body: JSON.stringify({ email: 'visitor@example.com' }),
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ status: 'pending' });
    await drain(t);
    expect(server.messages).toHaveLength(1);
    const mail = server.messages[0]!;
    const e = await t.app.database.db.selectFrom('waitlist').selectAll().where('email', '=', 'visitor@example.com').executeTakeFirstOrThrow();
    const { text, html } = checkCommon(t, mail, e, `Confirm your email for the ${productName} waitlist`, mail.header('message-id')!);
    expect(`${text}${html}`).not.toContain('evil.example.net');
    expect(`${text}${html}`).not.toContain('127.0.0.1');
  });

  describe('not sent (failed with the reason, the SMTP server never contacted)', () => {
    async function notSent(template: WaitlistEmailTemplate, status: EntryStatus, change: (db: Kysely<Database>, e: WaitlistEntry) => Promise<void>, reason: string) {
      const { t, server } = await setUp(dialect);
      const e = entry(status);
      // Queued, then the entry changes before the worker gets to it (one transaction: the worker
      // sees both at once, exactly as if it had been busy elsewhere in between).
      const queued = await t.app.database.db.transaction().execute(async (trx) => {
        await trx.insertInto('waitlist').values(e).execute();
        const q = (await t.app.mail.enqueue(trx, waitlistEmailMessage(template, e)))!;
        await change(trx, e);
        return q;
      });
      await drain(t);
      expect(await findOutboxMessage(t.app.database.db, queued.id)).toMatchObject({ status: 'failed', lastError: `Not sent: ${reason}` });
      expect(server.attempts).toBe(0);
    }
    const setStatus = (status: EntryStatus) => async (db: Kysely<Database>, e: WaitlistEntry) => {
      await db.updateTable('waitlist').set({ status }).where('id', '=', e.id).execute();
    };
    const erase = async (db: Kysely<Database>, e: WaitlistEntry) => {
      await db.deleteFrom('waitlist').where('id', '=', e.id).execute();
    };

    it('the person unsubscribed before the confirmation was sent', () => notSent('confirmation', 'pending', setStatus('unsubscribed'), 'the recipient unsubscribed'));
    it('the person unsubscribed before the invite was sent', () => notSent('invite', 'invited', setStatus('unsubscribed'), 'the recipient unsubscribed'));
    it('the person erased their entry before the welcome was sent', () => notSent('welcome', 'joined', erase, 'the recipient is no longer on the waitlist'));
    it('the address was confirmed before the confirmation was sent', () =>
      notSent('confirmation', 'pending', setStatus('confirmed'), 'the address no longer awaits confirmation (confirmed)'));
  });

  it('without SMTP_URL: registering does nothing and needs no PUBLIC_URL', async () => {
    const t = await createTestApp({}, { dialect });
    cleanups.push(() => t.close());
    expect(() => registerWaitlistEmails(t.app)).not.toThrow();
    expect(await t.app.mail.enqueue(t.app.database.db, waitlistEmailMessage('invite', entry('joined')))).toBeNull();
  });
});
