/**
 * Turns the client build (dist/web) and the server bundle (dist/prerender) into static HTML pages:
 * one per route, a 404 page, the lazy routes' loading shells and the script-free signup error page.
 * Run by `npm run build:web` after both `vite build` steps; removes dist/prerender when done.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as ServerEntryModule from '../src/web/entry-server.js';

type ServerEntry = typeof ServerEntryModule;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// Optional arguments (for checking other builds): the client build's directory, then the server bundle's.
const webDir = path.resolve(process.argv[2] ?? path.join(root, 'dist/web'));
const serverDir = path.resolve(process.argv[3] ?? path.join(root, 'dist/prerender'));

/** Output file → URL rendered into it. */
const PAGES: ReadonlyArray<readonly [file: string, url: string]> = [
  ['index.html', '/'],
  ['thanks.html', '/thanks'],
  ['404.html', '/__prerender-not-found__'],
  ['auth.html', '/auth'],
  ['admin.html', '/admin'],
];

/** Pages that send the visitor on without JavaScript (the client navigates itself when it runs). */
const NO_SCRIPT_HEAD: Record<string, string> = {
  'thanks.html': '<noscript><meta http-equiv="refresh" content="5;url=/" /></noscript>',
};

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
  const { siteContent } = await import('../src/web/site/content.js');
  const description = siteContent.metaDescription;

  for (const [file, url] of PAGES) {
    const page = await server.render(url);
    const html = fillTemplate(template, { title: page.title, description, head: NO_SCRIPT_HEAD[file], body: page.html });
    await fs.writeFile(path.join(webDir, file), html);
  }

  // The signup error page: same look and stylesheet, no scripts at all.
  const errorPage = server.renderSignupErrorPage();
  const staticTemplate = template
    .replace(/\s*<script\b[^>]*>[\s\S]*?<\/script>/gi, '')
    .replace(/\s*<link\b[^>]*\brel="modulepreload"[^>]*>/gi, '');
  await fs.writeFile(
    path.join(webDir, 'signup-error.html'),
    fillTemplate(staticTemplate, { title: errorPage.title, description, body: errorPage.html }, { keepTitleRaw: true }),
  );

  for (const file of [...PAGES.map(([f]) => f), 'signup-error.html']) {
    const html = await fs.readFile(path.join(webDir, file), 'utf8');
    const inline = html.match(INLINE_SCRIPT);
    if (inline) throw new Error(`prerender: ${file} has an inline script: ${inline[0].slice(0, 120)}`);
  }

  await fs.rm(serverDir, { recursive: true, force: true });
  console.log(`prerendered ${PAGES.length + 1} pages into ${path.relative(root, webDir)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
