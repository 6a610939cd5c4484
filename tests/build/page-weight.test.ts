/**
 * Page-weight budget of the landing page, measured on the production build (`npm run build`): every JS
 * and CSS file that `/` loads without the visitor doing anything, gzipped (level 9) one by one.
 *
 * What counts: the files index.html names (script, modulepreload, stylesheet), then, through Vite's
 * chunk graph (dist/vite-manifest.json), everything those import, statically or dynamically: the app
 * chunk the entry loads after the first paint, and the toaster chunk (sonner) loaded when the page is
 * idle. Left out are only dynamic imports of other routes' pages (src/web/pages, auth, admin other than
 * the landing page itself), which load on their own routes; they are listed in the output.
 */
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { PAGE_NAMES, PAGES, SIGNUP_ERROR_FILE } from '../../src/shared/site/pages.js';

const WEB_ROOT = path.resolve('dist/web');
const MANIFEST = path.resolve('dist/vite-manifest.json');
/** About what React, a router and sonner weigh on their own: the landing page's own code has to fit beside them. */
const JS_BUDGET = 90 * 1024;
const CSS_BUDGET = 10 * 1024;
/** The landing page's module; any other page module (or auth/admin code) imported dynamically is another route's. */
const LANDING_PAGE_SOURCE = 'pages/LandingPage.tsx';
const ROUTE_SOURCE = /^(pages|auth|admin)\//;
/** The toaster's chunk is loaded on idle: it must be among what is counted. */
const TOASTER_SOURCE = /node_modules\/sonner\//;
/**
 * Strings only admin and auth code contains: the auth-js client's wire header and library name, and
 * admin-panel texts. (Page titles such as 'Admin Login' live in the shell's title table on purpose.)
 */
const ADMIN_MARKERS = ['X-Supabase-Api-Version', 'gotrue', 'Welcome,', 'No waitlist entries yet.', 'Are you sure?'];
const HTML_PAGES = [...PAGE_NAMES.map((name) => PAGES[name].file), SIGNUP_ERROR_FILE];

/** `<script>` elements without a `src`: forbidden by the CSP (script-src 'self'). */
const INLINE_SCRIPT = /<script\b(?![^>]*\ssrc=)[^>]*>/gi;

/** One chunk of Vite's build manifest (keyed by source path, or `_name` for shared chunks). */
interface ManifestChunk {
  file: string;
  src?: string;
  isEntry?: boolean;
  isDynamicEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
  css?: string[];
}

interface Asset {
  file: string;
  kind: 'js' | 'css';
  /** How `/` comes to load it. */
  via: string;
  raw: number;
  gzip: number;
  text: string;
}

function attribute(tag: string, name: string): string | undefined {
  return new RegExp(`\\s${name}\\s*=\\s*["']([^"']*)["']`, 'i').exec(tag)?.[1];
}

