import { afterEach, describe, expect, it } from 'vitest';
import { countingGeolocator } from '../../support/geolocators.js';
import { findWaitlistEntryByEmail } from '../../../src/server/db/waitlist-entries.js';
import {
  attributionFromFormReferer,
  cleanLandingPath,
  cleanReferrer,
  cleanUtmValue,
  deriveSource,
  formatSource,
  isEmptyAttribution,
  MAX_LANDING_PATH_LENGTH,
  MAX_UTM_LENGTH,
  NO_ATTRIBUTION,
  normalizeAttribution,
  type Attribution,
} from '../../../src/shared/waitlist/attribution.js';
import { SIGNUP_BODY_LIMIT, SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { createTestApp, type TestApp, type TestAppOptions } from '../../support/test-app.js';

/**
 * Attribution at signup (issue 10, point 1): the UTM parameters, the referring origin and the
 * landing path, sent by the form with JavaScript (JSON) or read from a no-JavaScript form post's
 * same-origin Referer, cleaned by attribution.ts and stored with the entry. Real HTTP through the
 * real app (inject) on SQLite and PostgreSQL; the batch path through the real group commit.
 */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const ATTRIBUTION_KEYS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'referrer', 'landing_path', 'source'] as const;

/** What an entry stores about where it came from. */
async function attributionOf(t: TestApp, email: string): Promise<Attribution> {
  const entry = await findWaitlistEntryByEmail(t.app.database.db, email);
  if (!entry) throw new Error(`${email} is not on the waitlist`);
  return Object.fromEntries(ATTRIBUTION_KEYS.map((k) => [k, entry[k]])) as Attribution;
}

const HOST = 'waitlist.example';
const OWN = `http://${HOST}`;

function postJson(t: TestApp, body: unknown, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: SIGNUP_PATH,
    payload: JSON.stringify(body),
    headers: { host: HOST, 'content-type': 'application/json', ...headers },
  });
}

