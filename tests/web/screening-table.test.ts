import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ScreeningTable } from '../../src/web/admin/insights/ScreeningTable.js';

/** The insight panel's "Held and refused signups" (issue 28): a table named by its heading, every reason with its label and count. */
describe('the held and refused signups table', () => {
  const screening = [
    { reason: 'disposable', count: 17 },
    { reason: 'dead-domain', count: 4 },
    { reason: 'no-challenge', count: 0 },
    { reason: 'rate-limit', count: 1203 },
  ] as const;

  it('names the table by its heading and gives each reason a row header and its count', () => {
    const html = renderToStaticMarkup(createElement(ScreeningTable, { screening: [...screening], from: undefined, to: undefined }));
    const headingId = /<h3 id="([^"]+)"[^>]*>Held and refused signups<\/h3>/.exec(html)?.[1];
    expect(headingId).toBeTruthy();
    expect(html).toContain(`<table aria-labelledby="${headingId}"`);
    expect(html).toContain('All time. Counted by reason and by day only: the other filters do not apply.');
    const rows = [...html.matchAll(/<tr><th scope="row"[^>]*>([^<]+)<\/th><td[^>]*>([^<]+)<\/td><\/tr>/g)].map((m) => [m[1], m[2]]);
    expect(rows).toEqual([
      ['Throwaway domain', '17'],
      ['Domain cannot receive mail', '4'],
      ['No proof-of-work', '0'],
      ['Too many signups from one address', '1,203'],
    ]);
  });

  it('says which days it counts', () => {
    const period = (from?: string, to?: string) => renderToStaticMarkup(createElement(ScreeningTable, { screening: [...screening], from, to }));
    expect(period('2026-03-01', '2026-03-31')).toContain('From 2026-03-01 to 2026-03-31 (UTC).');
    expect(period('2026-03-01')).toContain('Since 2026-03-01 (UTC).');
    expect(period(undefined, '2026-03-31')).toContain('Until 2026-03-31 (UTC).');
  });
});
