import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditEmailHash, listAudit } from '../../../src/server/audit/audit-log.js';
import { CompiledQuery, sql } from 'kysely';
import { matching } from '../../../src/server/db/waitlist-filter.js';
import { ID_CHUNK_SIZE } from '../../../src/server/db/waitlist-keyset.js';
import {
  ADMIN_DELETE_MATCHING_PATH,
  ADMIN_EXPORT_PATH,
  ADMIN_INSIGHTS_PATH,
  ADMIN_INVITE_PATH,
  ADMIN_MAX_IDS,
  ADMIN_WAITLIST_PATH,
  INVALID_FILTER_CODE,
  type WaitlistPage,
} from '../../../src/shared/admin/waitlist-api.js';
import {
  entryMatchesFilter,
  filterToSearchParams,
  MAX_SEARCH_LENGTH,
  NONE_VALUE,
  type WaitlistFilter,
} from '../../../src/shared/admin/waitlist-filter.js';
import { readCsvRecords } from '../../../src/server/csv/read-records.js';
import type { WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { waitlistEntry } from '../../support/entries.js';
import { createAdminTestApp, TEST_ADMIN as ADMIN } from '../../support/admin-app.js';
import type { TestApp } from '../../support/test-app.js';

/**
 * The admin's search and filters on the server (issue 10; contracts: src/shared/admin/waitlist-filter.ts
 * and waitlist-api.ts): every filter, alone and combined, on the list, its counts, select-all delete
 * and export, against known data on both databases, through the real app and a real sign-in.
 */

let t: TestApp;
let token: string;

function call(method: 'GET' | 'POST', url: string, body?: unknown, auth: string | null = `Bearer ${token}`) {
  return t.app.inject({
    method,
    url,
    headers: auth === null ? {} : { authorization: auth },
    ...(body === undefined ? {} : { payload: body as object }),
  });
}

let seq = 0;
function entry(createdAt: string, over: Partial<WaitlistEntry> = {}): WaitlistEntry {
  seq++;
  return waitlistEntry({ email: `person${seq}@example.net`, created_at: createdAt, ...over });
}

async function insert(rows: WaitlistEntry[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 1000) await t.app.database.db.insertInto('waitlist').values(rows.slice(i, i + 1000)).execute();
}

async function storedIds(): Promise<Set<string>> {
  return new Set((await t.app.database.db.selectFrom('waitlist').select('id').execute()).map((r) => r.id));
}

/** The records of a CSV download (BOM checked and dropped), as lists of cells. */
function csv(body: string): string[][] {
  expect(body.startsWith('\uFEFF')).toBe(true);
  return [...readCsvRecords(body.slice(1))].map((r) => r.fields).filter((f) => !(f.length === 1 && f[0] === ''));
}

function newestFirst(a: WaitlistEntry, b: WaitlistEntry): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

const query = (filter: WaitlistFilter, extra: Record<string, string> = {}) => {
  const params = filterToSearchParams(filter);
  for (const [k, v] of Object.entries(extra)) params.set(k, v);
  const text = params.toString();
  return text ? `?${text}` : '';
};

/** Every page of the filtered list, and the pages themselves. */
async function listAll(filter: WaitlistFilter, limit = 1000): Promise<{ ids: string[]; pages: WaitlistPage[] }> {
  const pages: WaitlistPage[] = [];
  let cursor: string | null = null;
  do {
    const res = await call('GET', `${ADMIN_WAITLIST_PATH}${query(filter, { limit: String(limit), ...(cursor ? { cursor } : {}) })}`);
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json<WaitlistPage>();
    pages.push(page);
    cursor = page.nextCursor;
  } while (cursor);
  return { ids: pages.flatMap((p) => p.entries.map((e) => e.id)), pages };
}

/** The fixture: each row is there to be matched, or not, by a filter below. */
function fixture() {
  const r = {
    // Days and their UTC boundaries.
    beforeFrom: entry('2026-02-28T23:59:59.999Z', { email: 'late.feb@example.com', country: 'Germany', source: 'google', utm_source: 'google', utm_campaign: 'spring' }),
    fromStart: entry('2026-03-01T00:00:00.000Z', { email: 'alice@example.com', country: 'Germany', source: 'google', utm_source: 'google', utm_campaign: 'spring' }),
    middle: entry('2026-03-01T12:00:00.000Z', { email: 'Bob.Smith@Example.COM', country: 'France', source: 'news.example', referrer: 'https://news.example', status: 'confirmed', confirmed_at: '2026-03-01T13:00:00.000Z' }),
    toEnd: entry('2026-03-02T23:59:59.999Z', { email: 'carol_x@test.org', country: null, source: 'google', utm_source: 'google', utm_campaign: 'summer', status: 'pending' }),
    afterTo: entry('2026-03-03T00:00:00.000Z', { email: 'carolax@test.org', country: 'France', source: null, utm_campaign: null, status: 'unsubscribed', unsubscribed_at: '2026-03-04T00:00:00.000Z' }),
    // LIKE's wildcards and escape character, taken literally.
    percent: entry('2026-03-04T08:00:00.000Z', { email: '100%real@test.org', country: 'Spain' }),
    percentLookalike: entry('2026-03-04T09:00:00.000Z', { email: '100xreal@test.org', country: 'Spain' }),
    backslash: entry('2026-03-04T10:00:00.000Z', { email: 'back\\slash@test.org', country: 'Spain', status: 'invited', invited_at: '2026-03-05T00:00:00.000Z' }),
    backslashLookalike: entry('2026-03-04T11:00:00.000Z', { email: 'backslash@test.org', country: 'Spain' }),
    // Domains: only an address at exactly example.com is "@example.com".
    subdomain: entry('2026-03-05T00:00:00.000Z', { email: 'dave@sub.example.com', country: 'Germany', source: 'twitter', utm_source: 'twitter', utm_campaign: 'spring' }),
    lookalikeDomain: entry('2026-03-05T01:00:00.000Z', { email: 'eve@notexample.com', country: 'Germany', source: 'twitter', utm_source: 'twitter' }),
    suffixDomain: entry('2026-03-05T02:00:00.000Z', { email: 'frank@example.com.evil.org', country: 'Germany' }),
  };
  return r;
}

describe.each(TEST_DIALECTS)('admin search and filters (%s)', (dialect: TestDialect) => {
  beforeEach(async () => {
    ({ t, token } = await createAdminTestApp({}, { dialect }));
  });
  afterEach(async () => {
    await t?.close();
  });

  describe('GET /api/admin/waitlist with a filter', () => {
    it('matches each filter alone and in combination exactly as the shared rule says', async () => {
      const r = fixture();
      const rows = Object.values(r);
      await insert(rows);
      const filters: WaitlistFilter[] = [
        {},
        { q: 'example' },
        { q: 'EXAMPLE.com' },
        { q: '@example.com' },
        { q: '@EXAMPLE.COM' },
        { q: '@test.org' },
        { q: 'carol_x' },
        { q: '100%' },
        { q: 'k\\s' },
        { q: 'nobody-has-this' },
        { from: '2026-03-01' },
        { to: '2026-03-02' },
        { from: '2026-03-01', to: '2026-03-02' },
        { from: '2026-03-03', to: '2026-03-03' },
        { country: 'Germany' },
        { country: NONE_VALUE },
        { country: 'Atlantis' },
        { source: 'google' },
        { source: NONE_VALUE },
        { campaign: 'spring' },
        { campaign: NONE_VALUE },
        { status: 'joined' },
        { status: 'pending' },
        { status: 'unsubscribed' },
        { country: 'Germany', source: 'twitter' },
        { country: 'Germany', campaign: 'spring', from: '2026-03-01' },
        { q: '@example.com', country: 'Germany', to: '2026-03-01' },
        { q: 'test.org', status: 'joined', country: 'Spain' },
        { source: 'google', campaign: NONE_VALUE },
        { q: 'o', from: '2026-03-01', to: '2026-03-04', country: NONE_VALUE, source: 'google', campaign: 'summer', status: 'pending' },
      ];
      for (const filter of filters) {
        const expected = rows.filter((e) => entryMatchesFilter(e, filter)).sort(newestFirst);
        const { ids, pages } = await listAll(filter, 5);
        expect(ids, JSON.stringify(filter)).toEqual(expected.map((e) => e.id));
        expect(pages[0]!.total, JSON.stringify(filter)).toBe(rows.length);
        expect(pages[0]!.matching, JSON.stringify(filter)).toBe(expected.length);
      }
    });

    it('searches addresses case-insensitively: contains, or the exact domain after @', async () => {
      const r = fixture();
      await insert(Object.values(r));
      const ids = async (filter: WaitlistFilter) => new Set((await listAll(filter)).ids);
      expect(await ids({ q: '@example.com' })).toEqual(new Set([r.beforeFrom.id, r.fromStart.id, r.middle.id]));
      expect(await ids({ q: '@Example.Com' })).toEqual(new Set([r.beforeFrom.id, r.fromStart.id, r.middle.id]));
      expect(await ids({ q: 'bob.smith' })).toEqual(new Set([r.middle.id]));
      expect(await ids({ q: 'example.com' })).toEqual(
        new Set([r.beforeFrom.id, r.fromStart.id, r.middle.id, r.subdomain.id, r.lookalikeDomain.id, r.suffixDomain.id]),
      );
      // Surrounding blanks are not part of the search.
      expect(await ids({ q: '  bob.smith ' })).toEqual(new Set([r.middle.id]));
    });

    it('takes %, _ and \\ in a search literally', async () => {
      const r = fixture();
      await insert(Object.values(r));
      const ids = async (q: string) => (await listAll({ q })).ids;
      expect(await ids('carol_x')).toEqual([r.toEnd.id]);
      expect(await ids('100%r')).toEqual([r.percent.id]);
      expect(await ids('%')).toEqual([r.percent.id]);
      expect(await ids('_')).toEqual([r.toEnd.id]);
      expect(await ids('k\\s')).toEqual([r.backslash.id]);
      expect(await ids('\\')).toEqual([r.backslash.id]);
    });

    it('reads a domain search as the text after the last @, from the domain index', async () => {
      // Addresses no signup would pass, as an import or an adopted database may hold them.
      const rows = [
        entry('2026-03-01T00:00:00.000Z', { email: 'a@ex_ample.com' }),
        entry('2026-03-01T00:00:01.000Z', { email: 'b@exxample.com' }),
        entry('2026-03-01T00:00:02.000Z', { email: '"x@y"@example.org' }),
        entry('2026-03-01T00:00:03.000Z', { email: 'no-at-sign.example.org' }),
        entry('2026-03-01T00:00:04.000Z', { email: 'C@Example.ORG' }),
        entry('2026-03-01T00:00:05.000Z', { email: 'd@sub.example.org' }),
        entry('2026-03-01T00:00:06.000Z', { email: '@example.org' }),
        entry('2026-03-01T00:00:07.000Z', { email: 'e@' }),
      ];
      await insert(rows);
      const searches = ['@ex_ample.com', '@example.org', '@EXAMPLE.org', '@y"@example.org', '@no-at-sign.example.org', '@sub.example.org', '@org', '@'];
      for (const q of searches) {
        const expected = rows.filter((e) => entryMatchesFilter(e, { q })).sort(newestFirst);
        const { ids, pages } = await listAll({ q }, 2);
        expect(ids, q).toEqual(expected.map((e) => e.id));
        expect(pages[0]!.matching, q).toBe(expected.length);
      }
      expect((await listAll({ q: '@example.org' })).ids).toHaveLength(3);

      // The count and the first page read the index: the query writes its expression exactly.
      const { db } = t.app.database;
      const count = db.selectFrom('waitlist').select((eb) => eb.fn.countAll().as('n')).where(matching(db, { q: '@example.org' }, { search: 'inline' }));
      const page = db.selectFrom('waitlist').select('id').where(matching(db, { q: '@example.org' })).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(2);
      for (const compiled of [count.compile(), page.compile()]) {
        const plan = await db.connection().execute(async (conn) => {
          if (dialect === 'sqlite') {
            const result = await conn.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${compiled.sql}`, [...compiled.parameters]));
            return result.rows.map((r) => r.detail).join('\n');
          }
          // A table this small is cheaper to read whole: the planner is told not to, so only an index it can use shows.
          await sql`SET enable_seqscan = off`.execute(conn);
          try {
            const result = await conn.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`EXPLAIN ${compiled.sql}`, [...compiled.parameters]));
            return result.rows.map((r) => r['QUERY PLAN']).join('\n');
          } finally {
            await sql`RESET enable_seqscan`.execute(conn);
          }
        });
        expect(plan, compiled.sql).toContain('waitlist_email_domain_idx');
      }
    });

    it('reads from and to as whole UTC days, both inclusive', async () => {
      const r = fixture();
      await insert(Object.values(r));
      const ids = async (filter: WaitlistFilter) => (await listAll(filter)).ids;
      expect(await ids({ from: '2026-03-01', to: '2026-03-02' })).toEqual([r.toEnd.id, r.middle.id, r.fromStart.id]);
      expect(await ids({ to: '2026-02-28' })).toEqual([r.beforeFrom.id]);
      expect(await ids({ from: '2026-03-03', to: '2026-03-03' })).toEqual([r.afterTo.id]);
      expect(await ids({ from: '2026-03-06' })).toEqual([]);
      // The last representable day is a valid end.
      expect((await ids({ from: '2026-03-05', to: '9999-12-31' })).length).toBe(3);
    });

    it('selects entries without a country, source or campaign with NONE_VALUE', async () => {
      const r = fixture();
      await insert(Object.values(r));
      const ids = async (filter: WaitlistFilter) => new Set((await listAll(filter)).ids);
      expect(await ids({ country: NONE_VALUE })).toEqual(new Set([r.toEnd.id]));
      expect(await ids({ source: NONE_VALUE })).toEqual(
        new Set([r.afterTo.id, r.percent.id, r.percentLookalike.id, r.backslash.id, r.backslashLookalike.id, r.suffixDomain.id]),
      );
      expect(await ids({ campaign: NONE_VALUE, country: 'Germany' })).toEqual(new Set([r.lookalikeDomain.id, r.suffixDomain.id]));
    });

    it('counts on the first page only, and says when it counted', async () => {
      const rows = Array.from({ length: 30 }, (_, i) =>
        entry(new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(), { country: i % 3 === 0 ? 'Germany' : 'France' }),
      );
      await insert(rows);
      const before = Date.now();
      const { pages } = await listAll({ country: 'Germany' }, 4);
      expect(pages.map((p) => p.entries.length)).toEqual([4, 4, 2]);
      expect(pages.map((p) => [p.total, p.matching])).toEqual([
        [30, 10],
        [null, null],
        [null, null],
      ]);
      for (const p of pages) {
        expect(p.asOf).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
        expect(Date.parse(p.asOf)).toBeGreaterThanOrEqual(before - 1000);
      }
      const unfiltered = (await call('GET', `${ADMIN_WAITLIST_PATH}?limit=1`)).json<WaitlistPage>();
      expect([unfiltered.total, unfiltered.matching]).toEqual([30, 30]);
    });

    it('pages through a filtered list with ties at the page boundaries, every match exactly once', async () => {
      const rows: WaitlistEntry[] = [];
      const base = Date.UTC(2026, 0, 1);
      for (let i = 0; i < 1500; i++) {
        // Groups of 7 share a timestamp; every third is in Germany, every fifth has a campaign.
        rows.push(
          entry(new Date(base + Math.floor(i / 7) * 1000).toISOString(), {
            country: i % 3 === 0 ? 'Germany' : 'France',
            utm_campaign: i % 5 === 0 ? 'launch' : null,
            email: `user${i}@${i % 2 ? 'odd' : 'even'}.example`,
          }),
        );
      }
      await insert([...rows].sort(() => Math.random() - 0.5));
      for (const filter of [{ country: 'Germany' }, { campaign: 'launch', q: '@even.example' }, { q: 'user1' }] as WaitlistFilter[]) {
        const expected = rows.filter((e) => entryMatchesFilter(e, filter)).sort(newestFirst);
        const { ids } = await listAll(filter, 37);
        expect(new Set(ids).size, JSON.stringify(filter)).toBe(ids.length);
        expect(ids, JSON.stringify(filter)).toEqual(expected.map((e) => e.id));
      }
    });
  });

  describe('invalid filters', () => {
    const badQueries: Array<[string, string]> = [
      ['a day that does not exist', 'from=2026-02-30'],
      ['a month that does not exist', 'to=2026-13-01'],
      ['a date in another format', 'from=01/03/2026'],
      ['from after to', 'from=2026-03-02&to=2026-03-01'],
      ['an unknown status', 'status=vip'],
      ['a search that is too long', `q=${'a'.repeat(MAX_SEARCH_LENGTH + 1)}`],
      ['a country that is too long', `country=${'x'.repeat(201)}`],
      ['a repeated parameter', 'country=Germany&country=France'],
      ['a NUL character', 'q=a%00b'],
    ];

    it.each(badQueries)('answers 400 invalid_filter for %s on the list and the panel', async (_name, q) => {
      for (const path of [ADMIN_WAITLIST_PATH, ADMIN_INSIGHTS_PATH]) {
        const res = await call('GET', `${path}?${q}`);
        expect(res.statusCode, `${path}?${q}`).toBe(400);
        expect(res.json()).toEqual({ error: { code: INVALID_FILTER_CODE, message: expect.stringMatching(/^Invalid filter: .+\.$/) } });
      }
    });

    it('names the problem in the message', async () => {
      const message = async (q: string) => (await call('GET', `${ADMIN_WAITLIST_PATH}?${q}`)).json().error.message as string;
      expect(await message('status=vip')).toContain('pending, joined, confirmed, invited, unsubscribed');
      expect(await message('from=2026-02-30')).toContain('YYYY-MM-DD');
      expect(await message('from=2026-03-02&to=2026-03-01')).toContain('start date must be on or before the end date');
    });

    it('ignores unknown query parameters and keeps empty ones as no filter', async () => {
      await insert([entry('2026-01-01T00:00:00.000Z', { country: 'Germany' })]);
      const res = await call('GET', `${ADMIN_WAITLIST_PATH}?country=&q=&nonsense=1&status=`);
      expect(res.statusCode).toBe(200);
      expect(res.json<WaitlistPage>()).toMatchObject({ total: 1, matching: 1 });
    });

    const badBodies: Array<[string, unknown, string]> = [
      ['a day that does not exist', { filter: { from: '2026-02-30' } }, INVALID_FILTER_CODE],
      ['an unknown status', { filter: { status: 'vip' } }, INVALID_FILTER_CODE],
      ['a country that is not text', { filter: { country: 42 } }, INVALID_FILTER_CODE],
      ['an until that is not an instant', { filter: { until: 'yesterday' } }, INVALID_FILTER_CODE],
      ['an until on a day that does not exist', { filter: { until: '2026-02-30T00:00:00.000Z' } }, INVALID_FILTER_CODE],
      ['an until at hour 25', { filter: { until: '2026-01-01T25:00:00Z' } }, INVALID_FILTER_CODE],
      ['a filter that is not an object', { filter: 'everything' }, INVALID_FILTER_CODE],
      ['a filter that is a list', { filter: [] }, INVALID_FILTER_CODE],
      ['no filter', {}, 'bad_request'],
      ['except without filter', { except: [randomUUID()] }, 'bad_request'],
      ['ids with filter', { ids: [randomUUID()], filter: {} }, 'bad_request'],
      ['a non-UUID in except', { filter: {}, except: ['1 OR 1=1'] }, 'bad_request'],
      ['except that is not a list', { filter: {}, except: 'abc' }, 'bad_request'],
      ['too many ids in except', { filter: {}, except: Array.from({ length: ADMIN_MAX_IDS + 1 }, () => '00000000-0000-4000-8000-000000000000') }, 'bad_request'],
    ];

    it.each(badBodies)('refuses a select-all with %s, and changes nothing', async (_name, body, code) => {
      const rows = [entry('2026-01-01T00:00:00.000Z', { status: 'joined' }), entry('2026-01-02T00:00:00.000Z')];
      await insert(rows);
      for (const path of [ADMIN_DELETE_MATCHING_PATH, ADMIN_EXPORT_PATH, ADMIN_INVITE_PATH]) {
        // The export takes no body as "everything": an empty body is a valid export.
        if (path === ADMIN_EXPORT_PATH && JSON.stringify(body) === '{}') continue;
        const res = await call('POST', path, body);
        expect(res.statusCode, `${path} ${JSON.stringify(body).slice(0, 80)}`).toBe(400);
        expect(res.json().error.code, path).toBe(code);
        expect(res.json().error.message).toEqual(expect.any(String));
      }
      expect(await storedIds()).toEqual(new Set(rows.map((r) => r.id)));
      const statuses = await t.app.database.db.selectFrom('waitlist').select('status').execute();
      expect(statuses.every((s) => s.status === 'joined')).toBe(true);
      expect((await listAudit(t.app.database.db, 10)).filter((a) => ['delete', 'export', 'invite'].includes(a.action))).toEqual([]);
    });
  });

  describe('POST /api/admin/waitlist/delete-matching', () => {
    it('deletes every match but the excepted ones and those after until, with audit records', async () => {
      const r = fixture();
      const lateGerman = entry('2026-03-09T00:00:00.000Z', { email: 'late@example.de', country: 'Germany' });
      await insert([...Object.values(r), lateGerman]);
      const filter: WaitlistFilter = { country: 'Germany', until: '2026-03-05T00:59:59.999Z' };
      const res = await call('POST', ADMIN_DELETE_MATCHING_PATH, { filter, except: [r.fromStart.id, randomUUID()] });
      expect(res.statusCode, res.body).toBe(200);
      // Germany up to until: beforeFrom, fromStart (excepted), subdomain; lookalikeDomain (01:00) and suffixDomain are after until.
      const gone = [r.subdomain, r.beforeFrom];
      expect(res.json()).toEqual({ deleted: gone.length });
      const left = await storedIds();
      for (const e of gone) expect(left.has(e.id)).toBe(false);
      expect(left.size).toBe(Object.values(r).length + 1 - gone.length);
      for (const e of [r.fromStart, r.lookalikeDomain, r.suffixDomain, lateGerman]) expect(left.has(e.id)).toBe(true);

      const audits = (await listAudit(t.app.database.db, 10)).filter((a) => a.action === 'delete');
      const part = audits.find((a) => a.detail.part === 1);
      const summary = audits.find((a) => a.detail.parts !== undefined);
      // Newest first, like a named delete's record.
      expect(part).toMatchObject({
        actorEmail: ADMIN.email,
        detail: {
          scope: 'matching',
          count: 2,
          ids: gone.map((e) => e.id),
          email_hashes: gone.map((e) => auditEmailHash(t.app.secretBox, e.email)),
        },
      });
      expect(summary).toMatchObject({ detail: { scope: 'matching', filter, except: 2, count: 2, parts: 1 } });
      expect(audits).toHaveLength(2);
      // The log keeps no copy of the erased addresses.
      for (const e of gone) expect(JSON.stringify(audits)).not.toContain(e.email);
    });

    it('deletes everything with an empty filter, and nothing when nothing matches', async () => {
      const rows = Array.from({ length: 5 }, (_, i) => entry(new Date(Date.UTC(2026, 0, 1) + i).toISOString()));
      await insert(rows);
      const none = await call('POST', ADMIN_DELETE_MATCHING_PATH, { filter: { q: 'nobody-has-this' } });
      expect(none.json()).toEqual({ deleted: 0 });
      expect((await storedIds()).size).toBe(5);
      const all = await call('POST', ADMIN_DELETE_MATCHING_PATH, { filter: {}, except: [] });
      expect(all.json()).toEqual({ deleted: 5 });
      expect((await storedIds()).size).toBe(0);
    });

    it(`splits the audit into records of at most ${ID_CHUNK_SIZE} ids`, async () => {
      // Row 0 does not match; rows 1-3 are excepted; the 12,000 others go.
      const rows = Array.from({ length: 12_004 }, (_, i) =>
        entry(new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 4) * 1000).toISOString(), { email: i === 0 ? 'keep@other.example' : `bulk${i}@bulk.example` }),
      );
      await insert(rows);
      const except = rows.slice(1, 4).map((r) => r.id);
      const res = await call('POST', ADMIN_DELETE_MATCHING_PATH, { filter: { q: '@bulk.example' }, except });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ deleted: 12_000 });
      expect(await storedIds()).toEqual(new Set(rows.slice(0, 4).map((r) => r.id)));

      const audits = (await listAudit(t.app.database.db, 20)).filter((a) => a.action === 'delete');
      const parts = audits.filter((a) => a.detail.part !== undefined);
      expect(parts.length).toBeGreaterThanOrEqual(3);
      for (const p of parts) {
        expect((p.detail.ids as string[]).length).toBeLessThanOrEqual(ID_CHUNK_SIZE);
        expect((p.detail.email_hashes as string[]).length).toBe((p.detail.ids as string[]).length);
      }
      const logged = parts.flatMap((p) => p.detail.ids as string[]);
      expect(new Set(logged)).toEqual(new Set(rows.slice(4).map((r) => r.id)));
      expect(logged).toHaveLength(12_000);
      expect(audits.find((a) => a.detail.parts !== undefined)).toMatchObject({ detail: { count: 12_000, except: 3, parts: parts.length } });
    });
  });

  describe('POST /api/admin/waitlist/export of a selection', () => {
    it('exports the matches but the excepted ones as waitlist_selected.csv, with attribution columns on request', async () => {
      const r = fixture();
      await insert(Object.values(r));
      const res = await call('POST', ADMIN_EXPORT_PATH, { filter: { source: 'google' }, except: [r.beforeFrom.id], attribution: true });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-disposition']).toBe('attachment; filename="waitlist_selected.csv"');
      const [header, ...records] = csv(res.body);
      expect(header!.slice(0, 4)).toEqual(['Email', 'Date Joined', 'IP Address', 'Location']);
      expect(header).toEqual(expect.arrayContaining(['Source', 'UTM Source', 'UTM Campaign', 'Referrer', 'Landing Path']));
      const col = (name: string) => header!.indexOf(name);
      expect(records.map((cells) => cells[0])).toEqual([r.toEnd.email, r.fromStart.email]);
      expect(records.map((cells) => cells[col('Source')])).toEqual(['google', 'google']);
      expect(records.map((cells) => cells[col('UTM Campaign')])).toEqual(['summer', 'spring']);
      expect(records.map((cells) => cells[col('Location')])).toEqual(['Unknown', 'Germany']);

      const [audit] = await listAudit(t.app.database.db, 1);
      expect(audit).toMatchObject({ action: 'export', detail: { count: 2, scope: 'selected', filter: { source: 'google' }, except: 1, attribution: true } });
    });

    it('writes the spec four columns without the flag, and honours until', async () => {
      const r = fixture();
      await insert(Object.values(r));
      const res = await call('POST', ADMIN_EXPORT_PATH, { filter: { country: 'Germany', until: '2026-03-01T00:00:00.000Z' } });
      expect(res.statusCode, res.body).toBe(200);
      const [header, ...records] = csv(res.body);
      expect(header).toEqual(['Email', 'Date Joined', 'IP Address', 'Location']);
      expect(records.map((cells) => cells[0])).toEqual([r.fromStart.email, r.beforeFrom.email]);
      expect(records.map((cells) => cells[1])).toEqual(['Mar 1, 2026, 12:00 AM', 'Feb 28, 2026, 11:59 PM']);
    });

    it('exports all entries with neither ids nor filter, as waitlist_all.csv', async () => {
      const r = fixture();
      await insert(Object.values(r));
      const res = await call('POST', ADMIN_EXPORT_PATH, { attribution: false });
      expect(res.headers['content-disposition']).toBe('attachment; filename="waitlist_all.csv"');
      expect(csv(res.body)).toHaveLength(Object.values(r).length + 1);
    });

    it('streams a filtered export across batches without losing or repeating rows', async () => {
      const rows = Array.from({ length: 11_000 }, (_, i) =>
        entry(new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 3) * 1000).toISOString(), { email: `e${i}@x.example`, status: i % 2 ? 'joined' : 'pending' }),
      );
      await insert(rows);
      const except = rows.filter((_, i) => i % 2 === 0 && i % 100 === 0).map((r) => r.id);
      const res = await call('POST', ADMIN_EXPORT_PATH, { filter: { status: 'pending' }, except });
      const emails = csv(res.body)
        .slice(1)
        .map((cells) => cells[0]);
      const skip = new Set(except);
      expect(emails).toEqual(rows.filter((r) => r.status === 'pending' && !skip.has(r.id)).sort(newestFirst).map((r) => r.email));
    });
  });

  it('never answers 5xx to hostile filter values', async () => {
    await insert(Object.values(fixture()));
    const values = [
      '\u0000',
      'a\u0000b',
      '\ud800',
      "' OR 1=1 --",
      '%',
      '%%%%',
      '\\',
      '@',
      '@%',
      '@\u0000',
      '😀',
      'x'.repeat(200),
      '(none)',
      ' ',
    ];
    for (const key of ['q', 'from', 'to', 'country', 'source', 'campaign', 'status'] as const) {
      for (const value of values) {
        const params = new URLSearchParams({ [key]: value }).toString();
        for (const path of [ADMIN_WAITLIST_PATH, ADMIN_INSIGHTS_PATH]) {
          const res = await call('GET', `${path}?${params}`);
          expect(res.statusCode, `${path}?${params}`).toBeLessThan(500);
        }
        const res = await call('POST', ADMIN_EXPORT_PATH, { filter: { [key]: value } });
        expect(res.statusCode, `export ${key}=${JSON.stringify(value)}`).toBeLessThan(500);
      }
    }
    for (const range of ['from=1970-01-01&to=9999-12-31', 'from=9999-12-01&to=9999-12-31', 'from=9999-12-31', 'to=1970-01-01', 'from=1970-01-01']) {
      for (const path of [ADMIN_WAITLIST_PATH, ADMIN_INSIGHTS_PATH]) {
        const res = await call('GET', `${path}?${range}`);
        expect(res.statusCode, `${path}?${range}`).toBe(200);
      }
    }
    for (const until of ['0000-01-01T00:00:00Z', '9999-12-31T23:59:59.999999Z', '2026-01-01T00:00:00.1234567Z', '2026-01-01T00:00:00+01:00', '\u0000']) {
      const res = await call('POST', ADMIN_DELETE_MATCHING_PATH, { filter: { q: 'nobody-has-this', until } });
      expect(res.statusCode, until).toBeLessThan(500);
    }
  });

  it('answers 401 without a token on every new route and changes nothing', async () => {
    const rows = [entry('2026-01-01T00:00:00.000Z')];
    await insert(rows);
    const cases: Array<['GET' | 'POST', string, unknown]> = [
      ['GET', `${ADMIN_WAITLIST_PATH}?country=Germany`, undefined],
      ['GET', `${ADMIN_INSIGHTS_PATH}?country=Germany`, undefined],
      ['GET', `${ADMIN_INSIGHTS_PATH}?status=nonsense`, undefined],
      ['POST', ADMIN_DELETE_MATCHING_PATH, { filter: {} }],
      ['POST', ADMIN_DELETE_MATCHING_PATH, { filter: { from: 'bad' } }],
      ['POST', ADMIN_EXPORT_PATH, { filter: {} }],
      ['POST', ADMIN_INVITE_PATH, { filter: {} }],
    ];
    for (const [method, url, body] of cases) {
      for (const auth of [null, 'Bearer not-a-jwt']) {
        const res = await call(method, url, body, auth);
        expect(res.statusCode, `${method} ${url} ${auth}`).toBe(401);
        expect(res.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
      }
    }
    expect(await storedIds()).toEqual(new Set([rows[0]!.id]));
  });
});
