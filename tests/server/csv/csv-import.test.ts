import { describe, expect, it } from 'vitest';
import { readCsvRecords } from '../../../src/server/csv/read-records.js';
import { CsvHeaderError, parseWaitlistCsv } from '../../../src/server/csv/read-waitlist.js';
import { CSV_BOM, csvRecord, removeFormulaQuote } from '../../../src/shared/csv.js';
import { parseDateJoined, parseIpAddress, parseLocation, waitlistCsvChunks } from '../../../src/shared/waitlist/csv.js';
import type { WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { NO_ATTRIBUTION } from '../../../src/shared/waitlist/attribution.js';
import { NO_CONSENT_RECORD } from '../../../src/shared/waitlist/entry.js';

const HEADER = 'Email,Date Joined,IP Address,Location';

function records(text: string) {
  return [...readCsvRecords(text)];
}

describe('readCsvRecords', () => {
  it('splits LF, CRLF and lone-CR records and numbers their lines', () => {
    expect(records('a,b\nc,d\r\ne,f\rg,h')).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['c', 'd'] },
      { line: 3, fields: ['e', 'f'] },
      { line: 4, fields: ['g', 'h'] },
    ]);
  });

  it('skips a BOM and ignores a final line break', () => {
    expect(records('\uFEFFa,b\r\n')).toEqual([{ line: 1, fields: ['a', 'b'] }]);
  });

  it('handles RFC 4180 quoting: commas, doubled quotes, line breaks inside quotes', () => {
    const text = 'x,"a, b","say ""hi""","two\r\nlines"\r\nnext,"",end,"three\nmore\nlines"\nlast,1,2,3\n';
    expect(records(text)).toEqual([
      { line: 1, fields: ['x', 'a, b', 'say "hi"', 'two\r\nlines'] },
      { line: 3, fields: ['next', '', 'end', 'three\nmore\nlines'] },
      { line: 6, fields: ['last', '1', '2', '3'] },
    ]);
  });

  it('keeps empty fields, including a trailing one', () => {
    expect(records(',a,\n,')).toEqual([
      { line: 1, fields: ['', 'a', ''] },
      { line: 2, fields: ['', ''] },
    ]);
  });

  it('flags an unterminated quote and text after a closing quote, keeping the start line', () => {
    const bad = records('a,"b"c,d\nok,1\nx,"never closed\nmore\n');
    expect(bad[0]).toMatchObject({ line: 1, fields: ['a', 'bc', 'd'], error: expect.stringMatching(/after a closing quote/) });
    expect(bad[1]).toEqual({ line: 2, fields: ['ok', '1'] });
    expect(bad[2]).toMatchObject({ line: 3, error: expect.stringMatching(/never closed/) });
    expect(bad).toHaveLength(3);
  });

  it('keeps a stray quote inside an unquoted field as text', () => {
    expect(records('a"b,c')).toEqual([{ line: 1, fields: ['a"b', 'c'] }]);
  });
});

describe('cells', () => {
  it('removes only the formula-injection quote', () => {
    expect(removeFormulaQuote("'=SUM(A1)")).toBe('=SUM(A1)');
    expect(removeFormulaQuote("'+1")).toBe('+1');
    expect(removeFormulaQuote("'-1")).toBe('-1');
    expect(removeFormulaQuote("'@x")).toBe('@x');
    expect(removeFormulaQuote("'\tx")).toBe('\tx');
    expect(removeFormulaQuote("'\rx")).toBe('\rx');
    expect(removeFormulaQuote("'quoted'")).toBe("'quoted'");
    expect(removeFormulaQuote("o'brien@example.com")).toBe("o'brien@example.com");
  });

  it('reads N/A and empty IP addresses as null', () => {
    expect(parseIpAddress('N/A')).toBeNull();
    expect(parseIpAddress('n/a')).toBeNull();
    expect(parseIpAddress('  ')).toBeNull();
    expect(parseIpAddress(' 203.0.113.9 ')).toBe('203.0.113.9');
    expect(parseIpAddress('2001:db8::1')).toBe('2001:db8::1');
  });

  it('splits locations: Unknown, 1, 2, 3 and 4+ parts', () => {
    const none = { city: null, region: null, country: null };
    expect(parseLocation('Unknown')).toEqual(none);
    expect(parseLocation('unknown')).toEqual(none);
    expect(parseLocation('')).toEqual(none);
    expect(parseLocation('Germany')).toEqual({ city: null, region: null, country: 'Germany' });
    expect(parseLocation('Berlin, Germany')).toEqual({ city: 'Berlin', region: null, country: 'Germany' });
    expect(parseLocation('São Paulo, State of São Paulo, Brazil')).toEqual({ city: 'São Paulo', region: 'State of São Paulo', country: 'Brazil' });
    expect(parseLocation('Washington, D.C., District of Columbia, United States')).toEqual({
      city: 'Washington',
      region: 'D.C., District of Columbia',
      country: 'United States',
    });
  });
});

