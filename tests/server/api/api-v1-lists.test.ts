import { afterEach, describe, expect, it } from 'vitest';
import { listAudit } from '../../../src/server/audit/audit-log.js';
import { createApiKey } from '../../../src/server/api/keys.js';
import { createList, updateList, type ListActor } from '../../../src/server/lists/manage.js';
import { amountBands } from '../../../src/shared/lists/contract.js';
import { SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { createTestApp, type TestApp, type TestAppOptions } from '../../support/test-app.js';
import { loadContract, type OpenApiContract } from './openapi-contract.js';

/**
 * POST /api/v1/signups naming an offering list (issue 32 point 2: "add a signup, with attribution
 * and, where a list is named, the list"; issue 31's lists): joined as the offering page's form joins
 * it, refused as that form refuses, on both databases. Every answer is checked against the OpenAPI
 * document the server publishes.
 */
const ACTOR: ListActor = { email: null, id: null, ip: null, by: 'cli' };
const CLI = { userId: null, email: null, ip: null };
const BANDS = [1000, 5000, 25000];
const SLUG = 'acme-robotics';

describe.each(TEST_DIALECTS)('API v1 signups to offering lists (%s)', (dialect: TestDialect) => {
  let t: TestApp | undefined;
  let contract: OpenApiContract;
  let token: string;

  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  async function setUp(options: TestAppOptions = {}): Promise<TestApp> {
    const app = await createTestApp({}, { dialect, ...options });
    t = app;
    contract = await loadContract(app.app);
    ({ token } = await createApiKey(app.app.database.db, { name: 'CRM', scopes: ['signups:write', 'entries:read'], rateLimit: 600 }, CLI));
    return app;
  }

  async function list(app: TestApp, slug: string, state: 'draft' | 'open' | 'closed') {
    const db = app.app.database.db;
    const made = await createList(db, ACTOR, { slug, name: `${slug} Inc.`, kind: 'testing-the-waters', bands: BANDS });
    if (state === 'draft') return made;
    const opened = await updateList(db, ACTOR, slug, { state: 'open' });
    return state === 'open' ? opened : updateList(db, ACTOR, slug, { state: 'closed' });
  }

  async function api(app: TestApp, body: Record<string, unknown>) {
    const res = await app.app.inject({ method: 'POST', url: '/api/v1/signups', headers: { authorization: `Bearer ${token}` }, payload: body });
    contract.check('POST', '/api/v1/signups', res);
    return res;
  }

  /** The offering page's signup (the public route, JSON), for comparison. */
  const pageSignup = (app: TestApp, body: Record<string, unknown>) =>
    app.app.inject({ method: 'POST', url: SIGNUP_PATH, headers: { 'content-type': 'application/json' }, payload: body });

  const rowOf = (app: TestApp, id: string) =>
    app.app.database.db.selectFrom('waitlist').select(['email', 'list_id', 'intended_amount', 'ip_address', 'utm_source', 'source', 'status']).where('id', '=', id).executeTakeFirstOrThrow();

  it('joins an open offering list with its attribution and intended amount; the address stays its own on the portal', async () => {
    const app = await setUp();
    const acme = await list(app, SLUG, 'open');
    const band = amountBands(BANDS)[1]!;
    const res = await api(app, { email: ' Ann@Example.com ', list: SLUG, intended_amount: band.key, ip_address: '203.0.113.9', utm_source: 'Partner' });
    expect(res.statusCode, res.body).toBe(201);
    const { id, status } = res.json<{ id: string; status: string }>();
    expect(status).toBe('joined');
    expect(await rowOf(app, id)).toEqual({
      email: 'ann@example.com',
      list_id: acme.id,
      intended_amount: band.key,
      ip_address: '203.0.113.9',
      utm_source: 'Partner',
      source: 'partner',
      status: 'joined',
    });

    // No amount, or an empty one: none stored.
    const none = await api(app, { email: 'bo@example.com', list: SLUG });
    expect(none.statusCode, none.body).toBe(201);
    expect((await rowOf(app, none.json<{ id: string }>().id)).intended_amount).toBeNull();
    const empty = await api(app, { email: 'cy@example.com', list: SLUG, intended_amount: '' });
    expect(empty.statusCode, empty.body).toBe(201);
    expect((await rowOf(app, empty.json<{ id: string }>().id)).intended_amount).toBeNull();

    // Known on this list: refused as on the page; the portal's list is another list.
    const again = await api(app, { email: 'ann@example.com', list: SLUG });
    expect({ status: again.statusCode, code: again.json().error.code }).toEqual({ status: 409, code: 'already_registered' });
    const portal = await api(app, { email: 'ann@example.com', list: 'portal' });
    expect(portal.statusCode, portal.body).toBe(201);
    expect(portal.json<{ id: string }>().id).not.toBe(id);
    expect((await rowOf(app, portal.json<{ id: string }>().id)).list_id).toBe(0);

    // The list's entries, read back through the API.
    const listed = await app.app.inject({ method: 'GET', url: `/api/v1/entries?list=${SLUG}`, headers: { authorization: `Bearer ${token}` } });
    contract.check('GET', '/api/v1/entries', listed);
    expect(listed.json<{ entries: Array<{ email: string }> }>().entries.map((e) => e.email).sort()).toEqual(['ann@example.com', 'bo@example.com', 'cy@example.com']);

    // Audited with the list, without the address.
    const audit = (await listAudit(app.app.database.db, 50)).filter((a) => a.action === 'api_signup');
    expect(audit.map((a) => a.detail.list).sort()).toEqual([SLUG, SLUG, SLUG, 'portal']);
    expect(audit.find((a) => a.detail.entry_id === id)?.detail).toMatchObject({ list: SLUG, status: 'joined', created: true });
    expect(JSON.stringify(audit)).not.toContain('ann@example.com');
  });

  it('refuses a draft, unknown or closed list and an amount that is not a band, with the offering page\'s answers, storing nothing', async () => {
    const app = await setUp();
    await list(app, 'draft-co', 'draft');
    await list(app, SLUG, 'open');
    await list(app, 'closed-co', 'closed');
    const cases = [
      [{ list: 'draft-co' }, 400, 'unknown_list'],
      [{ list: 'nobody-here' }, 400, 'unknown_list'],
      [{ list: 'Not A Slug!' }, 400, 'unknown_list'],
      [{ list: 'closed-co' }, 409, 'list_closed'],
      [{ list: 'closed-co', intended_amount: 'plenty' }, 409, 'list_closed'],
      [{ list: SLUG, intended_amount: '1-2' }, 400, 'amount_invalid'],
      [{ list: SLUG, intended_amount: '5000' }, 400, 'amount_invalid'],
    ] as const;
    for (const [fields, status, code] of cases) {
      const body = { email: 'dee@example.com', ...fields };
      const res = await api(app, body);
      expect({ status: res.statusCode, code: res.json().error.code }, JSON.stringify(body)).toEqual({ status, code });
      // The offering page's signup answers the same: one rule, in one place.
      const page = await pageSignup(app, body);
      expect({ status: page.statusCode, code: page.json().error.code }, `page: ${JSON.stringify(body)}`).toEqual({ status, code });
    }
    // The portal's list has no amount bands: an amount there is refused too.
    for (const body of [{ email: 'dee@example.com', intended_amount: '1000-5000' }, { email: 'dee@example.com', list: 'portal', intended_amount: '0-1000' }]) {
      const res = await api(app, body);
      expect({ status: res.statusCode, code: res.json().error.code }, JSON.stringify(body)).toEqual({ status: 400, code: 'amount_invalid' });
    }
    const stored = await app.app.database.db.selectFrom('waitlist').select('id').execute();
    expect(stored).toEqual([]);
  });

  it('asks for the consent checkbox on the portal\'s list only, as the offering page does', async () => {
    const app = await setUp({ consent: { version: 'terms-v2', checkbox: 'I agree to receive e-mail about the launch.' } });
    await list(app, SLUG, 'open');
    const portal = await api(app, { email: 'eve@example.com' });
    expect({ status: portal.statusCode, code: portal.json().error.code }).toEqual({ status: 400, code: 'consent_required' });
    expect((await api(app, { email: 'eve@example.com', consent: true })).statusCode).toBe(201);
    const offering = await api(app, { email: 'eve@example.com', list: SLUG });
    expect(offering.statusCode, offering.body).toBe(201);
    expect((await pageSignup(app, { email: 'fay@example.com', list: SLUG })).statusCode).toBe(201);
  });
});