function postForm(t: TestApp, fields: Record<string, string | string[]>, headers: Record<string, string> = {}) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) for (const v of [value].flat()) params.append(name, v);
  return t.app.inject({
    method: 'POST',
    url: SIGNUP_PATH,
    payload: params.toString(),
    headers: { host: HOST, 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
}

const FULL = {
  utm_source: 'Newsletter',
  utm_medium: 'email',
  utm_campaign: 'launch-2026',
  utm_term: 'private markets',
  utm_content: 'header-link',
  referrer: 'https://www.news.example/articles/42?id=7#top',
  landing_path: '/',
};

describe('attribution rules (attribution.ts)', () => {
  it('cleanUtmValue: trims, removes control, bidi and zero-width characters, cuts at MAX_UTM_LENGTH code points', () => {
    expect(cleanUtmValue('  spring\tsale\u0000\u202e ')).toBe('springsale');
    expect(cleanUtmValue('a\u200bb\ufeffc\u2028d')).toBe('abcd');
    expect(cleanUtmValue('x'.repeat(MAX_UTM_LENGTH + 50))).toBe('x'.repeat(MAX_UTM_LENGTH));
    // Code points, not UTF-16 units: an emoji at the cut is kept whole or not at all.
    const emoji = '😀'.repeat(MAX_UTM_LENGTH + 1);
    expect(Array.from(cleanUtmValue(emoji)!)).toHaveLength(MAX_UTM_LENGTH);
    expect(cleanUtmValue(emoji)).toBe('😀'.repeat(MAX_UTM_LENGTH));
    // A lone surrogate half is dropped (no database stores it as sent); a pair is kept.
    expect(cleanUtmValue('a\ud800b\udc00c')).toBe('abc');
    expect(cleanUtmValue('café 😀')).toBe('café 😀');
    for (const bad of ['', '   ', '\u0000\u0001', 42, true, null, undefined, ['x'], { v: 'x' }]) expect(cleanUtmValue(bad)).toBeNull();
  });

  it('cleanReferrer: the origin of an http(s) URL only; not our own; nothing else', () => {
    expect(cleanReferrer('https://www.news.example/a/b?c=d#e')).toBe('https://www.news.example');
    expect(cleanReferrer('HTTP://News.Example:8080/x')).toBe('http://news.example:8080');
    expect(cleanReferrer('https://user:secret@news.example/')).toBe('https://news.example');
    expect(cleanReferrer(' https://news.example ')).toBe('https://news.example');
    expect(cleanReferrer('https://site.example/page', 'https://site.example')).toBeNull();
    expect(cleanReferrer('https://site.example/page', 'http://site.example')).toBe('https://site.example');
    for (const bad of ['javascript:alert(1)', 'data:text/html,<b>x</b>', 'ftp://files.example/', 'file:///etc/passwd', 'about:blank', 'news.example', '/path', '', 'https://', 42, null]) {
      expect(cleanReferrer(bad), String(bad)).toBeNull();
    }
    expect(cleanReferrer(`https://${'a'.repeat(250)}.example/`)).toBeNull(); // origin longer than MAX_REFERRER_LENGTH
    expect(cleanReferrer(`https://news.example/${'p'.repeat(3000)}`)).toBeNull(); // absurdly long
  });

  it('cleanLandingPath: a plain path without query or fragment, from a path or a URL', () => {
    expect(cleanLandingPath('/')).toBe('/');
    expect(cleanLandingPath('/thanks?utm_source=x#top')).toBe('/thanks');
    expect(cleanLandingPath('https://site.example/caf%C3%A9/x?y=1')).toBe('/caf%C3%A9/x');
    expect(cleanLandingPath('/' + 'p'.repeat(MAX_LANDING_PATH_LENGTH - 1))).toBe('/' + 'p'.repeat(MAX_LANDING_PATH_LENGTH - 1));
    for (const bad of ['/' + 'p'.repeat(MAX_LANDING_PATH_LENGTH), '//evil.example/x', 'javascript:alert(1)', '/<script>', '/a b', '/\\evil', 'thanks', '', 7, null]) {
      expect(cleanLandingPath(bad), String(bad)).toBeNull();
    }
  });

  it('deriveSource and formatSource: utm_source lower-cased, else the referrer host without www., else Direct', () => {
    expect(deriveSource('NewsLetter', 'https://www.news.example')).toBe('newsletter');
    expect(deriveSource(null, 'https://www.news.example')).toBe('news.example');
    expect(deriveSource(null, 'http://blog.example:8080')).toBe('blog.example');
    expect(deriveSource(null, null)).toBeNull();
    expect(formatSource(null)).toBe('Direct');
    expect(formatSource('newsletter')).toBe('newsletter');
  });

  it('normalizeAttribution: every field cleaned, unknown fields ignored, source derived', () => {
    expect(normalizeAttribution({ ...FULL, email: 'x@example.com', source: 'forged' })).toEqual({
      utm_source: 'Newsletter',
      utm_medium: 'email',
      utm_campaign: 'launch-2026',
      utm_term: 'private markets',
      utm_content: 'header-link',
      referrer: 'https://www.news.example',
      landing_path: '/',
      source: 'newsletter',
    });
    expect(normalizeAttribution({})).toEqual(NO_ATTRIBUTION);
    expect(normalizeAttribution({ referrer: 'https://site.example/x' }, 'https://site.example')).toEqual(NO_ATTRIBUTION);
    expect(isEmptyAttribution(normalizeAttribution({ utm_source: 3, referrer: 'javascript:x' }))).toBe(true);
    expect(isEmptyAttribution(normalizeAttribution({ landing_path: '/' }))).toBe(false);
  });

  it('attributionFromFormReferer: UTM parameters and path of a same-origin Referer; nothing otherwise', () => {
    expect(attributionFromFormReferer('https://site.example/spring?utm_source=Ads&utm_campaign=q1&other=1', 'https://site.example')).toEqual({
      ...NO_ATTRIBUTION,
      utm_source: 'Ads',
      utm_campaign: 'q1',
      landing_path: '/spring',
      source: 'ads',
    });
    expect(attributionFromFormReferer('https://site.example/', 'https://site.example')).toEqual({ ...NO_ATTRIBUTION, landing_path: '/' });
    expect(attributionFromFormReferer('https://other.example/?utm_source=x', 'https://site.example')).toEqual(NO_ATTRIBUTION);
    expect(attributionFromFormReferer('http://site.example/?utm_source=x', 'https://site.example')).toEqual(NO_ATTRIBUTION);
    expect(attributionFromFormReferer(undefined, 'https://site.example')).toEqual(NO_ATTRIBUTION);
    expect(attributionFromFormReferer('https://site.example/?utm_source=x', null)).toEqual(NO_ATTRIBUTION);
    expect(attributionFromFormReferer('not a url', 'https://site.example')).toEqual(NO_ATTRIBUTION);
  });
});

describe.each(TEST_DIALECTS)('attribution at signup (%s)', (dialect: TestDialect) => {
  async function start(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
    const t = await createTestApp({ SIGNUP_RATE_LIMIT_MAX: '1000', ...env }, { dialect, ...options });
    cleanups.push(() => t.close());
    return t;
  }

  it('stores every field of a JSON signup, the referrer as its origin, and derives the source', async () => {
    const t = await start();
    const res = await postJson(t, { email: 'ada@example.com', ...FULL });
    expect(res.statusCode).toBe(201);
    expect(await attributionOf(t, 'ada@example.com')).toEqual({
      utm_source: 'Newsletter',
      utm_medium: 'email',
      utm_campaign: 'launch-2026',
      utm_term: 'private markets',
      utm_content: 'header-link',
      referrer: 'https://www.news.example',
      landing_path: '/',
      source: 'newsletter',
    });
  });

  it('stores nothing (Direct) for a signup without attribution, and ignores a forged source', async () => {
    const t = await start();
    expect((await postJson(t, { email: 'plain@example.com', source: 'forged', referer: 'https://x.example' })).statusCode).toBe(201);
    expect(await attributionOf(t, 'plain@example.com')).toEqual(NO_ATTRIBUTION);
  });

  it('derives the source from the referrer host when there is no utm_source', async () => {
    const t = await start();
    expect((await postJson(t, { email: 'ref@example.com', referrer: 'https://www.search.example/q?s=waitlist', landing_path: '/thanks' })).statusCode).toBe(201);
    expect(await attributionOf(t, 'ref@example.com')).toEqual({ ...NO_ATTRIBUTION, referrer: 'https://www.search.example', landing_path: '/thanks', source: 'search.example' });
  });

  it('stores the fields of a form post that carries them (the Referer is not read then)', async () => {
    const t = await start();
    const res = await postForm(
      t,
      { email: 'form@example.com', utm_source: 'Partner', utm_campaign: 'spring', referrer: 'https://partner.example/list', landing_path: '/spring' },
      { referer: `${OWN}/other?utm_source=ignored` },
    );
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/thanks');
    expect(await attributionOf(t, 'form@example.com')).toEqual({
      ...NO_ATTRIBUTION,
      utm_source: 'Partner',
      utm_campaign: 'spring',
      referrer: 'https://partner.example',
      landing_path: '/spring',
      source: 'partner',
    });
  });

  it('a form post without fields takes the UTM parameters and landing path from its same-origin Referer', async () => {
    const t = await start();
    const referer = `${OWN}/?utm_source=Twitter&utm_medium=social&utm_campaign=launch&utm_term=fintech&utm_content=thread&utm_id=9`;
    const res = await postForm(t, { email: 'nojs@example.com' }, { referer });
    expect(res.statusCode).toBe(303);
    expect(await attributionOf(t, 'nojs@example.com')).toEqual({
      utm_source: 'Twitter',
      utm_medium: 'social',
      utm_campaign: 'launch',
      utm_term: 'fintech',
      utm_content: 'thread',
      // The site that linked to the landing page is not known without JavaScript.
      referrer: null,
      landing_path: '/',
      source: 'twitter',
    });
  });

  it('a form post whose fields are all empty or invalid falls back to the Referer too', async () => {
    const t = await start();
    const res = await postForm(
      t,
      { email: 'hidden@example.com', utm_source: '', referrer: 'javascript:alert(1)', landing_path: '' },
      { referer: `${OWN}/spring?utm_campaign=q1` },
    );
    expect(res.statusCode).toBe(303);
    expect(await attributionOf(t, 'hidden@example.com')).toEqual({ ...NO_ATTRIBUTION, utm_campaign: 'q1', landing_path: '/spring' });
  });

  it('ignores a cross-origin, other-scheme or malformed Referer on a form post', async () => {
    const t = await start();
    const referers = [
      'https://evil.example/?utm_source=evil',
      `https://${HOST}/?utm_source=scheme`, // our host over another scheme is another origin
      `http://${HOST}:8080/?utm_source=port`,
      'not a url',
    ];
    for (const [i, referer] of referers.entries()) {
      const email = `cross${i}@example.com`;
      expect((await postForm(t, { email }, { referer })).statusCode).toBe(303);
      expect(await attributionOf(t, email), referer).toEqual(NO_ATTRIBUTION);
    }
    expect((await postForm(t, { email: 'none@example.com' })).statusCode).toBe(303);
    expect(await attributionOf(t, 'none@example.com')).toEqual(NO_ATTRIBUTION);
  });

  it('reads no Referer for a JSON signup (the form with JavaScript sends its fields)', async () => {
    const t = await start();
    expect((await postJson(t, { email: 'json@example.com' }, { referer: `${OWN}/?utm_source=header` })).statusCode).toBe(201);
    expect(await attributionOf(t, 'json@example.com')).toEqual(NO_ATTRIBUTION);
  });

  it('our own origin is not a referrer (the request\'s, or PUBLIC_URL\'s when configured)', async () => {
    const t = await start();
    expect((await postJson(t, { email: 'own@example.com', referrer: `${OWN}/some/page`, landing_path: '/' })).statusCode).toBe(201);
    expect(await attributionOf(t, 'own@example.com')).toEqual({ ...NO_ATTRIBUTION, landing_path: '/' });

    const withPublicUrl = await start({ PUBLIC_URL: 'https://site.example' });
    expect((await postJson(withPublicUrl, { email: 'pub@example.com', referrer: 'https://site.example/x' })).statusCode).toBe(201);
    expect(await attributionOf(withPublicUrl, 'pub@example.com')).toEqual(NO_ATTRIBUTION);
    // With PUBLIC_URL, the request's Host is not our origin: a referrer like it is another site.
    expect((await postJson(withPublicUrl, { email: 'host@example.com', referrer: `${OWN}/x` })).statusCode).toBe(201);
    expect(await attributionOf(withPublicUrl, 'host@example.com')).toEqual({ ...NO_ATTRIBUTION, referrer: OWN, source: HOST });
  });

  it('with PUBLIC_URL, a form post\'s Referer is read when it is PUBLIC_URL\'s origin, whatever the Host', async () => {
    const t = await start({ PUBLIC_URL: 'https://site.example' });
    expect((await postForm(t, { email: 'a@example.com' }, { host: '10.0.0.5:3000', referer: 'https://site.example/?utm_source=ads' })).statusCode).toBe(303);
    expect(await attributionOf(t, 'a@example.com')).toEqual({ ...NO_ATTRIBUTION, utm_source: 'ads', landing_path: '/', source: 'ads' });
    expect((await postForm(t, { email: 'b@example.com' }, { host: 'site.other', referer: 'http://site.other/?utm_source=ads' })).statusCode).toBe(303);
    expect(await attributionOf(t, 'b@example.com')).toEqual(NO_ATTRIBUTION);
  });

  it('without PUBLIC_URL, the request\'s origin honours X-Forwarded-Proto/-Host only under TRUST_PROXY', async () => {
    const forwarded = { host: '127.0.0.1:3000', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'site.example', referer: 'https://site.example/?utm_source=proxy' };
    const trusted = await start({ TRUST_PROXY: 'true' });
    expect((await postForm(trusted, { email: 'p@example.com' }, forwarded)).statusCode).toBe(303);
    expect(await attributionOf(trusted, 'p@example.com')).toEqual({ ...NO_ATTRIBUTION, utm_source: 'proxy', landing_path: '/', source: 'proxy' });

    const untrusted = await start();
    expect((await postForm(untrusted, { email: 'q@example.com' }, forwarded)).statusCode).toBe(303);
    expect(await attributionOf(untrusted, 'q@example.com')).toEqual(NO_ATTRIBUTION);
  });

  it('cuts over-long values, removes control characters, drops non-strings and non-http(s) referrers', async () => {
    const t = await start();
    const res = await postJson(t, {
      email: 'messy@example.com',
      utm_source: `  ${'s'.repeat(MAX_UTM_LENGTH + 100)}  `,
      utm_medium: 'e\u0000m\u0007a\u001bi\u202el\n',
      utm_campaign: 42,
      utm_term: ['a', 'b'],
      utm_content: { nested: 'x' },
      referrer: 'javascript:alert(document.cookie)',
      landing_path: '/ok/path?secret=1#frag',
    });
    expect(res.statusCode).toBe(201);
    expect(await attributionOf(t, 'messy@example.com')).toEqual({
      ...NO_ATTRIBUTION,
      utm_source: 's'.repeat(MAX_UTM_LENGTH),
      utm_medium: 'email',
      landing_path: '/ok/path',
      source: 's'.repeat(MAX_UTM_LENGTH),
    });

    const data = await postJson(t, { email: 'data@example.com', utm_source: true, referrer: 'data:text/html;base64,PHNjcmlwdD4=', landing_path: '//evil.example/' });
    expect(data.statusCode).toBe(201);
    expect(await attributionOf(t, 'data@example.com')).toEqual(NO_ATTRIBUTION);
  });

  it('a repeated form field (an array) is dropped, not stored and not failing', async () => {
    const t = await start();
    const res = await postForm(t, { email: 'twice@example.com', utm_source: ['a', 'b'], utm_medium: 'cpc' }, { referer: `${OWN}/?utm_source=ref` });
    expect(res.statusCode).toBe(303);
    expect(await attributionOf(t, 'twice@example.com')).toEqual({ ...NO_ATTRIBUTION, utm_medium: 'cpc' });
  });

  it('bad attribution never fails a signup, with JSON or a form', async () => {
    const t = await start();
    const garbage = {
      utm_source: null,
      utm_medium: { $gt: '' },
      utm_campaign: [[[]]],
      utm_term: 1e308,
      utm_content: '\u0000'.repeat(50),
      referrer: `https://${'x'.repeat(300)}.example`,
      landing_path: 'javascript:void(0)',
    };
    const json = await postJson(t, { email: 'garbage@example.com', ...garbage });
    expect(json.statusCode).toBe(201);
    expect(json.json()).toEqual({ status: 'joined' });
    expect(await attributionOf(t, 'garbage@example.com')).toEqual(NO_ATTRIBUTION);

    const form = await postForm(
      t,
      { email: 'garbage-form@example.com', utm_source: '\u0001\u0002', referrer: 'data:,x', landing_path: '/\u0000' },
      { referer: '\u00ff\u00fe not a url' },
    );
    expect(form.statusCode).toBe(303);
    expect(await attributionOf(t, 'garbage-form@example.com')).toEqual(NO_ATTRIBUTION);
  });

  it('keeps the body limit small: a signup with every field at its longest fits, a huge one is refused', async () => {
    const t = await start();
    const longest = {
      email: 'long@example.com',
      ...Object.fromEntries(['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'].map((f) => [f, '😀'.repeat(MAX_UTM_LENGTH)])),
      referrer: `https://${'r'.repeat(180)}.example`,
      landing_path: '/' + 'p'.repeat(MAX_LANDING_PATH_LENGTH - 1),
    };
    expect(Buffer.byteLength(JSON.stringify(longest))).toBeLessThan(SIGNUP_BODY_LIMIT);
    expect((await postJson(t, longest)).statusCode).toBe(201);
    expect((await attributionOf(t, 'long@example.com')).utm_content).toBe('😀'.repeat(MAX_UTM_LENGTH));
    const huge = await postJson(t, { email: 'huge@example.com', utm_term: 'x'.repeat(SIGNUP_BODY_LIMIT) });
    expect(huge.statusCode).toBe(413);
    expect(await findWaitlistEntryByEmail(t.app.database.db, 'huge@example.com')).toBeUndefined();
  });

  it('the group commit stores each signup\'s own attribution (several at once in one batch)', async () => {
    const sizes: number[] = [];
    const waiting: Array<() => void> = [];
    let arrived: (() => void) | undefined;
    let hold = true;
    const counter = countingGeolocator();
    const t = await start(
      {},
      {
        geolocator: counter.geolocator,
        signupBatch: {
          concurrency: 1,
          beforeCommit: async (size) => {
            sizes.push(size);
            if (!hold) return;
            hold = false;
            const held = new Promise<void>((resolve) => waiting.push(resolve));
            arrived?.();
            await held;
          },
        },
      },
    );
    // The first signup's commit is held, so the next ones queue up and are written together.
    const first = postJson(t, { email: 'first@example.com', utm_source: 'first' });
    await new Promise<void>((resolve) => (waiting.length > 0 ? resolve() : (arrived = resolve)));
    const bodies = [
      { email: 'b1@example.com', utm_source: 'Google', utm_medium: 'cpc', utm_campaign: 'c1', landing_path: '/' },
      { email: 'b2@example.com', referrer: 'https://www.hn.example/item?id=1', landing_path: '/thanks' },
      { email: 'b3@example.com' },
      // A lone surrogate half in a value: cleaned, so it cannot fail the batch's JSON on PostgreSQL.
      { email: 'b4@example.com', utm_source: 'half\ud800', utm_term: 'ok\udc00' },
      { email: 'b5@example.com', utm_campaign: 'x'.repeat(MAX_UTM_LENGTH + 1), referrer: 'data:,nope' },
    ];
    const answers = bodies.map((body) => postJson(t, body));
    const form = postForm(t, { email: 'b6@example.com' }, { referer: `${OWN}/?utm_source=Form&utm_campaign=nojs` });
    await counter.reached(1 + bodies.length + 1);
    for (const resolve of waiting.splice(0)) resolve();

    expect((await first).statusCode).toBe(201);
    expect((await Promise.all(answers)).map((r) => r.statusCode)).toEqual([201, 201, 201, 201, 201]);
    expect((await form).statusCode).toBe(303);
    expect(sizes).toEqual([1, bodies.length + 1]); // the held one, then all the others in one transaction

    expect(await attributionOf(t, 'first@example.com')).toEqual({ ...NO_ATTRIBUTION, utm_source: 'first', source: 'first' });
    expect(await attributionOf(t, 'b1@example.com')).toEqual({ ...NO_ATTRIBUTION, utm_source: 'Google', utm_medium: 'cpc', utm_campaign: 'c1', landing_path: '/', source: 'google' });
    expect(await attributionOf(t, 'b2@example.com')).toEqual({ ...NO_ATTRIBUTION, referrer: 'https://www.hn.example', landing_path: '/thanks', source: 'hn.example' });
    expect(await attributionOf(t, 'b3@example.com')).toEqual(NO_ATTRIBUTION);
    expect(await attributionOf(t, 'b4@example.com')).toEqual({ ...NO_ATTRIBUTION, utm_source: 'half', utm_term: 'ok', source: 'half' });
    expect(await attributionOf(t, 'b5@example.com')).toEqual({ ...NO_ATTRIBUTION, utm_campaign: 'x'.repeat(MAX_UTM_LENGTH) });
    expect(await attributionOf(t, 'b6@example.com')).toEqual({ ...NO_ATTRIBUTION, utm_source: 'Form', utm_campaign: 'nojs', landing_path: '/', source: 'form' });
  });

  it('a known address signing up again keeps the attribution of its first signup', async () => {
    const t = await start();
    const first = { ...NO_ATTRIBUTION, utm_source: 'First', utm_campaign: 'one', landing_path: '/', source: 'first' };
    expect((await postJson(t, { email: 'again@example.com', utm_source: 'First', utm_campaign: 'one', landing_path: '/' })).statusCode).toBe(201);

    // Already registered: refused, nothing changes.
    const repeat = await postJson(t, { email: 'Again@example.com', utm_source: 'Second', referrer: 'https://second.example', landing_path: '/two' });
    expect(repeat.statusCode).toBe(409);
    expect(await attributionOf(t, 'again@example.com')).toEqual(first);
    const repeatForm = await postForm(t, { email: 'again@example.com' }, { referer: `${OWN}/three?utm_source=Third` });
    expect(repeatForm.statusCode).toBe(409);
    expect(await attributionOf(t, 'again@example.com')).toEqual(first);

    // Unsubscribed, then signing up again: answered as a new signup, held unsubscribed (issue 28,
    // consent/restore-hold.test.ts), the first touch kept.
    await t.app.database.db
      .updateTable('waitlist')
      .set({ status: 'unsubscribed', unsubscribed_at: new Date().toISOString() })
      .where('email', '=', 'again@example.com')
      .execute();
    const back = await postJson(t, { email: 'again@example.com', utm_source: 'Comeback', landing_path: '/back' });
    expect(back.statusCode).toBe(201);
    const entry = await findWaitlistEntryByEmail(t.app.database.db, 'again@example.com');
    expect(entry).toMatchObject({ status: 'unsubscribed' });
    expect(await attributionOf(t, 'again@example.com')).toEqual(first);
  });

  it('sends Referrer-Policy strict-origin-when-cross-origin, so the no-JavaScript form posts its full same-origin URL', async () => {
    const t = await start();
    const page = await t.app.inject({ method: 'GET', url: '/?utm_source=x', headers: { host: HOST } });
    expect(page.headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
    const signup = await postForm(t, { email: 'policy@example.com' }, { referer: `${OWN}/?utm_source=x` });
    expect(signup.headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
  });
});
