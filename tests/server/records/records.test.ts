import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { unzipSync, strFromU8 } from 'fflate';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildRecordsBundle, CHECKSUMS_FILE, MANIFEST_FILE, type Manifest } from '../../../src/server/records/bundle.js';
import { entryConsentTexts, entryMailSends } from '../../../src/server/records/consents.js';
import { addUses, findVersion, listVersions, purgeExpiredVersions, sha256Hex, storeVersion } from '../../../src/server/records/versions.js';
import { purgeExpiredMail } from '../../../src/server/mail/outbox.js';
import { loadConfig } from '../../../src/server/config.js';
import { siteContent } from '../../../src/shared/site/content.js';
import { SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { mailParts } from '../../support/mime.js';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';
import { sameDatabaseApp, writePages } from './support.js';

/**
 * The records (src/server/records, issue 30): every text shown or sent kept once by content, what
 * each signup and each e-mail was given, the examiner's bundle, and the retention.
 */

const PUBLIC_URL = 'https://waitlist.example.com';
const MAIL_FROM = 'Meridian <hello@meridian-markets.example>';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function newWebRoot(landing?: string): string {
  const webRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'records-web-'));
  writePages(webRoot, landing);
  cleanups.push(async () => fs.rmSync(webRoot, { recursive: true, force: true }));
  return webRoot;
}

async function start(dialect: TestDialect, env: Record<string, string> = {}): Promise<TestApp> {
  const t = await createTestApp({ WEB_ROOT: newWebRoot(), ...env }, { dialect, mailWorker: { pollIntervalMs: 3_600_000 } });
  cleanups.push(() => t.close());
  return t;
}

async function withSmtp(): Promise<TestSmtpServer> {
  const server = await startSmtpServer();
  cleanups.push(() => server.close());
  return server;
}

async function drain(app: FastifyInstance): Promise<void> {
  for (let i = 0; i < 50; i++) if ((await app.mail.worker!.runOnce()) === 0) return;
  throw new Error('the outbox did not drain');
}

const versionsOf = async (app: FastifyInstance, kind: string, name: string) => (await listVersions(app.database.db)).filter((v) => v.kind === kind && v.name === name);

async function signUp(app: FastifyInstance, email: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: SIGNUP_PATH, payload: { email } });
  expect(res.statusCode).toBeLessThan(300);
  const row = await app.database.db.selectFrom('waitlist').select('id').where('email', '=', email).executeTakeFirstOrThrow();
  return row.id;
}

