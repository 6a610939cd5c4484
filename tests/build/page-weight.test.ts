/**
 * Page-weight budget of the landing page, measured on the production build (`npm run build`): the JS and
 * CSS that `/` loads up front (entry script, its static imports and stylesheets; not lazy chunks).
 */
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { PAGE_NAMES, PAGES, SIGNUP_ERROR_FILE } from '../../src/shared/site/pages.js';

const WEB_ROOT = path.resolve('dist/web');
const JS_BUDGET = 100 * 1024;
const CSS_BUDGET = 10 * 1024;
/**
 * Strings only admin and auth code contains: the auth-js client's wire header and library name, and
 * admin-panel texts. (Page titles such as 'Admin Login' live in the shell's title table on purpose.)
 */
const ADMIN_MARKERS = ['X-Supabase-Api-Version', 'gotrue', 'Welcome,', 'No waitlist entries yet.', 'Are you sure?'];
const HTML_PAGES = [...PAGE_NAMES.map((name) => PAGES[name].file), SIGNUP_ERROR_FILE];

/** `<script>` elements without a `src`: forbidden by the CSP (script-src 'self'). */
const INLINE_SCRIPT = /<script\b(?![^>]*\ssrc=)[^>]*>/gi;

interface Asset {
  file: string;
  kind: 'js' | 'css';
  raw: number;
  gzip: number;
  text: string;
}

function attribute(tag: string, name: string): string | undefined {
  return new RegExp(`\\s${name}\\s*=\\s*["']([^"']*)["']`, 'i').exec(tag)?.[1];
}

function resolveUrl(url: string, fromFile: string): string {
  if (/^(https?:)?\/\//i.test(url)) throw new Error(`the landing page loads an external resource: ${url}`);
  const target = url.startsWith('/') ? path.join(WEB_ROOT, url) : path.resolve(path.dirname(fromFile), url);
  return target.split(/[?#]/)[0] ?? target;
}

/** Static `import … from "x"` / `import "x"` / `export … from "x"` of an ES module (not `import()`). */
function staticImports(code: string): string[] {
  const found: string[] = [];
  const pattern = /(?:^|[;\s}])(?:import|export)\s*(?:[\w$*{}\s,]+?\s*from\s*)?["'`]([^"'`]+\.m?js)["'`]/g;
  for (const match of code.matchAll(pattern)) if (match[1]) found.push(match[1]);
  return found;
}

function collectLandingAssets(html: string): Asset[] {
  const start: Array<{ file: string; kind: 'js' | 'css' }> = [];
  const indexFile = path.join(WEB_ROOT, 'index.html');
  for (const [tag] of html.matchAll(/<script\b[^>]*>/gi)) {
    const src = attribute(tag, 'src');
    if (src) start.push({ file: resolveUrl(src, indexFile), kind: 'js' });
  }
  for (const [tag] of html.matchAll(/<link\b[^>]*>/gi)) {
    const rel = (attribute(tag, 'rel') ?? '').toLowerCase().split(/\s+/);
    const href = attribute(tag, 'href');
    if (!href) continue;
    if (rel.includes('modulepreload')) start.push({ file: resolveUrl(href, indexFile), kind: 'js' });
    else if (rel.includes('stylesheet')) start.push({ file: resolveUrl(href, indexFile), kind: 'css' });
  }

  const seen = new Map<string, Asset>();
  const queue = [...start];
  while (queue.length > 0) {
    const next = queue.shift()!;
    if (seen.has(next.file)) continue;
    if (!fs.existsSync(next.file)) throw new Error(`index.html references a missing file: ${next.file}`);
    const buffer = fs.readFileSync(next.file);
    const text = buffer.toString('utf8');
    seen.set(next.file, { file: next.file, kind: next.kind, raw: buffer.length, gzip: gzipSync(buffer, { level: 9 }).length, text });
    if (next.kind === 'js') {
      for (const spec of staticImports(text)) queue.push({ file: resolveUrl(spec, next.file), kind: 'js' });
    }
  }
  return [...seen.values()];
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

describe('landing page weight (production build)', () => {
  const indexPath = path.join(WEB_ROOT, 'index.html');

  it('has a production build to measure', () => {
    if (!fs.existsSync(indexPath)) {
      expect.fail(`dist/web/index.html is missing: run npm run build first`);
    }
  });

  it('loads at most 100 KB of JS and 10 KB of CSS (gzipped), without admin code', () => {
    if (!fs.existsSync(indexPath)) expect.fail('dist/web/index.html is missing: run npm run build first');
    const html = fs.readFileSync(indexPath, 'utf8');
    const assets = collectLandingAssets(html);

    const js = assets.filter((a) => a.kind === 'js');
    const css = assets.filter((a) => a.kind === 'css');
    expect(js.length, 'the landing page loads no script').toBeGreaterThan(0);
    expect(css.length, 'the landing page loads no stylesheet').toBeGreaterThan(0);

    const sum = (list: Asset[], key: 'raw' | 'gzip') => list.reduce((total, a) => total + a[key], 0);
    for (const a of assets) {
      console.log(`${a.kind.padEnd(3)} ${path.relative(WEB_ROOT, a.file)}: ${kb(a.raw)} raw, ${kb(a.gzip)} gzip`);
    }
    console.log(`landing JS:  ${kb(sum(js, 'raw'))} raw, ${kb(sum(js, 'gzip'))} gzip (budget ${kb(JS_BUDGET)})`);
    console.log(`landing CSS: ${kb(sum(css, 'raw'))} raw, ${kb(sum(css, 'gzip'))} gzip (budget ${kb(CSS_BUDGET)})`);

    expect(sum(js, 'gzip'), 'landing JS (gzip) over budget').toBeLessThanOrEqual(JS_BUDGET);
    expect(sum(css, 'gzip'), 'landing CSS (gzip) over budget').toBeLessThanOrEqual(CSS_BUDGET);

    for (const a of [...assets, { file: indexPath, text: html }]) {
      for (const marker of ADMIN_MARKERS) {
        expect(a.text.includes(marker), `${path.relative(WEB_ROOT, a.file)} contains admin code ("${marker}")`).toBe(false);
      }
    }
  });

  it.each(HTML_PAGES)('%s has no inline script', (file) => {
    const full = path.join(WEB_ROOT, file);
    if (!fs.existsSync(full)) expect.fail(`dist/web/${file} is missing: run npm run build first`);
    const html = fs.readFileSync(full, 'utf8');
    expect(html.match(INLINE_SCRIPT) ?? []).toEqual([]);
  });
});
