import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { listAudit } from '../../../src/server/audit/audit-log.js';
import { createLinkToken } from '../../../src/server/consent/links.js';
import { createRestoreToken } from '../../../src/server/consent/restore.js';
import { isSuppressed } from '../../../src/server/consent/suppression.js';
import { findWaitlistEntryByEmail } from '../../../src/server/db/waitlist-entries.js';
import { findVersion } from '../../../src/server/records/versions.js';
import { emailContent, siteContent } from '../../../src/shared/site/content.js';
import { CONFIRM_API_PATH, ERASE_API_PATH, LINK_ERRORS, UNSUBSCRIBE_API_PATH } from '../../../src/shared/waitlist/consent-contract.js';
import { SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { ADMIN_DELETE_PATH } from '../../../src/shared/admin/waitlist-api.js';
import { cleanupsAfterEach, createAdminTestApp, createMailTestApp, drainOutbox, mailEnv, startTestSmtp, TEST_PUBLIC_URL } from '../../support/admin-app.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { mailParts } from '../../support/mime.js';
import type { ReceivedMail } from '../../support/smtp.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Issue 28, point 1: an address its owner erased or unsubscribed through the e-mail links comes back
 * only through a link e-mailed to it at that moment, whatever SIGNUP_CONFIRMATION says; the form
 * answers exactly as for a new signup. A real SMTP server receives the "confirm it's you" e-mail.
 */

const cleanups = cleanupsAfterEach();
const IP = '198.51.100.7';
/** The first send of an app loads the e-mail templates: slow on a busy machine. */
const SEND_TIMEOUT = { timeout: 20_000 };

function signUp(t: TestApp, email: string, form = false) {
  return t.app.inject({
    method: 'POST',
    url: SIGNUP_PATH,
    remoteAddress: IP,
    ...(form
      ? { payload: `email=${encodeURIComponent(email)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } }
      : { payload: { email } }),
  });
}

function postJson(t: TestApp, url: string, payload: unknown) {
  return t.app.inject({ method: 'POST', url, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' }, remoteAddress: IP });
}

/** What a visitor can see of an answer: status, body and the headers that are not per request. */
function visible(res: { statusCode: number; body: string; headers: Record<string, unknown> }) {
  const { date: _d, 'x-request-id': _r, 'x-ratelimit-remaining': _x, 'x-ratelimit-reset': _y, ...headers } = res.headers;
  return { status: res.statusCode, body: res.body, headers };
}

const entry = (t: TestApp, email: string) => findWaitlistEntryByEmail(t.app.database.db, email);
const outbox = (t: TestApp, to: string) => t.app.database.db.selectFrom('mail_outbox').selectAll().where('to_address', '=', to).orderBy('created_at').execute();

/** Erases `email`'s entry with its erasure link (as the person does, from the e-mail they asked for). */
async function erase(t: TestApp, email: string): Promise<void> {
  const { id } = (await entry(t, email))!;
  const token = createLinkToken(t.app.secretBox, { entryId: id, purpose: 'erase', expiresAt: Math.floor(Date.now() / 1000) + 3600 });
  expect((await postJson(t, ERASE_API_PATH, { token })).json()).toEqual({ outcome: 'erased' });
}

async function unsubscribe(t: TestApp, email: string): Promise<void> {
  const { id } = (await entry(t, email))!;
  const token = createLinkToken(t.app.secretBox, { entryId: id, purpose: 'manage', expiresAt: Math.floor(Date.now() / 1000) + 3600 });
  expect((await postJson(t, UNSUBSCRIBE_API_PATH, { token })).json()).toEqual({ outcome: 'unsubscribed' });
}

function restoreTokenIn(mail: ReceivedMail): string {
  const text = mailParts(mail).text ?? '';
  const match = new RegExp(`${TEST_PUBLIC_URL}/confirm\\?token=([^\\s>]+)`).exec(text);
  if (!match) throw new Error(`no restore link in:\n${text}`);
  return decodeURIComponent(match[1]!);
}

describe.each(TEST_DIALECTS)('erasure and unsubscribe hold (%s)', (dialect: TestDialect) => {
  it('an erased address signing up again is answered as a new signup, stays erased, and comes back only through the e-mailed link', async () => {
    const smtp = await startTestSmtp(cleanups);
    // SIGNUP_CONFIRMATION=off (the default): a new address joins at once, an erased one does not.
    const t = await createMailTestApp(cleanups, dialect, smtp.url);
    await signUp(t, 'gone@example.com');
    await erase(t, 'gone@example.com');

    const fresh = await signUp(t, 'new@example.com');
    const held = await signUp(t, 'Gone@Example.com');
    expect(visible(held)).toEqual(visible(fresh));
    expect(held.json()).toEqual({ status: 'joined' });
    const freshForm = await signUp(t, 'new-form@example.com', true);
    const heldForm = await signUp(t, 'gone@example.com', true);
    expect(visible(heldForm)).toEqual(visible(freshForm));
    expect(heldForm.statusCode).toBe(303);

    expect(await entry(t, 'gone@example.com')).toBeUndefined();
    expect(await isSuppressed(t.app.database.db, t.app.secretBox, 'gone@example.com')).toBe(true);
    // One "confirm it's you" e-mail for the two signups (the resend interval), and nothing else.
    expect((await outbox(t, 'gone@example.com')).map((r) => r.kind)).toEqual(['restore']);
    await drainOutbox(t);
    await vi.waitFor(() => expect(smtp.messages).toHaveLength(1), SEND_TIMEOUT);
    const mail = smtp.messages[0]!;
    expect(mail.to).toEqual(['gone@example.com']);
    expect(mail.header('subject')).toBe(`Confirm it's you: back on the ${siteContent.productName} waitlist?`);
    expect(mail.header('list-unsubscribe')).toBeUndefined();
    const { text, html } = mailParts(mail);
    for (const part of [text!, html!]) {
      expect(part).toContain(siteContent.productName);
      expect(part).toContain(emailContent.postalAddress);
      expect(part).toContain(emailContent.restore.notice);
    }
    expect(text).toContain(`You receive this e-mail because this address was entered in the ${siteContent.productName} waitlist form.`);
    // Sent, its outbox row keeps the erased address only masked.
    await vi.waitFor(async () => {
      const settled = await t.app.database.db.selectFrom('mail_outbox').select(['to_address', 'status']).where('kind', '=', 'restore').execute();
      expect(settled).toEqual([{ to_address: 'g•••@example.com', status: 'sent' }]);
    }, SEND_TIMEOUT);
    // The records keep what was sent (issue 30): the send, on no entry, and the template's version
    // as received, the restore token's place held.
    const sends = await t.app.database.db.selectFrom('records_mail_sends').select(['template', 'entry_id', 'version_id']).where('message_id', '=', mail.header('message-id')!).execute();
    expect(sends).toMatchObject([{ template: 'restore', entry_id: null }]);
    const version = (await findVersion(t.app.database.db, sends[0]!.version_id))!;
    const placeholder = (part: string) => part.replace(/token=[A-Za-z0-9._~%-]+/g, 'token={recipient-token}');
    expect(version).toMatchObject({ kind: 'email', name: 'restore' });
    expect(version.parts['subject.txt']).toBe(`${mail.header('subject')}\n`);
    expect(version.parts['body.txt']).toBe(placeholder(text!));
    expect(version.parts['body.html']).toBe(placeholder(html!));

    // The link restores it: a new, confirmed entry with a new consent record; audited without the address.
    const token = restoreTokenIn(mail);
    const restored = await postJson(t, CONFIRM_API_PATH, { token });
    expect(restored.json()).toEqual({ outcome: 'confirmed' });
    const back = (await entry(t, 'gone@example.com'))!;
    expect(back).toMatchObject({ status: 'confirmed', consent_version: siteContent.consent.version, confirmed_ip: IP, ip_address: IP, unsubscribed_at: null });
    expect(back.confirmed_at).not.toBeNull();
    expect(await isSuppressed(t.app.database.db, t.app.secretBox, 'gone@example.com')).toBe(false);
    const audit = (await listAudit(t.app.database.db, 20)).filter((a) => a.action === 'waitlist.restored_by_subject');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actorEmail: null, ip: null, detail: { was: 'erased' } });
    expect(JSON.stringify(audit[0])).not.toMatch(/gone|example\.com/i);
    // Once back, the link changes nothing more.
    expect((await postJson(t, CONFIRM_API_PATH, { token })).json()).toEqual({ outcome: 'already_confirmed' });
  });

  it('an unsubscribed address stays unsubscribed under double opt-in; the no-JavaScript form of the link restores it', async () => {
    const smtp = await startTestSmtp(cleanups);
    const t = await createMailTestApp(cleanups, dialect, smtp.url, {}, { SIGNUP_CONFIRMATION: 'required' });
    await signUp(t, 'left@example.com');
    await unsubscribe(t, 'left@example.com');
    const before = (await entry(t, 'left@example.com'))!;

    const fresh = await signUp(t, 'other@example.com');
    const held = await signUp(t, 'left@example.com');
    expect(visible(held)).toEqual(visible(fresh));
    expect(held.json()).toEqual({ status: 'pending' });
    expect(await entry(t, 'left@example.com')).toEqual(before);
    expect((await outbox(t, 'left@example.com')).map((r) => r.kind)).toEqual(['confirmation', 'restore']);

    await drainOutbox(t);
    const mail = await vi.waitFor(() => {
      const found = smtp.messages.find((m) => m.to[0] === 'left@example.com' && m.header('subject')!.startsWith("Confirm it's you"));
      if (!found) throw new Error('not yet');
      return found;
    }, SEND_TIMEOUT);
    const page = await t.app.inject({
      method: 'POST',
      url: `/confirm?token=${encodeURIComponent(restoreTokenIn(mail))}`,
      payload: '',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      remoteAddress: '203.0.113.9',
    });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(siteContent.confirmPage.confirmed.title);
    expect(await entry(t, 'left@example.com')).toMatchObject({ id: before.id, status: 'confirmed', unsubscribed_at: null, confirmed_ip: '203.0.113.9' });
  });

  it('refuses altered and expired restore links (400, 410) and changes nothing', async () => {
    const smtp = await startTestSmtp(cleanups);
    const t = await createMailTestApp(cleanups, dialect, smtp.url);
    await signUp(t, 'kept@example.com');
    await erase(t, 'kept@example.com');
    const expired = createRestoreToken(t.app.secretBox, 'kept@example.com', Math.floor(Date.now() / 1000) - 1);
    const good = createRestoreToken(t.app.secretBox, 'kept@example.com', Math.floor(Date.now() / 1000) + 3600);
    const altered = `${good.slice(0, -3)}${good.at(-3) === 'A' ? 'B' : 'A'}${good.slice(-2)}`;
    const forged = createRestoreToken({ ...t.app.secretBox, seal: (text) => `sealed:v1:${Buffer.from(text).toString('base64url')}` }, 'kept@example.com', 2e9);
    const answer = (res: { statusCode: number; json(): unknown }, code: 'link_invalid' | 'link_expired') => {
      expect(res.statusCode).toBe(LINK_ERRORS[code].status);
      expect(res.json()).toEqual({ error: { code, message: LINK_ERRORS[code].message } });
    };
    answer(await postJson(t, CONFIRM_API_PATH, { token: expired }), 'link_expired');
    answer(await postJson(t, CONFIRM_API_PATH, { token: altered }), 'link_invalid');
    answer(await postJson(t, CONFIRM_API_PATH, { token: forged }), 'link_invalid');
    expect(await entry(t, 'kept@example.com')).toBeUndefined();
    expect(await isSuppressed(t.app.database.db, t.app.secretBox, 'kept@example.com')).toBe(true);
  });

  it("an admin's delete stays a plain delete: the address may sign up again at once", async () => {
    const smtp = await startTestSmtp(cleanups);
    const { t, token } = await createAdminTestApp(mailEnv(smtp.url), { dialect, mailWorker: { pollIntervalMs: 3_600_000 } });
    cleanups.push(() => t.close());
    await signUp(t, 'deleted@example.com');
    const { id } = (await entry(t, 'deleted@example.com'))!;
    const deleted = await t.app.inject({
      method: 'POST',
      url: ADMIN_DELETE_PATH,
      payload: { ids: [id] },
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    expect(deleted.statusCode).toBe(200);
    expect(await isSuppressed(t.app.database.db, t.app.secretBox, 'deleted@example.com')).toBe(false);
    expect((await signUp(t, 'deleted@example.com')).json()).toEqual({ status: 'joined' });
    expect(await entry(t, 'deleted@example.com')).toMatchObject({ status: 'joined' });
    expect(await outbox(t, 'deleted@example.com')).toEqual([]);
  });

  it('without SMTP an erased or unsubscribed address cannot come back, and the log says why without the address', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const t = await createTestApp({}, { dialect, logger: { level: 'info', stream } });
    cleanups.push(() => t.close());
    await signUp(t, 'erased@example.com');
    await erase(t, 'erased@example.com');
    await signUp(t, 'quit@example.com');
    await unsubscribe(t, 'quit@example.com');
    const quit = await entry(t, 'quit@example.com');

    expect(visible(await signUp(t, 'erased@example.com'))).toEqual(visible(await signUp(t, 'fresh@example.com')));
    expect((await signUp(t, 'quit@example.com')).json()).toEqual({ status: 'joined' });
    expect(await entry(t, 'erased@example.com')).toBeUndefined();
    expect(await entry(t, 'quit@example.com')).toEqual(quit);
    const log = lines.join('');
    expect(log).toContain('an address its owner erased signed up again; it comes back only through a link e-mailed to it, and e-mail is off (SMTP_URL is not set)');
    expect(log).toContain('an address its owner unsubscribed signed up again');
    expect(log).not.toMatch(/erased@|quit@/);
  });
});