describe('parseDateJoined', () => {
  it('reads the en-US export format in UTC by default', () => {
    expect(parseDateJoined('Nov 22, 2026, 06:04 AM')).toBe('2026-11-22T06:04:00.000Z');
    expect(parseDateJoined('Nov 22, 2026, 06:04 PM')).toBe('2026-11-22T18:04:00.000Z');
    expect(parseDateJoined('Jan 1, 2027, 12:00 AM')).toBe('2027-01-01T00:00:00.000Z');
    expect(parseDateJoined('Jan 1, 2027, 12:30 PM')).toBe('2027-01-01T12:30:00.000Z');
    // Newer ICU writes a narrow no-break space before AM/PM.
    expect(parseDateJoined('Sep 3, 2026, 7:05\u202FPM')).toBe('2026-09-03T19:05:00.000Z');
    expect(parseDateJoined('September 3, 2026 at 7:05 pm')).toBe('2026-09-03T19:05:00.000Z');
  });

  it('reads the en-US format in the given time zone, across DST', () => {
    // New York: UTC-5 in November, UTC-4 in July.
    expect(parseDateJoined('Nov 22, 2026, 06:04 AM', 'America/New_York')).toBe('2026-11-22T11:04:00.000Z');
    expect(parseDateJoined('Jul 4, 2026, 06:04 AM', 'America/New_York')).toBe('2026-07-04T10:04:00.000Z');
    expect(parseDateJoined('Nov 22, 2026, 06:04 AM', 'Asia/Kolkata')).toBe('2026-11-22T00:34:00.000Z');
    // Date line: the day changes.
    expect(parseDateJoined('Jan 1, 2027, 01:00 AM', 'Pacific/Auckland')).toBe('2026-12-31T12:00:00.000Z');
  });

  it('reads ISO-8601 with and without an offset', () => {
    expect(parseDateJoined('2026-11-22T06:04:05.123Z')).toBe('2026-11-22T06:04:05.123Z');
    expect(parseDateJoined('2026-11-22T06:04:05+01:00')).toBe('2026-11-22T05:04:05.000Z');
    expect(parseDateJoined('2026-11-22 06:04:05-0530')).toBe('2026-11-22T11:34:05.000Z');
    expect(parseDateJoined('2026-11-22T06:04')).toBe('2026-11-22T06:04:00.000Z');
    expect(parseDateJoined('2026-11-22T06:04:00', 'America/New_York')).toBe('2026-11-22T11:04:00.000Z');
    expect(parseDateJoined('2026-11-22T06:04:00.123456Z')).toBe('2026-11-22T06:04:00.123Z');
  });

  it('rejects what is not a date', () => {
    for (const v of ['', 'yesterday', 'Nov 31, 2026, 06:04 AM', 'Nov 22, 2026, 13:04 PM', 'Nov 22, 2026, 06:64 AM', 'Foo 22, 2026, 06:04 AM', '2026-02-30T00:00:00Z', '2026-11-22', '22/11/2026 06:04']) {
      expect(parseDateJoined(v), v).toBeNull();
    }
  });
});

