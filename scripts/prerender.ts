/**
 * Turns the client build (dist/web) and the server bundle (dist/prerender) into static HTML pages:
 * one per route, a 404 page, the lazy routes' loading shells and the script-free signup error page.
 * Run by `npm run build:web` after both `vite build` steps; removes dist/prerender when done, and moves
 * Vite's manifest out of the web root to dist/vite-manifest.json.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LINK_RESULT_FILES, PAGE_NAMES, PAGES, SIGNUP_ERROR_FILE, THANKS_CHECK_INBOX, type LinkResultTone, type PageName } from '../src/shared/site/pages.js';
import type * as ServerEntryModule from '../src/web/entry-server.js';
import { PENDING_SIGNUP_STATE } from '../src/web/waitlist/signup-status.js';

type ServerEntry = typeof ServerEntryModule;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// Optional arguments (for checking other builds): the client build's directory, then the server bundle's.
const webDir = path.resolve(process.argv[2] ?? path.join(root, 'dist/web'));
const serverDir = path.resolve(process.argv[3] ?? path.join(root, 'dist/prerender'));

/** A URL no page has: what the not-found page is rendered from. */
const NOT_FOUND_URL = '/__prerender-not-found__';

/** Pages that send the visitor on without JavaScript (the client navigates itself when it runs). */
const NO_SCRIPT_HEAD: Partial<Record<PageName, string>> = {
  thanks: '<noscript><meta http-equiv="refresh" content="5;url=/" /></noscript>',
};

/**
 * The code a client-only page runs before it can show anything, named in its HTML as modulepreload
 * links (Vite's manifest keys; their static imports follow): the browser fetches and compiles it all
 * while the entry script runs, rather than one dynamic import after the other (entry → app/start →
 * the page → its panel → the chart). The landing page's HTML names none of it.
 */
const CLIENT_ONLY_CODE: Partial<Record<PageName, string[]>> = {
  admin: ['app/start.tsx', 'admin/AdminPage.tsx', 'admin/insights/InsightPanel.tsx', 'admin/insights/signup-chart.ts'],
  auth: ['app/start.tsx', 'auth/AuthPage.tsx'],
};

type ViteManifest = Record<string, { file: string; imports?: string[]; isEntry?: boolean }>;

/** `<link rel="modulepreload">` for the chunks of `keys` and everything they import statically, the entry itself left out (its script tag loads it). */
function modulePreloads(manifest: ViteManifest, keys: string[]): string {
  const files = new Set<string>();
  const visit = (key: string) => {
    const chunk = manifest[key];
    if (!chunk) throw new Error(`prerender: ${key} is not in Vite's manifest`);
    if (chunk.isEntry || files.has(chunk.file)) return;
    files.add(chunk.file);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  for (const key of keys) visit(key);
  return [...files].map((file) => `<link rel="modulepreload" crossorigin href="/${file}" />`).join('');
}

const INLINE_SCRIPT = /<script\b(?![^>]*\ssrc=)[^>]*>[\s\S]*?<\/script>/gi;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function replaceOnce(html: string, search: string | RegExp, replacement: string, what: string): string {
  const found = typeof search === 'string' ? html.includes(search) : search.test(html);
  if (!found) throw new Error(`prerender: ${what} not found in dist/web/index.html`);
  return html.replace(search, () => replacement);
}

interface PageParts {
  title: string;
  description: string;
  head?: string;
  body: string;
}

function fillTemplate(template: string, parts: PageParts, { keepTitleRaw = false } = {}): string {
  let html = replaceOnce(
    template,
    /<title>[\s\S]*?<\/title>/,
    `<title>${keepTitleRaw ? parts.title : escapeHtml(parts.title)}</title>`,
    '<title>',
  );
  html = replaceOnce(
    html,
    /<meta name="description" content="[^"]*"\s*\/?>/,
    `<meta name="description" content="${escapeHtml(parts.description)}" />`,
    'meta description',
  );
  html = replaceOnce(html, '<!--app-head-->', parts.head ?? '', '<!--app-head-->');
  return replaceOnce(html, '<!--app-html-->', parts.body, '<!--app-html-->');
}

