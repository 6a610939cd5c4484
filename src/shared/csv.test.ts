import { describe, expect, it } from 'vitest';
import { countCsvRows } from './csv.js';

describe('countCsvRows', () => {
  it('counts data rows, not the header, the BOM or a final line break', () => {
    expect(countCsvRows('\uFEFFEmail,Date Joined,IP Address,Location\r\n')).toBe(0);
    expect(countCsvRows('\uFEFFEmail,Date Joined\r\na@x.com,"Nov 22, 2026, 06:04 AM"\r\nb@x.com,x\r\n')).toBe(2);
    expect(countCsvRows('h\na\nb')).toBe(2);
  });

  it('ignores line breaks inside quoted cells', () => {
    expect(countCsvRows('h1,h2\r\n"multi\r\nline",x\r\n"say ""hi""",y\r\n')).toBe(2);
  });
});