describe('parseWaitlistCsv', () => {
  const NOW = new Date('2026-12-01T00:00:00.000Z');

  it('parses our own export, through the real writer, back to the same entries', async () => {
    const entries: WaitlistEntry[] = [
      { id: '1', email: '=cmd@example.com', created_at: '2026-11-22T06:04:59.000Z', ip_address: '203.0.113.9', country: 'Germany', city: 'Berlin', region: 'Land Berlin', ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION },
      { id: '2', email: '-minus@example.com', created_at: '2026-11-21T23:00:00.000Z', ip_address: null, country: null, city: null, region: null, ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION },
      { id: '3', email: "o'brien@example.com", created_at: '2026-11-20T12:00:00.000Z', ip_address: '2001:db8::1', country: 'France', city: 'Paris', region: null, ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION },
      { id: '4', email: '+plus@example.com', created_at: '2026-11-19T12:00:00.000Z', ip_address: null, country: 'Japan', city: null, region: null, ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION },
    ];
    async function* batches() {
      yield entries;
    }
    let text = '';
    for await (const chunk of waitlistCsvChunks(batches(), 'Europe/Berlin')) text += chunk;
    expect(text.startsWith(CSV_BOM)).toBe(true);
    expect(text).toContain("'=cmd@example.com");

    const parsed = parseWaitlistCsv(text, { timeZone: 'Europe/Berlin' });
    expect(parsed.bad).toEqual([]);
    expect(parsed.warnings).toEqual([]);
    expect(parsed.rows.map(({ line: _line, ...r }) => r)).toEqual(
      entries.map((e) => ({
        email: e.email,
        created_at: e.created_at.replace(/:\d{2}\.\d{3}Z$/, ':00.000Z'),
        ip_address: e.ip_address,
        country: e.country,
        city: e.city,
        region: e.region,
        ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION,
      })),
    );
    expect(parsed.rows.map((r) => r.line)).toEqual([2, 3, 4, 5]);
  });

  it('checks the header: any case and order, Email required, duplicates refused, unknown columns ignored', () => {
    const parsed = parseWaitlistCsv('location,EMAIL,  ip address ,Notes,date joined\nGermany,a@example.com,N/A,hello,2026-11-22T06:04:00Z\n');
    expect(parsed.rows).toEqual([
      { line: 2, email: 'a@example.com', created_at: '2026-11-22T06:04:00.000Z', ip_address: null, country: 'Germany', city: null, region: null, ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION },
    ]);
    expect(parsed.warnings).toEqual(['Ignoring unknown column: "Notes".']);

    expect(() => parseWaitlistCsv('')).toThrow(CsvHeaderError);
    // `npm run db -- export > FILE` (without --silent) leaves npm's banner above the header.
    const banner = parseWaitlistCsv('\n> private-markets-waitlist@1.0.0 db\n> tsx src/server/cli/db.ts export\n\nEmail,Date Joined,IP Address,Location\na@example.com,2026-11-22T06:04:00Z,N/A,Unknown\n');
    expect(banner.rows.map((r) => r.email)).toEqual(['a@example.com']);
    expect(banner.warnings).toEqual(["Skipped 2 lines of npm's script banner above the header."]);
    expect(() => parseWaitlistCsv('\uFEFF\r\n')).toThrow(/empty/);
    expect(() => parseWaitlistCsv('Mail,Date Joined\nx@example.com,2026-11-22T06:04:00Z\n')).toThrow(/no "Email" column/);
    expect(() => parseWaitlistCsv('Email,email\n')).toThrow(/appears twice/);
    // Our export writes a BOM, which then follows the banner.
    expect(parseWaitlistCsv('\n> private-markets-waitlist@1.0.0 db\n> tsx src/server/cli/db.ts export\n\n\uFEFFEmail\nb@example.com\n', { now: NOW }).rows.map((r) => r.email)).toEqual(['b@example.com']);
  });

  it('stamps rows with the import time when there is no Date Joined column', () => {
    const parsed = parseWaitlistCsv('Email\nA@Example.com\n', { now: NOW });
    expect(parsed.rows).toEqual([
      { line: 2, email: 'a@example.com', created_at: NOW.toISOString(), ip_address: null, country: null, city: null, region: null, ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION },
    ]);
    expect(parsed.warnings[0]).toMatch(/No "Date Joined" column/);
  });

  it('reports bad lines with the physical line where the record starts', () => {
    const text = [
      HEADER, // 1
      'good@example.com,"Nov 22, 2026, 06:04 AM",N/A,Unknown', // 2
      '"multi@example.com","Nov 22, 2026, 06:04 AM",N/A,"Berlin,', // 3 (record spans 3–4)
      'Germany"',
      'not-an-email,"Nov 22, 2026, 06:04 AM",N/A,Unknown', // 5
      '', // 6 (blank: ignored)
      'late@example.com,sometime,N/A,Unknown', // 7
      'short@example.com,"Nov 22, 2026, 06:04 AM"', // 8
      ',"Nov 22, 2026, 06:04 AM",N/A,Unknown', // 9
      'nodate@example.com,,N/A,Unknown', // 10
      'x@example.com,"Nov 22, 2026, 06:04 AM",N/A,"unterminated', // 11
      'y@example.com,2026-11-22T06:04:00Z,N/A,Unknown',
    ].join('\r\n');
    const parsed = parseWaitlistCsv(text);
    expect(parsed.rows.map((r) => [r.line, r.email, r.city, r.country])).toEqual([
      [2, 'good@example.com', null, null],
      [3, 'multi@example.com', 'Berlin', 'Germany'],
    ]);
    expect(parsed.bad).toEqual([
      { line: 5, reason: 'not a valid e-mail address ("not-an-email")' },
      { line: 7, reason: expect.stringMatching(/^unrecognised Date Joined "sometime"/) },
      { line: 8, reason: 'expected 4 columns, found 2' },
      { line: 9, reason: 'no e-mail address' },
      { line: 10, reason: 'no Date Joined' },
      { line: 11, reason: expect.stringMatching(/never closed/) },
    ]);
  });

  it('lower-cases e-mails and skips repeats within the file (first wins), counting them', () => {
    const text = `${HEADER}\nA@Example.com,"Nov 22, 2026, 06:04 AM",1.1.1.1,Unknown\n a@example.COM ,"Nov 23, 2026, 06:04 AM",2.2.2.2,Unknown\nb@example.com,"Nov 22, 2026, 06:04 AM",N/A,Unknown\nB@EXAMPLE.COM,"Nov 22, 2026, 06:04 AM",N/A,Unknown\n`;
    const parsed = parseWaitlistCsv(text);
    expect(parsed.rows.map((r) => [r.email, r.ip_address])).toEqual([
      ['a@example.com', '1.1.1.1'],
      ['b@example.com', null],
    ]);
    expect(parsed.duplicates).toBe(2);
  });

  it('reads the original product export (LF, no BOM, no formula quotes) in its time zone', () => {
    const text = 'Email,Date Joined,IP Address,Location\njane@example.com,"Mar 8, 2026, 03:30 AM",198.51.100.7,"Austin, Texas, United States"\n';
    const parsed = parseWaitlistCsv(text, { timeZone: 'America/Chicago' });
    // Chicago switches to CDT at 2 AM on Mar 8, 2026: 03:30 is UTC-5.
    expect(parsed.rows).toEqual([
      { line: 2, email: 'jane@example.com', created_at: '2026-03-08T08:30:00.000Z', ip_address: '198.51.100.7', country: 'United States', city: 'Austin', region: 'Texas', ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION },
    ]);
  });

  it('handles a quoted header and a formula-quoted cell in any column', () => {
    const text = `${csvRecord(['Email', 'Date Joined', 'IP Address', 'Location'])}${csvRecord(['-dash@example.com', '2026-11-22T06:04:00Z', '@ip', '=Evil, Place'])}`;
    expect(text).toContain("'-dash@example.com,2026-11-22T06:04:00Z,'@ip,\"'=Evil, Place\"");
    const parsed = parseWaitlistCsv(text);
    expect(parsed.bad).toEqual([]);
    expect(parsed.rows[0]).toMatchObject({ email: '-dash@example.com', ip_address: '@ip', city: '=Evil', country: 'Place' });
  });

  it('writes the consent columns only when asked, and reads them back', async () => {
    const entries: WaitlistEntry[] = [
      {
        id: '1', email: 'kept@example.com', created_at: '2026-11-22T06:04:00.000Z', ip_address: '203.0.113.9', country: null, city: null, region: null,
        status: 'invited', consent_version: '=2026-11-24', consent_record: null, confirmation_sent_at: '2026-11-22T06:04:00.000Z', confirmed_at: '2026-11-22T06:05:07.123Z',
        confirmed_ip: '2001:db8::7', invited_at: '2026-12-01T09:00:00.000Z', unsubscribed_at: null, held_reason: null, ...NO_ATTRIBUTION,
      },
      {
        id: '2', email: 'quit@example.com', created_at: '2026-11-21T10:00:00.000Z', ip_address: null, country: null, city: null, region: null,
        ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION, status: 'unsubscribed', unsubscribed_at: '2026-11-30T18:00:00.000Z',
      },
    ];
    async function* batches() {
      yield entries;
    }
    let spec = '';
    for await (const chunk of waitlistCsvChunks(batches(), 'UTC')) spec += chunk;
    expect(spec.split('\r\n')[0]).toBe(`${CSV_BOM}${HEADER}`);

    let text = '';
    for await (const chunk of waitlistCsvChunks(batches(), 'UTC', undefined, { consent: true })) text += chunk;
    const lines = text.split('\r\n');
    expect(lines[0]).toBe(`${CSV_BOM}${HEADER},Status,Consent Version,Confirmed At,Confirmed IP,Invited At,Unsubscribed At`);
    expect(lines[1]).toBe(
      'kept@example.com,"Nov 22, 2026, 06:04 AM",203.0.113.9,Unknown,invited,\'=2026-11-24,2026-11-22T06:05:07.123Z,2001:db8::7,2026-12-01T09:00:00.000Z,',
    );
    expect(lines[2]).toBe('quit@example.com,"Nov 21, 2026, 10:00 AM",N/A,Unknown,unsubscribed,,,N/A,,2026-11-30T18:00:00.000Z');

    const parsed = parseWaitlistCsv(text);
    expect(parsed.bad).toEqual([]);
    expect(parsed.warnings).toEqual([]);
    // Everything but the id and the time the last confirmation e-mail was sent comes back.
    expect(parsed.rows.map(({ line: _line, ...r }) => r)).toEqual(entries.map(({ id: _id, ...e }) => ({ ...e, confirmation_sent_at: null })));
  });

  it('checks the consent cells', () => {
    const header = 'Email,Status,Consent Version,Confirmed At,Confirmed IP,Invited At,Unsubscribed At';
    const parsed = parseWaitlistCsv(
      [
        header,
        'a@example.com,,,,,,',
        'b@example.com,CONFIRMED,v1,"Nov 22, 2026, 06:04 AM",N/A,,',
        'c@example.com,gone,v1,,,,',
        'd@example.com,joined,v1,yesterday,,,',
        `e@example.com,joined,${'v'.repeat(201)},,,,`,
        'f@example.com,joined,,,,not a date,',
      ].join('\n'),
      { now: NOW, timeZone: 'America/New_York' },
    );
    expect(parsed.rows.map(({ line: _line, created_at: _c, ...r }) => r)).toEqual([
      { email: 'a@example.com', ip_address: null, country: null, city: null, region: null, ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION },
      { email: 'b@example.com', ip_address: null, country: null, city: null, region: null, ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION, status: 'confirmed', consent_version: 'v1', confirmed_at: '2026-11-22T11:04:00.000Z' },
    ]);
    expect(parsed.bad).toEqual([
      { line: 4, reason: 'unknown Status "gone" (expected one of pending, joined, confirmed, invited, unsubscribed, held)' },
      { line: 5, reason: expect.stringMatching(/^unrecognised Confirmed At "yesterday"/) },
      { line: 6, reason: 'Consent Version longer than 200 characters' },
      { line: 7, reason: expect.stringMatching(/^unrecognised Invited At "not a date"/) },
    ]);
  });
});