describe.each(TEST_DIALECTS)('records (%s)', (dialect) => {
  it('a page change creates exactly one new version; serving only counts', async () => {
    const t = await start(dialect);
    const [landing] = await versionsOf(t.app, 'page', 'index.html');
    expect(landing).toMatchObject({ number: 1, useCount: 0, firstUsedAt: null });
    for (let i = 0; i < 3; i++) expect((await t.app.inject({ url: '/' })).statusCode).toBe(200);
    await t.app.inject({ url: '/no-such-page' });
    await t.app.records.flush();
    const [served] = await versionsOf(t.app, 'page', 'index.html');
    expect(served!.useCount).toBe(3);
    expect(served!.firstUsedAt).not.toBeNull();
    expect((await versionsOf(t.app, 'page', '404.html'))[0]!.useCount).toBe(1);
    // Every page carries the legends; the landing page the consent statement.
    expect((await versionsOf(t.app, 'legends', 'footer'))[0]!.useCount).toBe(4);
    expect((await versionsOf(t.app, 'statement', 'consent'))[0]!.useCount).toBe(3);
    const before = (await listVersions(t.app.database.db)).length;

    // A restart with the same build stores nothing new.
    const same = await sameDatabaseApp(t, { WEB_ROOT: t.config.webRoot });
    await same.close();
    expect((await listVersions(t.app.database.db)).length).toBe(before);

    // A new build whose landing page changed: one new version of that page, and the new consent record names it.
    const changed = newWebRoot('Private Markets On Chain, now with a new line');
    for (let round = 0; round < 2; round++) {
      const next = await sameDatabaseApp(t, { WEB_ROOT: changed });
      await next.close();
    }
    const pages = await versionsOf(t.app, 'page', 'index.html');
    expect(pages.map((v) => v.number)).toEqual([1, 2]);
    expect((await listVersions(t.app.database.db)).length).toBe(before + 1);
    expect((await findVersion(t.app.database.db, pages[1]!.id))!.parts['page.html']).toContain('now with a new line');
    expect((await findVersion(t.app.database.db, pages[0]!.id))!.parts['page.html']).not.toContain('now with a new line');
  });

  it("a signup's consent record resolves to the page, statement and legends it was shown", async () => {
    const t = await start(dialect);
    const id = await signUp(t.app, 'ada@example.com');
    const texts = (await entryConsentTexts(t.app.database.db, id))!;
    expect(texts.consentVersion).toBe(siteContent.consent.version);
    expect(texts.consentRecord).toBe(t.app.records.consentRecord);
    const served = (await t.app.inject({ url: '/' })).body;
    expect(texts.page!.parts['page.html']).toBe(served);
    expect(texts.statement!.parts['statement.txt']).toContain(`version ${siteContent.consent.version}`);
    expect(texts.statement!.parts['statement.txt']).toContain(siteContent.form.submit);
    expect(texts.legends!.parts['legends.txt']).toContain(`${siteContent.footer.registrationLabel}: ${siteContent.registrationNumber}`);
    expect(texts.legends!.parts['legends.txt']).toContain(siteContent.footer.regulationCf);
  });

  it("an e-mail's record resolves to its template version after the outbox row is gone; a template change is one new version", async () => {
    const smtp = await withSmtp();
    const env = { SMTP_URL: smtp.url, MAIL_FROM, PUBLIC_URL, SIGNUP_CONFIRMATION: 'required' };
    const t = await start(dialect, env);
    const id = await signUp(t.app, 'grace@example.com');
    await drain(t.app);
    expect(smtp.messages).toHaveLength(1);

    // The outbox row's own retention ends: the record of the send stays.
    expect(await purgeExpiredMail(t.app.database.db, 1, new Date(Date.now() + 3 * 24 * 3600 * 1000))).toBe(1);
    expect(await t.app.database.db.selectFrom('mail_outbox').select('id').execute()).toEqual([]);
    const [send] = await entryMailSends(t.app.database.db, id);
    expect(send).toMatchObject({ template: 'confirmation', messageId: smtp.messages[0]!.header('message-id') });
    const version = (await findVersion(t.app.database.db, send!.versionId))!;
    expect(version.kind).toBe('email');

    // The archived version is the e-mail as sent, each recipient's token replaced by the placeholder.
    const received = mailParts(smtp.messages[0]!);
    const placeholder = (text: string) => text.replace(/token=[A-Za-z0-9._~-]+/g, 'token={recipient-token}');
    expect(version.parts['subject.txt']).toBe(`${smtp.messages[0]!.header('subject')}\n`);
    expect(version.parts['body.txt']).toBe(placeholder(received.text!));
    expect(version.parts['body.html']).toBe(placeholder(received.html!));
    expect(version.parts['body.txt']).not.toContain('grace@example.com');
    await t.app.records.flush();
    expect((await findVersion(t.app.database.db, version.id))!.useCount).toBe(1);

    // A setting the words show changes: the next confirmation is sent from a second version, once.
    await t.app.close();
    const changed = await sameDatabaseApp(t, { ...env, CONFIRMATION_LINK_TTL_HOURS: '48', WEB_ROOT: t.config.webRoot }, { mailWorker: { pollIntervalMs: 3_600_000 } });
    cleanups.push(() => changed.close());
    const other = await signUp(changed, 'hedy@example.com');
    const third = await signUp(changed, 'joan@example.com');
    await drain(changed);
    const confirmations = await versionsOf(changed, 'email', 'confirmation');
    expect(confirmations.map((v) => v.number)).toEqual([1, 2]);
    expect((await entryMailSends(changed.database.db, other))[0]!.versionId).toBe(confirmations[1]!.id);
    expect((await entryMailSends(changed.database.db, third))[0]!.versionId).toBe(confirmations[1]!.id);
    expect((await findVersion(changed.database.db, confirmations[1]!.id))!.parts['body.txt']).toContain('48 hours');

    // Once the entry is erased, the daily retention pass deletes its send records, never the version.
    await changed.database.db.deleteFrom('waitlist').where('id', '=', other).execute();
    expect(await purgeExpiredVersions(changed.database.db, 5)).toBe(0);
    expect(await entryMailSends(changed.database.db, other)).toEqual([]);
    expect(await entryMailSends(changed.database.db, third)).toHaveLength(1);
    expect(await findVersion(changed.database.db, confirmations[1]!.id)).toBeDefined();
  });

  it("the bundle's checksums verify and its manifest lists every version in use in the period", async () => {
    const t = await start(dialect);
    const { db } = t.app.database;
    // Two versions of one template, both in use on 2026-03-10; one page used only the month before.
    const first = await storeVersion(db, { kind: 'email', name: 'welcome', parts: { 'subject.txt': 'Hello\n', 'body.txt': 'First words\n', 'body.html': '<p>First words</p>' } });
    const second = await storeVersion(db, { kind: 'email', name: 'welcome', parts: { 'subject.txt': 'Hello\n', 'body.txt': 'Second words\n', 'body.html': '<p>Second words</p>' } });
    const old = await storeVersion(db, { kind: 'page', name: 'thanks.html', parts: { 'page.html': '<p>Old thanks</p>' } });
    const at = (iso: string) => Date.parse(iso);
    await addUses(
      db,
      new Map([
        [first, { first: at('2026-03-01T09:00:00Z'), last: at('2026-03-10T11:59:00Z'), count: 40 }],
        [second, { first: at('2026-03-10T12:00:00Z'), last: at('2026-03-20T08:00:00Z'), count: 25 }],
        [old, { first: at('2026-02-01T00:00:00Z'), last: at('2026-02-28T23:59:59Z'), count: 7 }],
      ]),
    );

    const { zip, manifest } = await buildRecordsBundle(db, { from: '2026-03-10', to: '2026-03-10' }, { retentionYears: 5 });
    expect(manifest.versions.map((v) => v.id).sort()).toEqual([first, second].sort());
    expect(manifest.versions.map((v) => [v.name, v.version])).toEqual([
      ['welcome', 1],
      ['welcome', 2],
    ]);

    const files = unzipSync(zip);
    const sums = strFromU8(files[CHECKSUMS_FILE]!).trim().split('\n');
    expect(sums.length).toBe(Object.keys(files).length - 1);
    for (const line of sums) {
      const [hash, name] = line.split('  ');
      expect(sha256Hex(files[name!]!), name).toBe(hash);
    }
    const written = JSON.parse(strFromU8(files[MANIFEST_FILE]!)) as Manifest;
    expect(written.versions.map((v) => v.id)).toEqual(manifest.versions.map((v) => v.id));
    for (const v of written.versions) {
      for (const file of v.files) expect(sha256Hex(files[file.path]!)).toBe(file.sha256);
    }
    expect(strFromU8(files[written.versions[1]!.files.find((f) => f.path.endsWith('body.txt'))!.path]!)).toBe('Second words\n');
    expect(Object.keys(files)).toEqual(expect.arrayContaining(['README.txt', 'manifest.csv']));

    // A whole month: the page used in February is not in March's bundle, but in February's.
    const february = await buildRecordsBundle(db, { from: '2026-02-01', to: '2026-02-28' }, { retentionYears: 5 });
    expect(february.manifest.versions.map((v) => v.id)).toEqual([old, first].filter((id) => id === old));
  });

  it('retention never deletes a version early, and a kept version never changes', async () => {
    const t = await start(dialect);
    const { db } = t.app.database;
    const id = await storeVersion(db, { kind: 'page', name: 'thanks.html', parts: { 'page.html': '<p>Kept</p>' } });
    const lastUse = Date.parse('2026-01-15T10:00:00Z');
    await addUses(db, new Map([[id, { first: lastUse, last: lastUse, count: 1 }]]));

    const fourYearsLater = new Date('2030-01-15T10:00:00Z');
    const justBefore = new Date('2031-01-15T09:59:59Z');
    expect(await purgeExpiredVersions(db, 5, fourYearsLater)).toBe(0);
    expect(await purgeExpiredVersions(db, 5, justBefore)).toBe(0);
    expect(await findVersion(db, id)).toBeDefined();

    // The text itself cannot be changed, by this code or by hand.
    await expect(db.updateTable('records_versions').set({ parts: '{"page.html":"<p>Changed</p>"}' }).where('id', '=', id).execute()).rejects.toThrow(/never changes/);

    // The version a signup's consent record names is kept however old; the others go after five years.
    const afterRetention = new Date('2031-01-16T00:00:00Z');
    const inConsent = (await db.selectFrom('records_consents').select('statement_version').executeTakeFirstOrThrow()).statement_version;
    await signUp(t.app, 'kept@example.com');
    expect(await purgeExpiredVersions(db, 5, afterRetention)).toBeGreaterThanOrEqual(1);
    expect(await findVersion(db, id)).toBeUndefined();
    expect(await findVersion(db, inConsent)).toBeDefined();
  });
});

describe('RECORDS_RETENTION_YEARS', () => {
  it('is 5 by default and refused below 5 unless RECORDS_RETENTION_OVERRIDE=1', () => {
    expect(loadConfig({}).records.retentionYears).toBe(5);
    expect(loadConfig({ RECORDS_RETENTION_YEARS: '7' }).records.retentionYears).toBe(7);
    expect(() => loadConfig({ RECORDS_RETENTION_YEARS: '4' })).toThrow(/RECORDS_RETENTION_YEARS: .*17 CFR 227.404.*RECORDS_RETENTION_OVERRIDE=1/);
    expect(loadConfig({ RECORDS_RETENTION_YEARS: '1', RECORDS_RETENTION_OVERRIDE: '1' }).records.retentionYears).toBe(1);
  });
});
