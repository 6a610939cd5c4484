import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { listAudit } from '../../../src/server/audit/audit-log.js';
import { createSecretBox } from '../../../src/server/crypto/secret-box.js';
import { run as runDbCli } from '../../../src/server/cli/db.js';
import { createLinkToken } from '../../../src/server/consent/links.js';
import { UNSUBSCRIBED_MAIL_ERROR } from '../../../src/server/consent/repository.js';
import { findWaitlistEntryByEmail } from '../../../src/server/db/waitlist-entries.js';
import { isSuppressed, suppressionHash } from '../../../src/server/consent/suppression.js';
import { siteContent } from '../../../src/shared/site/content.js';
import {
  CONFIRM_API_PATH,
  ERASE_API_PATH,
  ERASE_LINK_API_PATH,
  LINK_ERRORS,
  PREFERENCES_API_PATH,
  UNSUBSCRIBE_API_PATH,
  type LinkPurpose,
} from '../../../src/shared/waitlist/consent-contract.js';
import { SIGNUP_ERRORS, SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { runCliInProcess } from '../../support/server-process.js';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../../support/smtp.js';
import { createTestApp, type TestApp, type TestAppOptions } from '../../support/test-app.js';

/**
 * Consent and e-mail links (issue 9: double opt-in, the consent record, one-click unsubscribe,
 * erasure): the real app on a real database, with a real SMTP server wherever mail is involved.
 */

const PUBLIC_URL = 'https://waitlist.example.com';
const MAIL_FROM = 'Product <hello@example.com>';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function smtp(): Promise<TestSmtpServer> {
  const server = await startSmtpServer();
  cleanups.push(() => server.close());
  return server;
}

async function app(dialect: TestDialect, env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const t = await createTestApp({ SIGNUP_RATE_LIMIT_MAX: '1000', ...env }, { dialect, ...options });
  cleanups.push(() => t.close());
  return t;
}

/** The app with e-mail on (a real SMTP server) and double opt-in unless `env` says otherwise. */
async function mailApp(dialect: TestDialect, env: Record<string, string> = {}, options: TestAppOptions = {}) {
  const server = await smtp();
  const t = await app(
    dialect,
    { SMTP_URL: server.url, MAIL_FROM, PUBLIC_URL, SIGNUP_CONFIRMATION: 'required', ...env },
    // No polling by itself: the tests send with drain() (an enqueue still wakes the worker).
    { mailWorker: { pollIntervalMs: 3_600_000 }, ...options },
  );
  return { t, smtp: server };
}

/**
 * Sends everything due, and waits for a send the woken worker may have in flight
 * (an enqueue wakes it, so a message can be 'sending' when runOnce finds nothing left).
 */
async function drain(t: TestApp): Promise<void> {
  for (let i = 0; i < 50; i++) {
    if ((await t.app.mail.worker!.runOnce()) !== 0) continue;
    await vi.waitFor(async () => {
      const sending = await t.app.database.db.selectFrom('mail_outbox').select('id').where('status', '=', 'sending').execute();
      expect(sending).toEqual([]);
    });
    return;
  }
  throw new Error('the outbox did not drain');
}

function signUp(t: TestApp, email: string, extra: Record<string, unknown> = {}, remoteAddress = '198.51.100.7') {
  return t.app.inject({ method: 'POST', url: SIGNUP_PATH, payload: { email, ...extra }, remoteAddress });
}

function postJson(t: TestApp, url: string, payload: unknown, remoteAddress = '198.51.100.7') {
  return t.app.inject({ method: 'POST', url, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' }, remoteAddress });
}

function postForm(t: TestApp, url: string, body: string, remoteAddress = '198.51.100.7') {
  return t.app.inject({ method: 'POST', url, payload: body, headers: FORM, remoteAddress });
}

async function entry(t: TestApp, email: string) {
  return findWaitlistEntryByEmail(t.app.database.db, email);
}

async function outbox(t: TestApp, to?: string) {
  const rows = await t.app.database.db
    .selectFrom('mail_outbox')
    .selectAll()
    .$if(to !== undefined, (qb) => qb.where('to_address', '=', to!))
    .orderBy('created_at')
    .execute();
  return rows.map((r) => ({ ...r, data: r.template_data === null ? null : (JSON.parse(r.template_data) as unknown) }));
}

function token(t: TestApp, entryId: string, purpose: LinkPurpose, expiresAt = Math.floor(Date.now() / 1000) + 3600): string {
  return createLinkToken(t.app.secretBox, { entryId, purpose, expiresAt });
}

/** The message's text as sent, quoted-printable soft breaks and escapes undone. */
function decoded(mail: ReceivedMail): string {
  return mail.raw.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

const TOKEN_RE = '([A-Za-z0-9_-]+\\.[0-9a-f]+)';

function confirmLinkIn(mail: ReceivedMail): string {
  const match = new RegExp(`${PUBLIC_URL}/confirm\\?token=${TOKEN_RE}`).exec(decoded(mail));
  if (!match) throw new Error(`no confirm link in:\n${decoded(mail)}`);
  return match[1]!;
}

/** The List-Unsubscribe URL's path and query (the request a mail provider makes). */
function listUnsubscribeOf(mail: ReceivedMail): { url: string; token: string; body: string } {
  const header = mail.header('list-unsubscribe') ?? '';
  const match = new RegExp(`^<${PUBLIC_URL}(/unsubscribe\\?token=${TOKEN_RE})>$`).exec(header);
  if (!match) throw new Error(`unexpected List-Unsubscribe: ${header}`);
  return { url: match[1]!, token: match[2]!, body: mail.header('list-unsubscribe-post') ?? '' };
}

function expectLinkError(res: { statusCode: number; json(): unknown }, code: keyof typeof LINK_ERRORS) {
  expect(res.statusCode).toBe(LINK_ERRORS[code].status);
  expect(res.json()).toEqual({ error: { code, message: LINK_ERRORS[code].message } });
}

describe.each(TEST_DIALECTS)('consent and e-mail links (%s)', (dialect: TestDialect) => {
  describe('signup with double opt-in (SIGNUP_CONFIRMATION=required)', () => {
    it('stores a pending entry with its consent record and the confirmation e-mail; the link confirms it, once', async () => {
      const { t, smtp } = await mailApp(dialect);
      const res = await signUp(t, 'ada@example.com');
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({ status: 'pending' });

      const pending = (await entry(t, 'ada@example.com'))!;
      expect(pending).toMatchObject({ status: 'pending', consent_version: siteContent.consent.version, confirmed_at: null, confirmed_ip: null });
      expect(Date.parse(pending.confirmation_sent_at!)).toBeGreaterThan(Date.now() - 60_000);
      const [queued, ...more] = await outbox(t);
      expect(more).toEqual([]);
      expect(queued).toMatchObject({
        kind: 'confirmation',
        template: 'confirmation',
        data: { entryId: pending.id },
        to_address: 'ada@example.com',
        subject: `Confirm your email for the ${siteContent.productName} waitlist`,
      });

      await drain(t);
      expect(smtp.messages).toHaveLength(1);
      const mail = smtp.messages[0]!;
      expect(mail.to).toEqual(['ada@example.com']);
      expect(mail.header('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
      listUnsubscribeOf(mail);
      const confirmToken = confirmLinkIn(mail);

      // A GET (a mail scanner prefetching the link) never confirms.
      const page = await t.app.inject({ method: 'GET', url: `/confirm?token=${confirmToken}` });
      expect(page.statusCode).toBeLessThan(500);
      expect((await entry(t, 'ada@example.com'))!.status).toBe('pending');

      const confirmed = await postJson(t, CONFIRM_API_PATH, { token: confirmToken }, '203.0.113.5');
      expect(confirmed.statusCode).toBe(200);
      expect(confirmed.json()).toEqual({ outcome: 'confirmed' });
      const after = (await entry(t, 'ada@example.com'))!;
      expect(after).toMatchObject({ status: 'confirmed', confirmed_ip: '203.0.113.5' });
      expect(Date.parse(after.confirmed_at!)).toBeGreaterThan(Date.now() - 60_000);

      // The link used again: the same answer, nothing changed.
      const reused = await postJson(t, CONFIRM_API_PATH, { token: confirmToken }, '192.0.2.99');
      expect(reused.statusCode).toBe(200);
      expect(reused.json()).toEqual({ outcome: 'already_confirmed' });
      expect(await entry(t, 'ada@example.com')).toEqual(after);

      // A confirmed address signing up again: the spec's answer.
      const again = await signUp(t, 'ada@example.com');
      expect(again.statusCode).toBe(409);
      expect(again.json().error.code).toBe('already_registered');
      expect(await outbox(t)).toHaveLength(1);
    });

    it('answers the no-JavaScript form with 303 to /thanks', async () => {
      const { t } = await mailApp(dialect);
      const res = await postForm(t, SIGNUP_PATH, 'email=grace%40example.com');
      expect(res.statusCode).toBe(303);
      expect(res.headers.location).toBe('/thanks');
      expect((await entry(t, 'grace@example.com'))!.status).toBe('pending');
      expect(await outbox(t, 'grace@example.com')).toHaveLength(1);
    });

    it('stores nothing when the confirmation cannot be queued (one transaction)', async () => {
      const { t } = await mailApp(dialect);
      await sql`DROP TABLE mail_outbox`.execute(t.app.database.db);
      const res = await signUp(t, 'lost@example.com');
      expect(res.statusCode).toBe(500);
      expect(await entry(t, 'lost@example.com')).toBeUndefined();
    });

    it('sends a pending address the confirmation again at most once per resend interval, answering like a new signup', async () => {
      const { t } = await mailApp(dialect, { CONFIRMATION_RESEND_SECONDS: '300' });
      expect((await signUp(t, 'again@example.com')).json()).toEqual({ status: 'pending' });
      const first = (await entry(t, 'again@example.com'))!;

      const soon = await signUp(t, 'again@example.com');
      expect(soon.statusCode).toBe(201);
      expect(soon.json()).toEqual({ status: 'pending' });
      expect(await outbox(t, 'again@example.com')).toHaveLength(1);
      expect(await entry(t, 'again@example.com')).toEqual(first);

      // Ten minutes later (the stored send time moved back instead of waiting).
      const tenMinutesAgo = new Date(Date.now() - 600_000).toISOString();
      await t.app.database.db.updateTable('waitlist').set({ confirmation_sent_at: tenMinutesAgo }).where('id', '=', first.id).execute();
      const later = await signUp(t, 'again@example.com');
      expect(later.statusCode).toBe(201);
      expect(later.json()).toEqual({ status: 'pending' });
      const rows = await outbox(t, 'again@example.com');
      expect(rows).toHaveLength(2);
      expect(rows[1]).toMatchObject({ template: 'confirmation', data: { entryId: first.id } });
      const resent = (await entry(t, 'again@example.com'))!;
      expect(Date.parse(resent.confirmation_sent_at!)).toBeGreaterThan(Date.parse(tenMinutesAgo));
      expect(resent.id).toBe(first.id);
    });

    it('keeps an unsubscribed address unsubscribed when it signs up again, answering like a new signup (issue 28; restore-hold.test.ts)', async () => {
      const { t } = await mailApp(dialect);
      await signUp(t, 'back@example.com');
      const { id } = (await entry(t, 'back@example.com'))!;
      expect((await postJson(t, UNSUBSCRIBE_API_PATH, { token: token(t, id, 'manage') })).json()).toEqual({ outcome: 'unsubscribed' });
      const unsubscribed = (await entry(t, 'back@example.com'))!;
      expect(unsubscribed.status).toBe('unsubscribed');

      const res = await signUp(t, 'back@example.com');
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({ status: 'pending' });
      expect(await entry(t, 'back@example.com')).toEqual(unsubscribed);
      // No confirmation: a "confirm it's you" e-mail, whose link alone brings the address back.
      expect((await outbox(t, 'back@example.com')).map((r) => r.template)).toEqual(['confirmation', 'restore']);
    });

    it('queues the welcome e-mail when the entry is confirmed (MAIL_WELCOME=on), and delivers it', async () => {
      const { t, smtp } = await mailApp(dialect, { MAIL_WELCOME: 'on' });
      await signUp(t, 'welcome@example.com');
      const { id } = (await entry(t, 'welcome@example.com'))!;
      expect((await outbox(t)).map((r) => r.template)).toEqual(['confirmation']);
      await drain(t);
      expect((await postJson(t, CONFIRM_API_PATH, { token: confirmLinkIn(smtp.messages[0]!) })).json()).toEqual({ outcome: 'confirmed' });
      expect((await outbox(t)).map((r) => r.template)).toEqual(['confirmation', 'welcome']);
      await drain(t);
      expect(smtp.messages.map((m) => m.header('subject'))).toEqual([
        `Confirm your email for the ${siteContent.productName} waitlist`,
        `You're on the ${siteContent.productName} waitlist`,
      ]);
      expect(smtp.messages[1]!.to).toEqual(['welcome@example.com']);
      expect(smtp.messages[1]!.header('list-unsubscribe')).toMatch(/^<https:\/\/waitlist\.example\.com\/unsubscribe\?token=/);

      // Confirming again queues no second welcome.
      await postJson(t, CONFIRM_API_PATH, { token: token(t, id, 'confirm') });
      expect(await outbox(t)).toHaveLength(2);
    });
  });

  describe('signup without double opt-in (the default)', () => {
    it('joins with the consent version stored and no e-mail; an unsubscribed address joins again', async () => {
      const t = await app(dialect);
      const res = await signUp(t, 'plain@example.com');
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({ status: 'joined' });
      const joined = (await entry(t, 'plain@example.com'))!;
      expect(joined).toMatchObject({ status: 'joined', consent_version: siteContent.consent.version, confirmation_sent_at: null });
      expect(await outbox(t)).toEqual([]);

      // Unsubscribed by the person: signing up again answers as a new signup but changes nothing (issue 28);
      // without e-mail there is no link to bring it back (restore-hold.test.ts checks the log line).
      await postJson(t, UNSUBSCRIBE_API_PATH, { token: token(t, joined.id, 'manage') });
      const unsubscribed = (await entry(t, 'plain@example.com'))!;
      const back = await signUp(t, 'plain@example.com');
      expect(back.statusCode).toBe(201);
      expect(back.json()).toEqual({ status: 'joined' });
      expect(await entry(t, 'plain@example.com')).toEqual(unsubscribed);
      expect(await outbox(t)).toEqual([]);
    });

    it('queues the welcome e-mail with the entry when MAIL_WELCOME=on', async () => {
      const { t, smtp } = await mailApp(dialect, { SIGNUP_CONFIRMATION: 'off', MAIL_WELCOME: 'on' });
      expect((await signUp(t, 'hello@example.com')).json()).toEqual({ status: 'joined' });
      const { id } = (await entry(t, 'hello@example.com'))!;
      expect(await outbox(t)).toMatchObject([{ template: 'welcome', data: { entryId: id } }]);
      await drain(t);
      expect(smtp.messages).toHaveLength(1);
      expect(smtp.messages[0]!.to).toEqual(['hello@example.com']);
    });

    it('requires the consent checkbox when content.ts has one, and stores its version', async () => {
      const t = await app(dialect, {}, { consent: { version: 'terms-v2', checkbox: 'I agree to receive e-mail about the launch.' } });
      for (const extra of [{}, { consent: false }, { consent: 'off' }, { consent: ['on'] }]) {
        const res = await signUp(t, 'box@example.com', extra);
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({ error: { code: 'consent_required', message: SIGNUP_ERRORS.consent_required.message } });
      }
      const form = await postForm(t, SIGNUP_PATH, 'email=box%40example.com');
      expect(form.statusCode).toBe(400);
      expect(form.headers['content-type']).toMatch(/^text\/html/);
      expect(form.body).toContain(SIGNUP_ERRORS.consent_required.title);
      expect(await entry(t, 'box@example.com')).toBeUndefined();

      expect((await postForm(t, SIGNUP_PATH, 'email=box%40example.com&consent=on')).statusCode).toBe(303);
      expect((await signUp(t, 'json@example.com', { consent: true })).statusCode).toBe(201);
      expect(await entry(t, 'box@example.com')).toMatchObject({ consent_version: 'terms-v2' });
      expect(await entry(t, 'json@example.com')).toMatchObject({ consent_version: 'terms-v2' });
    });

    it('asks for no checkbox by default (the spec)', async () => {
      const t = await app(dialect);
      expect((await signUp(t, 'nobox@example.com')).statusCode).toBe(201);
    });
  });

  describe('links', () => {
    it('refuses forged, altered, other-purpose and expired tokens (400/410) and changes nothing', async () => {
      const { t } = await mailApp(dialect);
      await signUp(t, 'guard@example.com');
      const before = (await entry(t, 'guard@example.com'))!;
      const good = token(t, before.id, 'confirm');
      const [body, mac] = good.split('.') as [string, string];
      const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
      const invalid: unknown[] = [
        'nonsense',
        `${body}.${'0'.repeat(mac.length)}`,
        `${flip(body, 10)}.${mac}`,
        // The MAC's first hex digit changed (always to another digit).
        `${body}.${mac[0] === 'a' ? 'b' : 'a'}${mac.slice(1)}`,
        `${good}.x`,
        token(t, before.id, 'manage'),
        // Well formed, signed with another server's key.
        createLinkToken(createSecretBox(randomBytes(32)), { entryId: before.id, purpose: 'confirm', expiresAt: 4_000_000_000 }),
        '',
        'x'.repeat(600),
        42,
        null,
        ['a'],
      ];
      for (const bad of invalid) expectLinkError(await postJson(t, CONFIRM_API_PATH, { token: bad }), 'link_invalid');
      expectLinkError(await postJson(t, CONFIRM_API_PATH, {}), 'link_invalid');
      expectLinkError(await postJson(t, CONFIRM_API_PATH, [good]), 'link_invalid');
      expectLinkError(await postJson(t, CONFIRM_API_PATH, { token: token(t, before.id, 'confirm', Math.floor(Date.now() / 1000) - 1) }), 'link_expired');
      // Security review, finding 6: each link's expiry says which link it was (manage: 90 days; erase: an hour).
      const purposes = [
        [UNSUBSCRIBE_API_PATH, 'manage', 'manage_link_expired'],
        [ERASE_LINK_API_PATH, 'manage', 'manage_link_expired'],
        [PREFERENCES_API_PATH, 'manage', 'manage_link_expired'],
        [ERASE_API_PATH, 'erase', 'erase_link_expired'],
      ] as const;
      for (const [url, purpose, expiredCode] of purposes) {
        expectLinkError(await postJson(t, url, { token: good }), 'link_invalid');
        expectLinkError(await postJson(t, url, { token: token(t, before.id, purpose, Math.floor(Date.now() / 1000) - 60) }), expiredCode);
      }
      // The manage link (List-Unsubscribe) does not erase.
      expectLinkError(await postJson(t, ERASE_API_PATH, { token: token(t, before.id, 'manage') }), 'link_invalid');
      // The same-URL posts refuse them too, with a page.
      const expired = await postForm(t, `/confirm?token=${token(t, before.id, 'confirm', 1_000)}`, '');
      expect(expired.statusCode).toBe(410);
      expect(expired.body).toContain(LINK_ERRORS.link_expired.title);
      const forged = await postForm(t, `/unsubscribe?token=${body}.${'0'.repeat(mac.length)}`, 'List-Unsubscribe=One-Click');
      expect(forged.statusCode).toBe(400);
      expect(forged.headers['content-type']).toMatch(/^text\/plain/);

      expect(await entry(t, 'guard@example.com')).toEqual(before);
      expect(await outbox(t)).toHaveLength(1);
      expect(await t.app.database.db.selectFrom('waitlist_suppressions').selectAll().execute()).toEqual([]);
    });

    it('answers 404 for an entry that is gone and 409 when confirming an unsubscribed one', async () => {
      const { t } = await mailApp(dialect);
      const ghost = '00000000-0000-4000-8000-000000000000';
      expectLinkError(await postJson(t, CONFIRM_API_PATH, { token: token(t, ghost, 'confirm') }), 'entry_gone');
      for (const url of [UNSUBSCRIBE_API_PATH, ERASE_LINK_API_PATH, PREFERENCES_API_PATH]) {
        expectLinkError(await postJson(t, url, { token: token(t, ghost, 'manage') }), 'entry_gone');
      }
      expectLinkError(await postJson(t, ERASE_API_PATH, { token: token(t, ghost, 'erase') }), 'entry_gone');
      await signUp(t, 'quit@example.com');
      const { id } = (await entry(t, 'quit@example.com'))!;
      await postJson(t, UNSUBSCRIBE_API_PATH, { token: token(t, id, 'manage') });
      const quit = (await entry(t, 'quit@example.com'))!;
      expectLinkError(await postJson(t, CONFIRM_API_PATH, { token: token(t, id, 'confirm') }), 'unsubscribed');
      expect(await entry(t, 'quit@example.com')).toEqual(quit);
    });

    it('unsubscribes with one click through the List-Unsubscribe-Post request: queued mail cancelled, never mailed again', async () => {
      const { t, smtp } = await mailApp(dialect, { CONFIRMATION_RESEND_SECONDS: '0' });
      await signUp(t, 'oneclick@example.com');
      await drain(t);
      expect(smtp.messages).toHaveLength(1);
      const oneClick = listUnsubscribeOf(smtp.messages[0]!);
      expect(oneClick.body).toBe('List-Unsubscribe=One-Click');

      // A second confirmation waits in the outbox (the worker is stopped) when the person unsubscribes.
      await t.app.mail.worker!.stop();
      await signUp(t, 'oneclick@example.com');
      const before = await outbox(t, 'oneclick@example.com');
      expect(before.map((r) => r.status)).toEqual(['sent', 'queued']);

      // What the mail provider sends: a POST of the List-Unsubscribe-Post body to the List-Unsubscribe URL.
      const res = await postForm(t, oneClick.url, oneClick.body, '209.85.220.41');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.body.length).toBeLessThan(200);
      const after = (await entry(t, 'oneclick@example.com'))!;
      expect(after.status).toBe('unsubscribed');
      expect(Date.parse(after.unsubscribed_at!)).toBeGreaterThan(Date.now() - 60_000);
      const rows = await outbox(t, 'oneclick@example.com');
      expect(rows.map((r) => [r.status, r.last_error])).toEqual([
        ['sent', null],
        ['failed', UNSUBSCRIBED_MAIL_ERROR],
      ]);

      // Again, as multipart/form-data (RFC 8058's preferred encoding): idempotent.
      const multipart = await t.app.inject({
        method: 'POST',
        url: oneClick.url,
        payload: '--b0undary\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--b0undary--\r\n',
        headers: { 'content-type': 'multipart/form-data; boundary=b0undary' },
      });
      expect(multipart.statusCode).toBe(200);
      expect(await entry(t, 'oneclick@example.com')).toEqual(after);
      expect((await postJson(t, UNSUBSCRIBE_API_PATH, { token: oneClick.token })).json()).toEqual({ outcome: 'already_unsubscribed' });
      // The address masked (security review, finding 6): the link is in headers others see.
      expect((await postJson(t, PREFERENCES_API_PATH, { token: oneClick.token })).json()).toEqual({ email: 'o•••@example.com', status: 'unsubscribed', link: 'manage' });
      expect(smtp.messages).toHaveLength(1);
    });

    it('erases the entry and its outbox rows, keeps a keyed hash and an audit entry without the address; an import skips it; signing up again keeps it erased', async () => {
      const { t, smtp } = await mailApp(dialect, { CONFIRMATION_RESEND_SECONDS: '0' });
      const email = 'erase.me@example.com';
      await signUp(t, email);
      await signUp(t, 'stays@example.com');
      await drain(t);
      await t.app.mail.worker!.stop();
      await signUp(t, email);
      expect((await outbox(t, email)).map((r) => r.status)).toEqual(['sent', 'queued']);
      const { id } = (await entry(t, email))!;
      const manage = listUnsubscribeOf(smtp.messages.find((m) => m.to[0] === email)!).token;
      // Security review, finding 6: the manage link does not erase; the erasure link (e-mailed on request) does.
      expectLinkError(await postJson(t, ERASE_API_PATH, { token: manage }), 'link_invalid');
      const erase = token(t, id, 'erase');

      const res = await postJson(t, ERASE_API_PATH, { token: erase });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ outcome: 'erased' });
      expect(await entry(t, email)).toBeUndefined();
      expect(await outbox(t, email)).toEqual([]);
      expect(await outbox(t, 'stays@example.com')).toHaveLength(1);
      const suppressions = await t.app.database.db.selectFrom('waitlist_suppressions').selectAll().execute();
      expect(suppressions).toMatchObject([{ email_hash: suppressionHash(t.app.secretBox, email), reason: 'erased' }]);
      expect(await isSuppressed(t.app.database.db, t.app.secretBox, ' Erase.Me@Example.com ')).toBe(true);
      expect(await isSuppressed(t.app.database.db, t.app.secretBox, 'stays@example.com')).toBe(false);
      const audit = (await listAudit(t.app.database.db, 10)).filter((a) => a.action === 'waitlist.erased_by_subject');
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ actorEmail: null, ip: null });
      expect(JSON.stringify(audit[0])).not.toMatch(/erase\.me|example\.com/i);
      expect(JSON.stringify(audit[0])).not.toContain(id);

      // The link again: nothing left to change.
      expectLinkError(await postJson(t, ERASE_API_PATH, { token: erase }), 'entry_gone');

      // An import of an old export does not bring the address back, and says so.
      const file = path.join(t.dataDir, 'old-export.csv');
      fs.writeFileSync(file, `Email,Date Joined,IP Address,Location\n${email.toUpperCase()},2026-11-20T10:00:00Z,N/A,Unknown\nnew@example.com,2026-11-20T11:00:00Z,N/A,Unknown\n`);
      const imported = await runCliInProcess(runDbCli, ['import', file], {
        env: { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent', AUTH_SECRET_KEY_FILE: path.join(t.dataDir, 'auth-secret.key') },
        cwd: t.dataDir,
      });
      expect(imported.code).toBe(0);
      expect(imported.stderr).toBe(
        "Imported 1, skipped 0 duplicates, 0 bad lines\n1 address skipped: erased at the person's request (on the suppression list)\n",
      );
      expect(await entry(t, email)).toBeUndefined();
      expect(await entry(t, 'new@example.com')).toBeDefined();

      // Without the server's secret key the import cannot tell, so it refuses rather than guess.
      const keyless = await runCliInProcess(runDbCli, ['import', file], {
        env: { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent', AUTH_SECRET_KEY_FILE: path.join(t.dataDir, 'missing', 'key') },
        cwd: t.dataDir,
      });
      expect(keyless.code).toBe(1);
      expect(keyless.stderr).toMatch(/1 erased address .*secret key/);
      expect(await entry(t, email)).toBeUndefined();
      expect(fs.existsSync(path.join(t.dataDir, 'missing'))).toBe(false);

      // Signing up again answers as a new signup, but the address stays erased (issue 28): only the
      // "confirm it's you" link e-mailed to it now brings it back (restore-hold.test.ts follows it).
      const back = await signUp(t, email);
      expect(back.statusCode).toBe(201);
      expect(back.json()).toEqual({ status: 'pending' });
      expect(await entry(t, email)).toBeUndefined();
      expect(await isSuppressed(t.app.database.db, t.app.secretBox, email)).toBe(true);
      expect((await outbox(t, email)).map((r) => r.template)).toEqual(['restore']);
    });

    it('answers the pages\' no-JavaScript form posts with HTML pages', async () => {
      const { t } = await mailApp(dialect);
      for (const email of ['form1@example.com', 'form2@example.com', 'form3@example.com']) await signUp(t, email);
      const id = async (email: string) => (await entry(t, email))!.id;
      const page = (res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, text: { title: string; message: string }) => {
        expect(res.statusCode).toBe(status);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.body).toContain(text.title);
        expect(res.body).toContain(text.message.replaceAll("'", '&#39;'));
      };

      // Confirm: the token in the query (the link) with an empty form, or in the form itself.
      page(await postForm(t, `/confirm?token=${token(t, await id('form1@example.com'), 'confirm')}`, ''), 200, siteContent.confirmPage.confirmed);
      page(await postForm(t, '/confirm', `token=${token(t, await id('form1@example.com'), 'confirm')}`), 200, siteContent.confirmPage.alreadyConfirmed);
      page(await postForm(t, `/confirm?token=${token(t, await id('form2@example.com'), 'manage')}`, ''), 400, LINK_ERRORS.link_invalid);
      expect((await entry(t, 'form2@example.com'))!.status).toBe('pending');

      // Preferences: unsubscribe, then erase (security review, finding 6: the preferences form e-mails
      // the erasure link; the erasure page's form erases).
      const manage2 = token(t, await id('form2@example.com'), 'manage');
      page(await postForm(t, `/unsubscribe?token=${manage2}`, 'action=unsubscribe'), 200, siteContent.preferencesPage.unsubscribe.done);
      page(await postForm(t, `/unsubscribe?token=${manage2}`, 'action=unsubscribe'), 200, siteContent.preferencesPage.unsubscribe.already);
      const { sent } = siteContent.preferencesPage.eraseLink;
      page(await postForm(t, '/unsubscribe', `action=erase&token=${token(t, await id('form3@example.com'), 'manage')}`), 200, { ...sent, message: sent.message.replace('{email}', 'f•••@example.com') });
      expect(await entry(t, 'form3@example.com')).toBeDefined();
      page(await postForm(t, `/erase?token=${token(t, await id('form3@example.com'), 'erase')}`, 'action=erase'), 200, siteContent.preferencesPage.erase.done);
      expect(await entry(t, 'form3@example.com')).toBeUndefined();
      page(await postForm(t, `/unsubscribe?token=${manage2}`, 'action=explode'), 400, LINK_ERRORS.link_invalid);
      page(await postForm(t, `/unsubscribe?token=${manage2}`, ''), 400, LINK_ERRORS.link_invalid);
      page(await postForm(t, '/unsubscribe', 'action=erase'), 400, LINK_ERRORS.link_invalid);
      expect((await entry(t, 'form2@example.com'))!.status).toBe('unsubscribed');
    });

    it('limits the link routes per client address, apart from signups; a one-click post with a good token always passes', async () => {
      const { t } = await mailApp(dialect, { SIGNUP_RATE_LIMIT_MAX: '3' });
      await signUp(t, 'limit@example.com', {}, '192.0.2.200');
      const { id } = (await entry(t, 'limit@example.com'))!;
      for (let i = 0; i < 3; i++) expectLinkError(await postJson(t, CONFIRM_API_PATH, { token: 'nonsense' }, '192.0.2.1'), 'link_invalid');
      const limited = await postJson(t, CONFIRM_API_PATH, { token: token(t, id, 'confirm') }, '192.0.2.1');
      expectLinkError(limited, 'rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      const limitedPage = await postForm(t, `/confirm?token=${token(t, id, 'confirm')}`, '', '192.0.2.1');
      expect(limitedPage.statusCode).toBe(429);
      expect(limitedPage.body).toContain(LINK_ERRORS.rate_limited.title);
      expect((await entry(t, 'limit@example.com'))!.status).toBe('pending');

      // Another address, and the signup limit, are untouched.
      expect((await postJson(t, CONFIRM_API_PATH, { token: 'nonsense' }, '192.0.2.2')).statusCode).toBe(400);
      expect((await signUp(t, 'other@example.com', {}, '192.0.2.1')).statusCode).toBe(201);

      // A mail provider posting one-clicks for many people from one address.
      const manage = token(t, id, 'manage');
      for (let i = 0; i < 5; i++) expect((await postForm(t, `/unsubscribe?token=${manage}`, 'List-Unsubscribe=One-Click', '192.0.2.1')).statusCode).toBe(200);
      expect((await postForm(t, `/unsubscribe?token=${manage}`, 'action=unsubscribe', '192.0.2.1')).statusCode).toBe(429);
    });

    it('keeps link tokens out of the request logs', async () => {
      const lines: string[] = [];
      const stream = new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString('utf8'));
          done();
        },
      });
      const { t } = await mailApp(dialect, {}, { logger: { level: 'trace', stream } });
      await signUp(t, 'quiet@example.com');
      const { id } = (await entry(t, 'quiet@example.com'))!;
      const confirm = token(t, id, 'confirm');
      const manage = token(t, id, 'manage');
      await t.app.inject({ method: 'GET', url: `/confirm?token=${confirm}` });
      await t.app.inject({ method: 'GET', url: `/unsubscribe?token=${manage}` });
      await t.app.inject({ method: 'GET', url: `/unsubscribe?x=1&token=${manage}&y=2` });
      await postForm(t, `/confirm?token=${confirm}`, '');
      await postJson(t, PREFERENCES_API_PATH, { token: manage });
      await postForm(t, `/unsubscribe?token=${manage}`, 'List-Unsubscribe=One-Click');
      await postForm(t, `/unsubscribe?token=${manage}x`, 'action=erase');
      await postForm(t, `/unsubscribe?token=${manage}`, 'action=erase');

      const log = lines.join('');
      expect(log).toContain('/confirm?token=[redacted]');
      expect(log).toContain('/unsubscribe?x=1&token=[redacted]&y=2');
      for (const secret of [confirm, manage, confirm.split('.')[1]!, manage.split('.')[1]!]) expect(log).not.toContain(secret);
      expect(log).not.toContain('quiet@example.com');
    });
  });
});
