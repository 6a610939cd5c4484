import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/server/config.js';
import { SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { createList, updateList, type ListActor } from '../../../src/server/lists/manage.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * The form on another site (issue 32 point 3), on both databases: the allowed origins' CORS
 * (preflight and answers), their plain form's thanks page, the embedding page as the referrer, and
 * the script's own route. Any other site is refused.
 */
const LIST_ACTOR: ListActor = { email: null, id: null, ip: null, by: 'cli' };
const PARTNER = 'https://partner.example';
const OTHER = 'https://elsewhere.example';
const THANKS = `${PARTNER}/thanks?from=waitlist`;

describe.each(TEST_DIALECTS)('embedding the signup form (%s)', (dialect: TestDialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ EMBED_ORIGINS: `${PARTNER},https://www.partner.example`, EMBED_THANKS_URLS: THANKS }, { dialect });
  });
  afterEach(async () => {
    await t.close();
  });

  const preflight = (origin: string, headers = 'content-type', method = 'POST') =>
    t.app.inject({ method: 'OPTIONS', url: SIGNUP_PATH, headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });
  const stored = (email: string) => t.app.database.db.selectFrom('waitlist').selectAll().where('email', '=', email).executeTakeFirst();

  it('answers the preflight of an allowed origin only', async () => {
    const allowed = await preflight(PARTNER);
    expect(allowed.statusCode).toBe(204);
    expect(allowed.headers['access-control-allow-origin']).toBe(PARTNER);
    expect(allowed.headers['access-control-allow-methods']).toBe('POST');
    expect(allowed.headers['access-control-allow-headers']).toBe('Content-Type');
    expect(allowed.headers.vary).toContain('Origin');
    for (const res of [await preflight(OTHER), await preflight(PARTNER, 'content-type, authorization'), await preflight(PARTNER, 'content-type', 'DELETE'), await preflight('null')]) {
      expect(res.statusCode).toBe(403);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('takes a JSON signup from an allowed origin with CORS, the embedding page\'s origin as referrer', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: SIGNUP_PATH,
      headers: { origin: PARTNER, 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' },
      payload: { email: 'embed@example.com', utm_source: 'Partner', landing_path: '/blog/post', referrer: 'https://search.example/' },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['access-control-allow-origin']).toBe(PARTNER);
    expect(await stored('embed@example.com')).toMatchObject({ referrer: PARTNER, utm_source: 'Partner', landing_path: '/blog/post' });

    // Errors are readable by the script too.
    const again = await t.app.inject({ method: 'POST', url: SIGNUP_PATH, headers: { origin: PARTNER, 'content-type': 'application/json' }, payload: { email: 'embed@example.com' } });
    expect(again.statusCode).toBe(409);
    expect(again.headers['access-control-allow-origin']).toBe(PARTNER);

    // Only the portal's list exists (data-list of the script, a `list` field of a form).
    const portal = await t.app.inject({ method: 'POST', url: SIGNUP_PATH, headers: { origin: PARTNER, 'content-type': 'application/json' }, payload: { email: 'portal@example.com', list: 'portal' } });
    expect(portal.statusCode).toBe(201);
    const vip = await t.app.inject({ method: 'POST', url: SIGNUP_PATH, headers: { origin: PARTNER, 'content-type': 'application/json' }, payload: { email: 'vip@example.com', list: 'vip' } });
    expect(vip.statusCode).toBe(400);
    expect(vip.json().error.code).toBe('unknown_list');
    expect(await stored('vip@example.com')).toBeUndefined();
    // An open offering list: joined on its own page or through the keyed API, never from another site's form.
    await createList(t.app.database.db, LIST_ACTOR, { slug: 'acme', name: 'Acme, Inc.', description: 'Robots.', kind: 'testing-the-waters', bands: null });
    await updateList(t.app.database.db, LIST_ACTOR, 'acme', { state: 'open' });
    const offering = await t.app.inject({ method: 'POST', url: SIGNUP_PATH, headers: { origin: PARTNER, 'content-type': 'application/json' }, payload: { email: 'acme@example.com', list: 'acme' } });
    expect(offering.statusCode).toBe(403);
    expect(offering.json().error.code).toBe('cross_site_request');
    expect(offering.headers['access-control-allow-origin']).toBe(PARTNER);
    expect(await stored('acme@example.com')).toBeUndefined();

    const refused = await t.app.inject({ method: 'POST', url: SIGNUP_PATH, headers: { origin: OTHER, 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' }, payload: { email: 'other@example.com' } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('cross_site_request');
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    expect(await stored('other@example.com')).toBeUndefined();
  });

  it('ends an allowed site\'s plain form on its allowed thanks page, else on our /thanks', async () => {
    const form = (origin: string, body: string) =>
      t.app.inject({ method: 'POST', url: SIGNUP_PATH, headers: { origin, 'sec-fetch-site': 'cross-site', 'content-type': 'application/x-www-form-urlencoded' }, payload: body });
    const toThanks = await form(PARTNER, `email=a%40example.com&thanks_url=${encodeURIComponent(THANKS)}`);
    expect(toThanks.statusCode).toBe(303);
    expect(toThanks.headers.location).toBe(THANKS);
    expect(await stored('a@example.com')).toMatchObject({ referrer: PARTNER });

    const notAllowed = await form(PARTNER, `email=b%40example.com&thanks_url=${encodeURIComponent('https://evil.example/phish')}`);
    expect(notAllowed.headers.location).toBe('/thanks');
    // An allowed thanks page of one origin is not one for another allowed origin's form.
    const wrongSite = await form('https://www.partner.example', `email=c%40example.com&thanks_url=${encodeURIComponent(THANKS)}`);
    expect(wrongSite.headers.location).toBe('/thanks');
    const none = await form(PARTNER, 'email=d%40example.com');
    expect(none.headers.location).toBe('/thanks');
    // Our own form cannot be sent elsewhere either.
    const own = await t.app.inject({ method: 'POST', url: SIGNUP_PATH, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `email=e%40example.com&thanks_url=${encodeURIComponent(THANKS)}` });
    expect(own.headers.location).toBe('/thanks');

    const refused = await form(OTHER, `email=f%40example.com&thanks_url=${encodeURIComponent(THANKS)}`);
    expect(refused.statusCode).toBe(403);
    expect(await stored('f@example.com')).toBeUndefined();
  });

  it('serves the embed script to other sites\' pages, once it is built', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/embed.js' })).statusCode).toBe(404);
    const file = path.join(path.dirname(t.config.webRoot), 'embed', 'embed.js');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '(function(){})();\n');
    const res = await t.app.inject({ method: 'GET', url: '/embed.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(res.body).toBe('(function(){})();\n');
  });
});

describe('EMBED_THANKS_URLS', () => {
  it('must be pages of the allowed origins', () => {
    expect(loadConfig({ EMBED_ORIGINS: PARTNER, EMBED_THANKS_URLS: ` ${PARTNER}/thanks , ${PARTNER}/thanks` }).embedThanksUrls).toEqual([`${PARTNER}/thanks`]);
    expect(() => loadConfig({ EMBED_ORIGINS: PARTNER, EMBED_THANKS_URLS: `${OTHER}/thanks` })).toThrow(/EMBED_THANKS_URLS: each URL must be on an origin of EMBED_ORIGINS/);
    expect(() => loadConfig({ EMBED_THANKS_URLS: 'javascript:alert(1)' })).toThrow(/EMBED_THANKS_URLS/);
  });
});
