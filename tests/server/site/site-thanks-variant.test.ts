import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PAGES, THANKS_CHECK_INBOX } from '../../../src/shared/site/pages.js';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/** A miniature web build: the two thanks files are told apart by their text. */
function writeBuild(): string {
  const webRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-web-'));
  const page = (text: string) => `<!doctype html><html lang="en"><head><title>${text}</title></head><body><h1>${text}</h1></body></html>`;
  fs.writeFileSync(path.join(webRoot, PAGES.home.file), page('Landing'));
  fs.writeFileSync(path.join(webRoot, PAGES.thanks.file), page('Thanks'));
  fs.writeFileSync(path.join(webRoot, THANKS_CHECK_INBOX.file), page('Thanks, check your inbox'));
  fs.writeFileSync(path.join(webRoot, PAGES.notFound.file), page('Not found'));
  return webRoot;
}

describe('the thanks page with double opt-in on and off', () => {
  let t: TestApp | undefined;
  let smtp: TestSmtpServer | undefined;
  afterEach(async () => {
    await t?.close();
    await smtp?.close();
    t = undefined;
    smtp = undefined;
  });

  it('serves the spec thanks page when confirmation is off (the default)', async () => {
    t = await createTestApp({ WEB_ROOT: writeBuild() });
    const thanks = await t.app.inject({ url: '/thanks' });
    expect(thanks.statusCode).toBe(200);
    expect(thanks.body).toContain('<h1>Thanks</h1>');
  });

  it('serves the variant with the check-inbox line when SIGNUP_CONFIRMATION=required, at /thanks only', async () => {
    smtp = await startSmtpServer();
    t = await createTestApp({
      WEB_ROOT: writeBuild(),
      SMTP_URL: smtp.url,
      MAIL_FROM: 'hello@example.com',
      PUBLIC_URL: 'https://waitlist.example',
      SIGNUP_CONFIRMATION: 'required',
    });
    const thanks = await t.app.inject({ url: '/thanks' });
    expect(thanks.statusCode).toBe(200);
    expect(thanks.headers['cache-control']).toBe('no-cache');
    expect(thanks.body).toContain('<h1>Thanks, check your inbox</h1>');
    // The variant is not a page of its own.
    expect((await t.app.inject({ url: `/${THANKS_CHECK_INBOX.file}` })).statusCode).toBe(404);
    expect((await t.app.inject({ url: '/' })).body).toContain('<h1>Landing</h1>');
  });
});
