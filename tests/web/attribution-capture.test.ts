import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_UTM_LENGTH } from '../../src/shared/waitlist/attribution.js';
import { findWaitlistEntryByEmail } from '../../src/server/db/waitlist-entries.js';
import {
  ATTRIBUTION_STORAGE_KEY,
  attributionOfPage,
  firstTouch,
  parseStoredTouch,
  type PageArrival,
} from '../../src/web/waitlist/attribution-capture.js';
import { submitSignup } from '../../src/web/waitlist/submit-signup.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * The landing form's first-touch capture (attribution-capture.ts). There is no DOM here (Vitest runs
 * in Node), so the capture is a pure function of the page (search, referrer, path, own origin) and
 * what the tab stored, tested directly; the browser glue is run against a minimal window and
 * sessionStorage; and the signup it sends goes through the real server.
 */

const OWN = 'https://site.example';
const page = (p: Partial<PageArrival>): PageArrival => ({ search: '', referrer: '', pathname: '/', ownOrigin: OWN, ...p });

describe('attributionOfPage', () => {
  it('takes the UTM parameters, the referrer\'s origin and the path', () => {
    expect(
      attributionOfPage(
        page({
          search: '?utm_source=Newsletter&utm_medium=email&utm_campaign=launch&utm_term=private%20markets&utm_content=cta&gclid=x',
          referrer: 'https://www.news.example/story/1?id=2',
          pathname: '/spring',
        }),
      ),
    ).toEqual({
      utm_source: 'Newsletter',
      utm_medium: 'email',
      utm_campaign: 'launch',
      utm_term: 'private markets',
      utm_content: 'cta',
      referrer: 'https://www.news.example',
      landing_path: '/spring',
    });
  });

  it('is only the landing path for a direct visit, and our own pages are not a referrer', () => {
    expect(attributionOfPage(page({}))).toEqual({ landing_path: '/' });
    expect(attributionOfPage(page({ referrer: `${OWN}/thanks`, pathname: '/' }))).toEqual({ landing_path: '/' });
  });

  it('cleans what it sends with the server\'s rules: cut, control characters removed, bad values left out', () => {
    const touch = attributionOfPage(
      page({
        search: `?utm_source=${'s'.repeat(MAX_UTM_LENGTH + 20)}&utm_medium=%00e%0Am&utm_campaign=%20%20&utm_term=`,
        referrer: 'android-app://com.example.app/',
      }),
    );
    expect(touch).toEqual({ utm_source: 's'.repeat(MAX_UTM_LENGTH), utm_medium: 'em', landing_path: '/' });
  });
});

describe('firstTouch', () => {
  it('captures and stores the arrival page when the tab has nothing stored', () => {
    const arrival = page({ search: '?utm_source=ads', referrer: 'https://search.example/', pathname: '/' });
    const { touch, store } = firstTouch(arrival, null);
    expect(touch).toEqual({ utm_source: 'ads', referrer: 'https://search.example', landing_path: '/' });
    expect(parseStoredTouch(store)).toEqual(touch);
  });

  it('keeps the stored first touch on a later page of the visit', () => {
    const first = firstTouch(page({ search: '?utm_campaign=spring', referrer: 'https://news.example/', pathname: '/' }), null);
    const later = firstTouch(page({ referrer: `${OWN}/`, pathname: '/thanks' }), first.store);
    expect(later).toEqual({ touch: { utm_campaign: 'spring', referrer: 'https://news.example', landing_path: '/' }, store: null });
  });

  it('captures again when what is stored is not a touch (another script\'s value, a hand edit)', () => {
    for (const stored of ['not json', '[1,2]', 'null', '"x"']) {
      expect(firstTouch(page({ pathname: '/x' }), stored).touch).toEqual({ landing_path: '/x' });
    }
    // Only the known fields, and only text, are read back.
    expect(parseStoredTouch(JSON.stringify({ utm_source: 'a', utm_medium: 3, email: 'x@example.com', landing_path: '/' }))).toEqual({ utm_source: 'a', landing_path: '/' });
  });
});

