import { describe, expect, it } from 'vitest';
import { parseWaitlistCsv } from '../../../src/server/csv/read-waitlist.js';

/** The large file of csv-import.test.ts's parseWaitlistCsv (run by `npm run test:slow`). */
const HEADER = 'Email,Date Joined,IP Address,Location';

describe('parseWaitlistCsv', () => {
  it('parses 100,000 lines', { timeout: 60_000 }, () => {
    const lines = [HEADER];
    for (let i = 0; i < 100_000; i++) lines.push(`user${i}@example.com,"Nov 22, 2026, 06:04 AM",203.0.113.${i % 256},"City ${i}, Region, Country"`);
    const parsed = parseWaitlistCsv(lines.join('\r\n'), { timeZone: 'Europe/Berlin' });
    expect(parsed.rows).toHaveLength(100_000);
    expect(parsed.rows[99_999]!.line).toBe(100_001);
    expect(parsed.rows[99_999]!.created_at).toBe('2026-11-22T05:04:00.000Z');
  });
});
