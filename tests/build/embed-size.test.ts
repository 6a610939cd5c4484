/**
 * The embed script's size (issue 32 point 3: at most 15 KB gzip), measured on the build
 * (`npm run build`, which runs scripts/build-embed.ts): dist/embed/embed.js gzipped at level 9, as
 * the build's own gate measures it. The limit is written here again on purpose: raising the build's
 * gate alone does not pass this test.
 */
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const EMBED_FILE = path.resolve('dist/embed/embed.js');
const MAX_GZIP_BYTES = 15 * 1024;

describe('the embed script (production build)', () => {
  it('is at most 15 KB gzip', () => {
    if (!fs.existsSync(EMBED_FILE)) expect.fail('dist/embed/embed.js is missing: run npm run build first');
    const bytes = fs.readFileSync(EMBED_FILE);
    const gzip = gzipSync(bytes, { level: 9 }).length;
    console.log(`dist/embed/embed.js: ${bytes.length} bytes, ${gzip} bytes gzip (limit ${MAX_GZIP_BYTES})`);
    // The real script: one minified file that mounts the form (not an empty or stale placeholder).
    expect(bytes.toString('utf8')).toContain('data-waitlist-embed');
    expect(gzip).toBeGreaterThan(0);
    expect(gzip).toBeLessThanOrEqual(MAX_GZIP_BYTES);
  });
});
