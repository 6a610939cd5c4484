import { describe, expect, it } from 'vitest';
import { qrImageSource } from './qr-image.js';

describe('qrImageSource', () => {
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 3 3"><path fill="#ffffff" d="M0 0h3v3H0z"/></svg>';

  it("percent-encodes auth-js's data URL, so a '#' in the SVG does not end it", () => {
    const source = qrImageSource(`data:image/svg+xml;utf-8,${svg}`);
    expect(source.startsWith('data:image/svg+xml;charset=utf-8,')).toBe(true);
    expect(source).not.toContain('#');
    expect(decodeURIComponent(source.slice(source.indexOf(',') + 1))).toBe(svg);
  });

  it('takes a bare SVG too, and leaves any other data URL as it is', () => {
    expect(qrImageSource(svg)).toBe(`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`);
    expect(qrImageSource('data:image/png;base64,AAAA')).toBe('data:image/png;base64,AAAA');
  });
});
