import { describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { run as runAdminCli } from '../../../src/server/cli/admin.js';
import { createList, updateList, type ListActor } from '../../../src/server/lists/manage.js';
import { waitlistEmailMessage } from '../../../src/server/consent/emails/index.js';
import { createLinkToken } from '../../../src/server/consent/links.js';
import { siteContent } from '../../../src/shared/site/content.js';
import { amountBands, LEAVE_ALL_WORDS, offeringContent, offeringPath, TESTING_THE_WATERS_STATEMENTS } from '../../../src/shared/lists/contract.js';
import { ADMIN_LISTS_PATH } from '../../../src/shared/admin/lists-api.js';
import { ADMIN_RECORD_VERSIONS_PATH } from '../../../src/shared/admin/records-api.js';
import { ADMIN_EXPORT_PATH, ADMIN_INSIGHTS_PATH, ADMIN_WAITLIST_PATH } from '../../../src/shared/admin/waitlist-api.js';
import { PREFERENCES_ACTION_FIELD, PREFERENCES_API_PATH, PREFERENCES_PAGE_PATH, UNSUBSCRIBE_ALL_API_PATH, UNSUBSCRIBE_API_PATH } from '../../../src/shared/waitlist/consent-contract.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { cleanupsAfterEach, createMailTestApp, drainOutbox, startTestSmtp, TEST_ADMIN } from '../../support/admin-app.js';
import { mailParts } from '../../support/mime.js';
import { signIn } from '../../support/sign-in.js';
import type { TestApp } from '../../support/test-app.js';
import { runCliInProcess } from '../../support/server-process.js';

/**
 * Interest lists per offering (issue 31): lists and their states, the page and its statements,
 * per-list signups, amounts and unsubscribe, the statements in every e-mail of an offering list, the
 * admin by list (page, insight, export), on both databases, through the real app and a real SMTP server.
 */

const cleanups = cleanupsAfterEach();
const ACTOR: ListActor = { email: null, id: null, ip: null, by: 'cli' };
const BANDS = [1000, 5000, 25000];

async function setUp(dialect: TestDialect, env: Record<string, string> = {}): Promise<{ t: TestApp; mails: Awaited<ReturnType<typeof startTestSmtp>>; token: string }> {
  const mails = await startTestSmtp(cleanups);
  const t = await createMailTestApp(cleanups, dialect, mails.url, {}, env);
  await createAdmin(t.app.database.db, TEST_ADMIN.email, TEST_ADMIN.password);
  const token = (await signIn(t.app, TEST_ADMIN)).access_token;
  return { t, mails, token };
}

async function openList(t: TestApp, slug = 'acme-robotics', bands: number[] | null = BANDS) {
  await createList(t.app.database.db, ACTOR, { slug, name: 'Acme Robotics, Inc.', description: 'Warehouse robots.', kind: 'testing-the-waters', bands });
  return updateList(t.app.database.db, ACTOR, slug, { state: 'open' });
}

const signUp = (t: TestApp, fields: Record<string, string>) =>
  t.app.inject({ method: 'POST', url: '/api/waitlist', headers: { 'content-type': 'application/json' }, payload: fields });
const formSignUp = (t: TestApp, fields: Record<string, string>) =>
  t.app.inject({ method: 'POST', url: '/api/waitlist', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString() });
const admin = (t: TestApp, token: string, url: string, method: 'GET' | 'POST' = 'GET', payload?: object) =>
  t.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });

function entriesOf(t: TestApp, email: string) {
  return t.app.database.db.selectFrom('waitlist').select(['id', 'list_id', 'status', 'intended_amount']).where('email', '=', email).orderBy('list_id').execute();
}