async function main(): Promise<void> {
  process.env.NODE_ENV ??= 'production';
  const template = await fs.readFile(path.join(webDir, 'index.html'), 'utf8');
  const entryPath = path.join(serverDir, 'entry-server.js');
  const server = (await import(pathToFileURL(entryPath).href)) as ServerEntry;
  const { prerenderContent } = await import('../src/shared/site/content.js');
  const description = prerenderContent.metaDescription;

  const chunks = JSON.parse(await fs.readFile(path.join(webDir, '.vite/manifest.json'), 'utf8')) as ViteManifest;

  for (const name of PAGE_NAMES) {
    const { path: url, file } = PAGES[name];
    const page = await server.render(url ?? NOT_FOUND_URL);
    const code = CLIENT_ONLY_CODE[name];
    const head = (NO_SCRIPT_HEAD[name] ?? '') + (code ? modulePreloads(chunks, code) : '');
    const html = fillTemplate(template, { title: page.title, description, head, body: page.html });
    await fs.writeFile(path.join(webDir, file), html);
  }

  // The thanks page the server sends when double opt-in is on: as after a pending signup, marked for hydration.
  const { name: markName, content: markContent } = THANKS_CHECK_INBOX.meta;
  const pendingThanks = await server.render(PAGES.thanks.path, PENDING_SIGNUP_STATE);
  await fs.writeFile(
    path.join(webDir, THANKS_CHECK_INBOX.file),
    fillTemplate(template, {
      title: pendingThanks.title,
      description,
      head: `<meta name="${markName}" content="${markContent}" />${NO_SCRIPT_HEAD.thanks ?? ''}`,
      body: pendingThanks.html,
    }),
  );

  // The signup error page: same look and stylesheet, no scripts at all.
  const errorPage = server.renderSignupErrorPage();
  const staticTemplate = template
    .replace(/\s*<script\b[^>]*>[\s\S]*?<\/script>/gi, '')
    .replace(/\s*<link\b[^>]*\brel="modulepreload"[^>]*>/gi, '');
  await fs.writeFile(
    path.join(webDir, SIGNUP_ERROR_FILE),
    fillTemplate(staticTemplate, { title: errorPage.title, description, body: errorPage.html }, { keepTitleRaw: true }),
  );

  // The e-mail link pages' no-JavaScript answers: the same kind of script-free template.
  for (const [tone, file] of Object.entries(LINK_RESULT_FILES) as Array<[LinkResultTone, string]>) {
    const page = server.renderLinkResultPage(tone);
    await fs.writeFile(path.join(webDir, file), fillTemplate(staticTemplate, { title: page.title, description, body: page.html }, { keepTitleRaw: true }));
  }

  const files = [...PAGE_NAMES.map((name) => PAGES[name].file), THANKS_CHECK_INBOX.file, SIGNUP_ERROR_FILE, ...Object.values(LINK_RESULT_FILES)];
  for (const file of files) {
    const html = await fs.readFile(path.join(webDir, file), 'utf8');
    const inline = html.match(INLINE_SCRIPT);
    if (inline) throw new Error(`prerender: ${file} has an inline script: ${inline[0].slice(0, 120)}`);
  }

  // Vite's chunk graph (the page-weight test reads it) goes beside the web root: it is not for the public.
  const manifest = path.join(webDir, '.vite/manifest.json');
  await fs.rename(manifest, path.join(webDir, '..', 'vite-manifest.json')).catch(() => undefined);
  await fs.rm(path.join(webDir, '.vite'), { recursive: true, force: true });

  await fs.rm(serverDir, { recursive: true, force: true });
  console.log(`prerendered ${files.length} pages into ${path.relative(root, webDir)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
