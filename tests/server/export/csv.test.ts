import { describe, expect, it } from 'vitest';
import { CSV_BOM, csvField, csvRecord, neutralizeFormula } from '../../../src/shared/csv.js';
import { waitlistCsvChunks, waitlistCsvHeader, waitlistCsvRecord } from '../../../src/shared/waitlist/csv.js';
import { formatDateJoined } from '../../../src/shared/waitlist/display.js';
import type { WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { NO_ATTRIBUTION } from '../../../src/shared/waitlist/attribution.js';
import { NO_CONSENT_RECORD } from '../../../src/shared/waitlist/entry.js';

const entry = (over: Partial<WaitlistEntry> = {}): WaitlistEntry => ({
  id: '00000000-0000-4000-8000-000000000001',
  email: 'a@example.com',
  created_at: '2026-11-22T06:04:05.123Z',
  ip_address: '203.0.113.7',
  country: 'Germany',
  city: 'Berlin',
  region: 'Land Berlin',
  ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION,
  ...over,
});

async function collect(gen: AsyncIterable<string>): Promise<string> {
  let out = '';
  for await (const chunk of gen) out += chunk;
  return out;
}

async function* batches(...groups: WaitlistEntry[][]): AsyncGenerator<WaitlistEntry[]> {
  for (const g of groups) yield g;
}

describe('csvField', () => {
  it('leaves plain text alone', () => {
    expect(csvField('hello world')).toBe('hello world');
    expect(csvField('')).toBe('');
    expect(csvField("O'Brien")).toBe("O'Brien");
  });

  it.each([
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['line1\nline2', '"line1\nline2"'],
    ['line1\r\nline2', '"line1\r\nline2"'],
    ['"', '""""'],
  ])('quotes %j as %j (RFC 4180)', (input, expected) => {
    expect(csvField(input)).toBe(expected);
  });

  it.each([
    ['=1+2', "'=1+2"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
  ])('neutralises formula trigger in %j', (input, expected) => {
    expect(csvField(input)).toBe(expected);
  });

  it('neutralises a leading CR and then quotes the cell', () => {
    expect(neutralizeFormula('\rx')).toBe("'\rx");
    expect(csvField('\rx')).toBe(`"'\rx"`);
  });

  it('neutralises and quotes together', () => {
    expect(csvField('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
  });

  it('only looks at the first character', () => {
    expect(csvField('a=b')).toBe('a=b');
    expect(csvField('a-b@c.d')).toBe('a-b@c.d');
  });
});

describe('csvRecord', () => {
  it('joins with commas and ends with CRLF', () => {
    expect(csvRecord(['a', 'b,c', ''])).toBe('a,"b,c",\r\n');
  });
});

describe('waitlist CSV', () => {
  it('has the four columns in order', () => {
    expect(waitlistCsvHeader()).toBe('Email,Date Joined,IP Address,Location\r\n');
  });

  it('formats a row like the admin table, in the given time zone', () => {
    const e = entry();
    const date = formatDateJoined(e.created_at, 'America/New_York');
    expect(waitlistCsvRecord(e, formatDateJoined(e.created_at, 'America/New_York'))).toBe(`a@example.com,"${date}",203.0.113.7,"Berlin, Land Berlin, Germany"\r\n`);
    expect(date).toBe('Nov 22, 2026, 01:04 AM');
  });

  it("writes N/A and Unknown for missing data", () => {
    const e = entry({ ip_address: null, country: null, city: null, region: null });
    expect(waitlistCsvRecord(e, formatDateJoined(e.created_at, 'UTC'))).toBe(`a@example.com,"Nov 22, 2026, 06:04 AM",N/A,Unknown\r\n`);
  });

  it('streams BOM and header first, then one chunk per non-empty batch, counting rows', async () => {
    const counted: number[] = [];
    const chunks: string[] = [];
    for await (const c of waitlistCsvChunks(batches([entry()], [], [entry({ email: 'b@example.com' }), entry()]), 'UTC', (n) =>
      counted.push(n),
    )) {
      chunks.push(c);
    }
    expect(chunks).toHaveLength(3);
    expect(chunks[0]).toBe(`${CSV_BOM}Email,Date Joined,IP Address,Location\r\n`);
    expect(counted).toEqual([1, 2]);
    const text = chunks.join('');
    expect(text.startsWith('\uFEFFEmail,')).toBe(true);
    expect(text.split('\r\n')).toHaveLength(5); // header + 3 rows + trailing empty
  });

  it('writes only the header for an empty waitlist', async () => {
    expect(await collect(waitlistCsvChunks(batches(), 'UTC'))).toBe(`${CSV_BOM}Email,Date Joined,IP Address,Location\r\n`);
  });
});