describe.each(TEST_DIALECTS)('offering lists (%s)', (dialect: TestDialect) => {
  it('a draft has no page and takes no signup; open shows the statements beside the form; closed says so and takes none', async () => {
    const { t } = await setUp(dialect);
    const db = t.app.database.db;
    await createList(db, ACTOR, { slug: 'acme', name: 'Acme <Robotics>', description: 'Robots & more.', kind: 'testing-the-waters', bands: BANDS });
    expect((await t.app.inject({ url: offeringPath('acme') })).statusCode).toBe(404);
    const draft = await signUp(t, { email: 'a@example.com', list: 'acme' });
    expect(draft.statusCode).toBe(400);
    expect(draft.json().error.code).toBe('unknown_list');

    await updateList(db, ACTOR, 'acme', { state: 'open' });
    const page = await t.app.inject({ url: offeringPath('acme') });
    expect(page.statusCode).toBe(200);
    const html = page.body;
    expect(html).toContain('Acme &lt;Robotics&gt;');
    expect(html).toContain('Robots &amp; more.');
    // Each statement, beside the form (the form and the statements share one grid), escaped as HTML,
    // and before it in the page: read before the button, on a phone and by a screen reader.
    const escape = (s: string) => s.replace(/'/g, '&#39;');
    for (const statement of TESTING_THE_WATERS_STATEMENTS) expect(html).toContain(escape(statement));
    expect(html.indexOf('offering-statements-heading')).toBeLessThan(html.indexOf('<form'));
    expect(html).not.toMatch(/<script/i);
    // The amount: the bands, labelled non-binding, with the note and the link to the educational materials.
    for (const band of amountBands(BANDS)) expect(html).toContain(`value="${band.key}"`);
    expect(html).toContain(offeringContent.amount.legend);
    expect(html).toContain('227.100(a)(2)');
    expect(html).toContain(`href="${siteContent.legalUrl}"`);
    // Nothing else is asked: the form's fields are the address, the list, the honeypot and the amount.
    const names = new Set([...html.matchAll(/<input[^>]*name="([^"]+)"/g)].map((m) => m[1]));
    expect([...names].sort()).toEqual(['company_website', 'email', 'intended_amount', 'list']);
    expect(html).not.toMatch(/income|net worth|referr|rank|position/i);

    await updateList(db, ACTOR, 'acme', { state: 'closed' });
    const closed = await t.app.inject({ url: offeringPath('acme') });
    expect(closed.statusCode).toBe(200);
    expect(closed.body).toContain(offeringContent.closed.title);
    expect(closed.body).not.toContain('<form');
    for (const statement of TESTING_THE_WATERS_STATEMENTS) expect(closed.body).toContain(escape(statement));
    const refused = await signUp(t, { email: 'a@example.com', list: 'acme' });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.code).toBe('list_closed');
    expect(await entriesOf(t, 'a@example.com')).toEqual([]);
  });

  it('one address on several lists, unique on each; the amount is one of the bands or none', async () => {
    const { t } = await setUp(dialect);
    const list = await openList(t);
    expect((await signUp(t, { email: 'Ann@Example.com' })).statusCode).toBe(201);
    const bad = await signUp(t, { email: 'ann@example.com', list: list.slug, intended_amount: '999999-' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('amount_invalid');
    const form = await formSignUp(t, { email: 'ann@example.com', list: list.slug, intended_amount: '1000-5000' });
    expect(form.statusCode).toBe(303);
    expect(form.headers.location).toBe(`${offeringPath(list.slug)}?signup=joined`);
    const again = await signUp(t, { email: 'ANN@example.com', list: list.slug });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('already_registered');
    expect(await entriesOf(t, 'ann@example.com')).toEqual([
      { id: expect.any(String), list_id: 0, status: 'joined', intended_amount: null },
      { id: expect.any(String), list_id: list.id, status: 'joined', intended_amount: '1000-5000' },
    ]);
    expect((await signUp(t, { email: 'bob@example.com', list: list.slug, intended_amount: '' })).statusCode).toBe(201);
    expect((await entriesOf(t, 'bob@example.com'))[0]!.intended_amount).toBeNull();
    const unknown = await signUp(t, { email: 'bob@example.com', list: 'no-such-list' });
    expect(unknown.json().error.code).toBe('unknown_list');
  });

  it('every e-mail of an offering list carries the three statements and names the portal; a list unsubscribe leaves the others', async () => {
    const { t, mails, token } = await setUp(dialect, { SIGNUP_CONFIRMATION: 'required' });
    const list = await openList(t);
    expect((await signUp(t, { email: 'cat@example.com' })).statusCode).toBe(201);
    expect((await signUp(t, { email: 'cat@example.com', list: list.slug, intended_amount: '0-1000' })).statusCode).toBe(201);
    const [portal, offering] = await entriesOf(t, 'cat@example.com');
    // The confirmation (queued by the signup) and the launch invite and welcome (queued here), through the same outbox.
    await t.app.mail.enqueue(t.app.database.db, waitlistEmailMessage('invite', { id: offering!.id, email: 'cat@example.com' }));
    await t.app.mail.enqueue(t.app.database.db, waitlistEmailMessage('welcome', { id: offering!.id, email: 'cat@example.com' }));
    await drainOutbox(t);
    const offeringMails = mails.messages.filter((m) => (m.header('subject') ?? '').includes('Acme Robotics'));
    expect(offeringMails.map((m) => m.header('subject')).sort()).toEqual([
      `Confirm your interest in Acme Robotics, Inc. on ${siteContent.productName}`,
      `News about Acme Robotics, Inc. on ${siteContent.productName}`,
      `Your interest in Acme Robotics, Inc. on ${siteContent.productName}`,
    ]);
    const portalMails = mails.messages.filter((m) => !(m.header('subject') ?? '').includes('Acme Robotics'));
    expect(portalMails).toHaveLength(1);
    for (const mail of offeringMails) {
      const { text, html } = mailParts(mail);
      for (const statement of TESTING_THE_WATERS_STATEMENTS) {
        expect(text!.replace(/\s+/g, ' ')).toContain(statement);
        expect(html).toContain(statement.replace(/'/g, '&#x27;'));
      }
      expect(text).toContain(siteContent.productName);
    }
    // The portal's confirmation is as it always was: no statement of an offering.
    expect(mailParts(portalMails[0]!).text).not.toContain(TESTING_THE_WATERS_STATEMENTS[0]);
    // The records keep each send with the text it was sent from: the offering's own, statements and all.
    const sentFrom = async (mail: (typeof mails.messages)[number]) => {
      const send = await t.app.database.db.selectFrom('records_mail_sends').select('version_id').where('message_id', '=', mail.header('message-id')!).executeTakeFirstOrThrow();
      const res = await admin(t, token, `${ADMIN_RECORD_VERSIONS_PATH}/${encodeURIComponent(send.version_id)}`);
      expect(res.statusCode).toBe(200);
      return res.json() as { name: string; parts: Record<string, string> };
    };
    for (const mail of offeringMails) {
      const version = await sentFrom(mail);
      expect(version.name).toMatch(/^offerings\/acme-robotics\/(confirmation|welcome|invite)$/);
      expect(version.parts['subject.txt']).toBe(`${mail.header('subject')}\n`);
      for (const statement of TESTING_THE_WATERS_STATEMENTS) expect(version.parts['body.txt']!.replace(/\s+/g, ' ')).toContain(statement);
    }
    expect((await sentFrom(portalMails[0]!)).name).toBe('confirmation');

    const manage = createLinkToken(t.app.secretBox, { entryId: offering!.id, purpose: 'manage', expiresAt: Math.floor(Date.now() / 1000) + 3600 });
    const view = await t.app.inject({ method: 'POST', url: PREFERENCES_API_PATH, payload: { token: manage } });
    expect(view.json().lists.map((l: { name: string }) => l.name)).toEqual([`The ${siteContent.productName} waitlist`, 'Acme Robotics, Inc.']);
    expect((await t.app.inject({ method: 'POST', url: UNSUBSCRIBE_API_PATH, payload: { token: manage } })).json().outcome).toBe('unsubscribed');
    expect((await entriesOf(t, 'cat@example.com')).map((e) => e.status)).toEqual(['pending', 'unsubscribed']);
    expect((await t.app.inject({ method: 'POST', url: UNSUBSCRIBE_ALL_API_PATH, payload: { token: manage } })).json()).toEqual({ outcome: 'unsubscribed', lists: 2 });
    expect((await entriesOf(t, 'cat@example.com')).map((e) => e.status)).toEqual(['unsubscribed', 'unsubscribed']);
    expect(portal).toBeDefined();

    // The admin by list: the portal's page does not show the offering's entries, the list's shows its band.
    const portalPage = (await admin(t, token, ADMIN_WAITLIST_PATH)).json();
    expect(portalPage.total).toBe(1);
    expect(portalPage.entries[0]).not.toHaveProperty('intended_amount');
    const listPage = (await admin(t, token, `${ADMIN_WAITLIST_PATH}?list=${list.slug}`)).json();
    expect(listPage.total).toBe(1);
    expect(listPage.entries[0].intended_amount).toBe('0-1000');
    expect((await admin(t, token, `${ADMIN_WAITLIST_PATH}?list=nope`)).statusCode).toBe(404);
  });

  it('without JavaScript, the preferences form leaves every list', async () => {
    const { t } = await setUp(dialect);
    const list = await openList(t);
    expect((await signUp(t, { email: 'dee@example.com' })).statusCode).toBe(201);
    expect((await signUp(t, { email: 'dee@example.com', list: list.slug })).statusCode).toBe(201);
    const [portal] = await entriesOf(t, 'dee@example.com');
    const manage = createLinkToken(t.app.secretBox, { entryId: portal!.id, purpose: 'manage', expiresAt: Math.floor(Date.now() / 1000) + 3600 });
    const res = await t.app.inject({
      method: 'POST',
      url: `${PREFERENCES_PAGE_PATH}?token=${manage}`,
      payload: `${PREFERENCES_ACTION_FIELD}=unsubscribe_all`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(LEAVE_ALL_WORDS.done.title);
    expect((await entriesOf(t, 'dee@example.com')).map((e) => e.status)).toEqual(['unsubscribed', 'unsubscribed']);
  });

  it('the admin: lists API, insight sums by band, export with List and Intended amount only for an offering list', async () => {
    const { t, token } = await setUp(dialect);
    const created = await admin(t, token, ADMIN_LISTS_PATH, 'POST', { slug: 'beta-energy', name: 'Beta Energy', kind: 'testing-the-waters', bands: BANDS });
    expect(created.statusCode).toBe(201);
    expect(created.json().state).toBe('draft');
    expect((await admin(t, token, ADMIN_LISTS_PATH, 'POST', { slug: 'beta-energy', name: 'Again', kind: 'testing-the-waters' })).statusCode).toBe(409);
    expect((await admin(t, token, ADMIN_LISTS_PATH, 'POST', { slug: 'portal', name: 'X', kind: 'testing-the-waters' })).statusCode).toBe(400);
    const opened = await t.app.inject({ method: 'PATCH', url: `${ADMIN_LISTS_PATH}/beta-energy`, headers: { authorization: `Bearer ${token}` }, payload: { state: 'open' } });
    expect(opened.json().state).toBe('open');
    const lists = (await admin(t, token, ADMIN_LISTS_PATH)).json().lists;
    expect(lists.map((l: { slug: string }) => l.slug)).toEqual(['portal', 'beta-energy']);

    await signUp(t, { email: 'p@example.com' });
    for (const [email, amount] of [['x@example.com', '1000-5000'], ['y@example.com', '1000-5000'], ['z@example.com', '25000-'], ['w@example.com', '']] as const) {
      expect((await signUp(t, { email, list: 'beta-energy', intended_amount: amount })).statusCode).toBe(201);
    }
    const insights = (await admin(t, token, `${ADMIN_INSIGHTS_PATH}?list=beta-energy`)).json();
    expect(insights.total).toBe(4);
    expect(insights.amounts).toEqual([
      { key: '1000-5000', label: '$1,000 to $5,000', count: 2, min: 2000, max: 10000 },
      { key: '25000-', label: '$25,000 or more', count: 1, min: 25000, max: null },
    ]);
    expect((await admin(t, token, ADMIN_INSIGHTS_PATH)).json()).not.toHaveProperty('amounts');

    const file = await admin(t, token, ADMIN_EXPORT_PATH, 'POST', { filter: { list: 'beta-energy' } });
    expect(file.statusCode).toBe(200);
    const lines = file.body.replace(/^\uFEFF/, '').trim().split('\r\n');
    expect(lines[0]).toBe('Email,Date Joined,IP Address,Location,List,Intended amount');
    expect(lines).toHaveLength(5);
    expect(lines.filter((l) => l.endsWith(',Beta Energy,"$1,000 to $5,000"'))).toHaveLength(2);
    const portalFile = await admin(t, token, ADMIN_EXPORT_PATH, 'POST', {});
    expect(portalFile.body.replace(/^\uFEFF/, '').split('\r\n')[0]).toBe('Email,Date Joined,IP Address,Location');
    expect(portalFile.body).toContain('p@example.com');
    expect(portalFile.body).not.toContain('x@example.com');
  });

  it('the CLI creates, opens, closes and lists', async () => {
    const { t } = await setUp(dialect);
    const cli = (args: string[]) => runCliInProcess(runAdminCli, args, { env: { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' } });
    expect((await cli(['lists', 'create', 'gamma', '--name', 'Gamma Labs', '--kind', 'testing-the-waters', '--bands', '1000,5000'])).code).toBe(0);
    expect((await cli(['lists', 'open', 'gamma'])).code).toBe(0);
    expect((await t.app.inject({ url: offeringPath('gamma') })).statusCode).toBe(200);
    expect((await cli(['lists', 'close', 'gamma'])).code).toBe(0);
    const listed = await cli(['lists', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/gamma\s+testing-the-waters\s+closed\s+Gamma Labs/);
    expect((await cli(['lists', 'create', 'delta', '--name', 'X', '--kind', 'other'])).code).toBe(2);
    expect((await cli(['lists', 'create', 'gamma', '--name', 'X', '--kind', 'testing-the-waters'])).code).toBe(1);
  });
});
