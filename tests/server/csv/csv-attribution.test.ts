import { describe, expect, it } from 'vitest';
import { CSV_BOM } from '../../../src/shared/csv.js';
import { parseWaitlistCsv } from '../../../src/server/csv/read-waitlist.js';
import { ATTRIBUTION_CSV_COLUMNS, waitlistCsvChunks, waitlistCsvHeader, waitlistCsvRecord } from '../../../src/shared/waitlist/csv.js';
import { formatDateJoined } from '../../../src/shared/waitlist/display.js';
import type { WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { waitlistEntry } from '../../support/entries.js';

/** The attribution columns of the CSV (issue 10): written only on request, read back whenever a file has them. */

const SPEC = 'Email,Date Joined,IP Address,Location';
const CONSENT = 'Status,Consent Version,Confirmed At,Confirmed IP,Invited At,Unsubscribed At';
const ATTRIBUTION = 'Source,UTM Source,UTM Medium,UTM Campaign,UTM Term,UTM Content,Referrer,Landing Path';

function entry(email: string, extra: Partial<WaitlistEntry> = {}): WaitlistEntry {
  return waitlistEntry({ email, created_at: '2026-11-22T06:04:00.000Z', ...extra });
}

const campaign = entry('campaign@example.com', {
  utm_source: 'Newsletter',
  utm_medium: 'email',
  utm_campaign: '+launch',
  utm_term: 'private, "markets"',
  utm_content: 'header',
  referrer: 'https://www.news.example',
  landing_path: '/',
  source: 'newsletter',
});
const referred = entry('referred@example.com', { referrer: 'https://www.hn.example', landing_path: '/thanks', source: 'hn.example' });
const direct = entry('direct@example.com');

async function csvOf(entries: WaitlistEntry[], options?: { consent?: boolean; attribution?: boolean }): Promise<string> {
  async function* batches() {
    yield entries;
  }
  let text = '';
  for await (const chunk of waitlistCsvChunks(batches(), 'UTC', undefined, options)) text += chunk;
  return text;
}

describe('the attribution CSV columns', () => {
  it('are declared once, with the headers the export writes', () => {
    expect(Object.values(ATTRIBUTION_CSV_COLUMNS).map((c) => c.header).join(',')).toBe(ATTRIBUTION);
  });

  it('are not written by default (the spec\'s four columns), nor with the consent columns alone', async () => {
    expect(waitlistCsvHeader()).toBe(`${SPEC}\r\n`);
    expect(waitlistCsvRecord(campaign, formatDateJoined(campaign.created_at, 'UTC'))).toBe('campaign@example.com,"Nov 22, 2026, 06:04 AM",N/A,Unknown\r\n');
    expect((await csvOf([campaign])).split('\r\n')[0]).toBe(`${CSV_BOM}${SPEC}`);
    expect((await csvOf([campaign], { consent: true })).split('\r\n')[0]).toBe(`${CSV_BOM}${SPEC},${CONSENT}`);
  });

  it('follow the spec\'s four with `attribution: true`: Source shows Direct when nothing was captured; cells are quoted and formula-safe', async () => {
    const lines = (await csvOf([campaign, referred, direct], { attribution: true })).split('\r\n');
    expect(lines[0]).toBe(`${CSV_BOM}${SPEC},${ATTRIBUTION}`);
    expect(lines[1]).toBe(
      'campaign@example.com,"Nov 22, 2026, 06:04 AM",N/A,Unknown,newsletter,Newsletter,email,\'+launch,"private, ""markets""",header,https://www.news.example,/',
    );
    expect(lines[2]).toBe('referred@example.com,"Nov 22, 2026, 06:04 AM",N/A,Unknown,hn.example,,,,,,https://www.hn.example,/thanks');
    expect(lines[3]).toBe('direct@example.com,"Nov 22, 2026, 06:04 AM",N/A,Unknown,Direct,,,,,,,');
    expect(lines[4]).toBe('');
  });

  it('come after the consent columns when both are asked for', async () => {
    const lines = (await csvOf([referred], { consent: true, attribution: true })).split('\r\n');
    expect(lines[0]).toBe(`${CSV_BOM}${SPEC},${CONSENT},${ATTRIBUTION}`);
    expect(lines[1]).toBe('referred@example.com,"Nov 22, 2026, 06:04 AM",N/A,Unknown,joined,,,N/A,,,hn.example,,,,,,https://www.hn.example,/thanks');
  });

  it('are read back on import (every field; Source derived again), with or without the consent columns', async () => {
    const entries = [campaign, referred, direct];
    for (const options of [{ attribution: true }, { consent: true, attribution: true }]) {
      const parsed = parseWaitlistCsv(await csvOf(entries, options));
      expect(parsed.bad).toEqual([]);
      expect(parsed.warnings).toEqual([]);
      expect(parsed.rows.map(({ line: _line, ...r }) => r)).toEqual(entries.map(({ id: _id, ...e }) => e));
    }
    // A file without them: no attribution.
    const spec = parseWaitlistCsv(await csvOf(entries));
    expect(spec.rows.map((r) => r.source)).toEqual([null, null, null]);
  });

  it('import cleans the cells like a signup (never a bad line) and derives Source from UTM Source and Referrer', () => {
    const parsed = parseWaitlistCsv(
      [
        'email,utm source,REFERRER,Landing Path,Source,UTM Campaign',
        `a@example.com,  Ads\u0007 ,https://www.partner.example/path?q=1,/spring?x=1,forged,${'c'.repeat(200)}`,
        'b@example.com,,javascript:alert(1),//evil.example,Direct,',
        'c@example.com,,http://blog.example:8080/post,not a path,anything,',
        'd@example.com,,,,Newsletter,',
      ].join('\n'),
      { now: new Date('2026-11-22T00:00:00.000Z') },
    );
    expect(parsed.bad).toEqual([]);
    expect(parsed.warnings).toEqual([expect.stringMatching(/^No "Date Joined" column/)]);
    const attribution = parsed.rows.map((r) => ({ email: r.email, utm_source: r.utm_source, utm_campaign: r.utm_campaign, referrer: r.referrer, landing_path: r.landing_path, source: r.source }));
    expect(attribution).toEqual([
      { email: 'a@example.com', utm_source: 'Ads', utm_campaign: 'c'.repeat(150), referrer: 'https://www.partner.example', landing_path: '/spring', source: 'ads' },
      { email: 'b@example.com', utm_source: null, utm_campaign: null, referrer: null, landing_path: null, source: null },
      { email: 'c@example.com', utm_source: null, utm_campaign: null, referrer: 'http://blog.example:8080', landing_path: null, source: 'blog.example' },
      // Source alone is not read back: nothing to derive it from.
      { email: 'd@example.com', utm_source: null, utm_campaign: null, referrer: null, landing_path: null, source: null },
    ]);
  });
});