describe('in the browser (module start-up)', () => {
  const saved = { window: (globalThis as { window?: unknown }).window, document: (globalThis as { document?: unknown }).document };
  afterEach(() => {
    (globalThis as { window?: unknown }).window = saved.window;
    (globalThis as { document?: unknown }).document = saved.document;
    vi.resetModules();
  });

  function memoryStorage(): Storage & { data: Map<string, string> } {
    const data = new Map<string, string>();
    return {
      data,
      get length() {
        return data.size;
      },
      clear: () => data.clear(),
      getItem: (k: string) => data.get(k) ?? null,
      key: (i: number) => [...data.keys()][i] ?? null,
      removeItem: (k: string) => void data.delete(k),
      setItem: (k: string, v: string) => void data.set(k, v),
    };
  }

  function blockedStorage(): Storage {
    const blocked = () => {
      throw new DOMException('The operation is insecure.', 'SecurityError');
    };
    return { length: 0, clear: blocked, getItem: blocked, key: blocked, removeItem: blocked, setItem: blocked };
  }

  /** Loads the module afresh in a "page" (it captures on import), as the app does on each page load. */
  async function loadOn(url: string, referrer: string, sessionStorage: Storage) {
    const location = new URL(url);
    (globalThis as { window?: unknown }).window = {
      location: { search: location.search, pathname: location.pathname, origin: location.origin },
      get sessionStorage() {
        return sessionStorage;
      },
    };
    (globalThis as { document?: unknown }).document = { referrer };
    vi.resetModules();
    return import('../../src/web/waitlist/attribution-capture.js');
  }

  it('captures on load and keeps the first touch across page loads of the tab', async () => {
    const storage = memoryStorage();
    const landing = await loadOn(`${OWN}/?utm_source=Twitter&utm_campaign=launch`, 'https://t.example/x', storage);
    expect(JSON.parse(storage.data.get(ATTRIBUTION_STORAGE_KEY)!)).toEqual({ utm_source: 'Twitter', utm_campaign: 'launch', referrer: 'https://t.example', landing_path: '/' });
    expect(landing.firstTouchAttribution()).toEqual({ utm_source: 'Twitter', utm_campaign: 'launch', referrer: 'https://t.example', landing_path: '/' });

    // A full page load inside the site: the referrer is ours, no UTM; the first touch stays.
    const inner = await loadOn(`${OWN}/thanks`, `${OWN}/?utm_source=Twitter`, storage);
    expect(inner.firstTouchAttribution()).toEqual({ utm_source: 'Twitter', utm_campaign: 'launch', referrer: 'https://t.example', landing_path: '/' });
  });

  it('still captures the page when sessionStorage is blocked', async () => {
    const module = await loadOn(`${OWN}/spring?utm_medium=cpc`, '', blockedStorage());
    expect(module.firstTouchAttribution()).toEqual({ utm_medium: 'cpc', landing_path: '/spring' });
  });

  it('is empty outside a browser (prerendering)', async () => {
    (globalThis as { window?: unknown }).window = undefined;
    vi.resetModules();
    const module = await import('../../src/web/waitlist/attribution-capture.js');
    expect(module.firstTouchAttribution()).toEqual({});
  });
});

describe('submitSignup sends the first touch with the address', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('the real server stores it with the entry', async () => {
    t = await createTestApp({ SIGNUP_RATE_LIMIT_MAX: '1000' });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    const base = `http://127.0.0.1:${address.port}`;
    const toServer: typeof fetch = (input, init) => fetch(new URL(String(input), base), init);

    const touch = firstTouch(page({ search: '?utm_source=Newsletter&utm_campaign=launch', referrer: 'https://www.news.example/a', pathname: '/' }), null).touch;
    expect(await submitSignup('ada@example.com', '', false, touch, toServer)).toEqual({ ok: true, pending: false });
    expect(await findWaitlistEntryByEmail(t.app.database.db, 'ada@example.com')).toMatchObject({
      utm_source: 'Newsletter',
      utm_campaign: 'launch',
      utm_medium: null,
      referrer: 'https://www.news.example',
      landing_path: '/',
      source: 'newsletter',
    });

    // Without a touch (the default) the signup is as before.
    expect(await submitSignup('bob@example.com', '', false, undefined, toServer)).toEqual({ ok: true, pending: false });
    expect(await findWaitlistEntryByEmail(t.app.database.db, 'bob@example.com')).toMatchObject({ source: null, landing_path: null });
  });
});