/** A URL of index.html as a path relative to the web root (`assets/x.js`). */
function webPath(url: string): string {
  if (/^(https?:)?\/\//i.test(url)) throw new Error(`the landing page loads an external resource: ${url}`);
  return url.replace(/^\//, '').split(/[?#]/)[0] ?? url;
}

interface LandingLoad {
  assets: Asset[];
  /** Route chunks the landing page's code can import but `/` never loads. */
  leftOut: string[];
}

function collectLandingAssets(html: string, manifest: Record<string, ManifestChunk>): LandingLoad {
  const byFile = new Map(Object.entries(manifest).map(([key, chunk]) => [chunk.file, { key, chunk }]));
  const queue: Array<{ file: string; kind: 'js' | 'css'; via: string }> = [];
  for (const [tag] of html.matchAll(/<script\b[^>]*>/gi)) {
    const src = attribute(tag, 'src');
    if (src) queue.push({ file: webPath(src), kind: 'js', via: 'script tag' });
  }
  for (const [tag] of html.matchAll(/<link\b[^>]*>/gi)) {
    const rel = (attribute(tag, 'rel') ?? '').toLowerCase().split(/\s+/);
    const href = attribute(tag, 'href');
    if (!href) continue;
    if (rel.includes('modulepreload')) queue.push({ file: webPath(href), kind: 'js', via: 'modulepreload' });
    else if (rel.includes('stylesheet')) queue.push({ file: webPath(href), kind: 'css', via: 'stylesheet' });
  }

  const seen = new Map<string, Asset>();
  const leftOut = new Set<string>();
  while (queue.length > 0) {
    const next = queue.shift()!;
    if (seen.has(next.file)) continue;
    const full = path.join(WEB_ROOT, next.file);
    if (!fs.existsSync(full)) throw new Error(`the landing page references a missing file: ${next.file}`);
    const buffer = fs.readFileSync(full);
    seen.set(next.file, {
      file: next.file,
      kind: next.kind,
      via: next.via,
      raw: buffer.length,
      gzip: gzipSync(buffer, { level: 9 }).length,
      text: buffer.toString('utf8'),
    });
    if (next.kind !== 'js') continue;
    const entry = byFile.get(next.file);
    if (!entry) throw new Error(`${next.file} is not in dist/vite-manifest.json: is the build stale?`);
    const { key, chunk } = entry;
    const fileOf = (name: string) => {
      const imported = manifest[name];
      if (!imported) throw new Error(`dist/vite-manifest.json: ${key} imports ${name}, which it does not list`);
      return imported;
    };
    for (const name of chunk.imports ?? []) queue.push({ file: fileOf(name).file, kind: 'js', via: `imported by ${key}` });
    for (const name of chunk.dynamicImports ?? []) {
      const imported = fileOf(name);
      if (ROUTE_SOURCE.test(name) && name !== LANDING_PAGE_SOURCE) leftOut.add(`${imported.file} (${name})`);
      else queue.push({ file: imported.file, kind: 'js', via: `loaded later by ${key}` });
    }
    for (const css of chunk.css ?? []) queue.push({ file: css, kind: 'css', via: `stylesheet of ${key}` });
  }
  return { assets: [...seen.values()], leftOut: [...leftOut] };
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

describe('landing page weight (production build)', () => {
  const indexPath = path.join(WEB_ROOT, 'index.html');

  it('has a production build to measure', () => {
    if (!fs.existsSync(indexPath)) expect.fail('dist/web/index.html is missing: run npm run build first');
    if (!fs.existsSync(MANIFEST)) expect.fail('dist/vite-manifest.json is missing: run npm run build first');
  });

  it('loads at most 90 KB of JS (the idle-loaded toaster included) and 10 KB of CSS (gzipped), without admin code', () => {
    if (!fs.existsSync(indexPath) || !fs.existsSync(MANIFEST)) expect.fail('no production build: run npm run build first');
    const html = fs.readFileSync(indexPath, 'utf8');
    const manifest = JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as Record<string, ManifestChunk>;
    const { assets, leftOut } = collectLandingAssets(html, manifest);

    const js = assets.filter((a) => a.kind === 'js');
    const css = assets.filter((a) => a.kind === 'css');
    expect(js.length, 'the landing page loads no script').toBeGreaterThan(0);
    expect(css.length, 'the landing page loads no stylesheet').toBeGreaterThan(0);
    const toaster = Object.values(manifest).find((chunk) => chunk.src && TOASTER_SOURCE.test(chunk.src));
    expect(toaster, 'no sonner chunk in the build').toBeDefined();
    expect(
      js.some((a) => a.file === toaster?.file),
      'the toaster chunk is not counted',
    ).toBe(true);

    const sum = (list: Asset[], key: 'raw' | 'gzip') => list.reduce((total, a) => total + a[key], 0);
    for (const a of assets) console.log(`${a.kind.padEnd(3)} ${a.file}: ${kb(a.raw)} raw, ${kb(a.gzip)} gzip (${a.via})`);
    for (const file of leftOut) console.log(`not loaded on /: ${file}`);
    console.log(`landing JS:  ${kb(sum(js, 'raw'))} raw, ${kb(sum(js, 'gzip'))} gzip (budget ${kb(JS_BUDGET)})`);
    console.log(`landing CSS: ${kb(sum(css, 'raw'))} raw, ${kb(sum(css, 'gzip'))} gzip (budget ${kb(CSS_BUDGET)})`);

    expect(sum(js, 'gzip'), 'landing JS (gzip) over budget').toBeLessThanOrEqual(JS_BUDGET);
    expect(sum(css, 'gzip'), 'landing CSS (gzip) over budget').toBeLessThanOrEqual(CSS_BUDGET);

    for (const a of [...assets, { file: 'index.html', text: html }]) {
      for (const marker of ADMIN_MARKERS) {
        expect(a.text.includes(marker), `${a.file} contains admin code ("${marker}")`).toBe(false);
      }
    }
  });

  it('names the admin code in /admin\'s HTML as modulepreload links (the page, its panel, the chart and their imports), and none of it in /\'s', () => {
    const manifest = JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as Record<string, ManifestChunk & { imports?: string[]; isEntry?: boolean }>;
    const preloads = (file: string) =>
      new Set(
        [...fs.readFileSync(path.join(WEB_ROOT, file), 'utf8').matchAll(/<link\b[^>]*>/gi)]
          .map(([tag]) => tag)
          .filter((tag) => (attribute(tag, 'rel') ?? '').toLowerCase() === 'modulepreload')
          .map((tag) => webPath(attribute(tag, 'href') ?? '')),
      );
    const needed = new Set<string>();
    const visit = (key: string) => {
      const chunk = manifest[key];
      expect(chunk, `${key} in the manifest`).toBeDefined();
      if (!chunk || chunk.isEntry || needed.has(chunk.file)) return;
      needed.add(chunk.file);
      for (const imported of chunk.imports ?? []) visit(imported);
    };
    for (const key of ['app/start.tsx', 'admin/AdminPage.tsx', 'admin/insights/InsightPanel.tsx', 'admin/insights/signup-chart.ts']) visit(key);
    expect([...preloads(PAGES.admin.file)].sort()).toEqual([...needed].sort());
    const admin = new Set(['admin/AdminPage.tsx', 'admin/insights/InsightPanel.tsx', 'admin/insights/signup-chart.ts'].map((key) => manifest[key]!.file));
    expect([...preloads(PAGES.home.file)].filter((file) => admin.has(file))).toEqual([]);
  });

  it('serves no build manifest from the web root', () => {
    expect(fs.existsSync(path.join(WEB_ROOT, '.vite'))).toBe(false);
  });

  it.each(HTML_PAGES)('%s has no inline script', (file) => {
    const full = path.join(WEB_ROOT, file);
    if (!fs.existsSync(full)) expect.fail(`dist/web/${file} is missing: run npm run build first`);
    const html = fs.readFileSync(full, 'utf8');
    expect(html.match(INLINE_SCRIPT) ?? []).toEqual([]);
  });
});
