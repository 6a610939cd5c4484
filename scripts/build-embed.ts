/**
 * Builds the embed script (src/web/embed/embed.ts) on its own with rolldown: one small file, no
 * framework, minified, to dist/embed/embed.js (beside dist/web, so the site's static files do not
 * serve it: src/server/embed/routes.ts does, with the headers another site's page needs). Prints
 * its size raw and gzipped; fails above EMBED_MAX_GZIP_BYTES.
 */
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'rolldown';

export const EMBED_MAX_GZIP_BYTES = 15 * 1024;
const root = path.resolve(import.meta.dirname, '..');
const file = path.join(root, 'dist/embed/embed.js');

await build({
  input: path.join(root, 'src/web/embed/embed.ts'),
  platform: 'browser',
  output: { file, format: 'iife', minify: true },
  logLevel: 'warn',
});
const bytes = fs.readFileSync(file);
const gzip = gzipSync(bytes, { level: 9 }).length;
console.log(`dist/embed/embed.js: ${bytes.length} bytes, ${gzip} bytes gzip`);
if (gzip > EMBED_MAX_GZIP_BYTES) {
  console.error(`the embed script is over ${EMBED_MAX_GZIP_BYTES} bytes gzip`);
  process.exit(1);
}
