import fs from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { PAGES, THANKS_CHECK_INBOX } from '../../shared/site/pages.js';
import { CHALLENGE_META } from '../../shared/waitlist/challenge-contract.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

function readPages(webRoot: string): Map<string, string> {
  const pages = new Map<string, string>();
  for (const file of [...Object.values(PAGES).map((page) => page.file), THANKS_CHECK_INBOX.file]) {
    const full = path.join(webRoot, file);
    if (fs.existsSync(full)) pages.set(file, fs.readFileSync(full, 'utf8'));
  }
  return pages;
}

function sendHtml(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.status(status).header('cache-control', REVALIDATE).type('text/html; charset=utf-8').send(html);
}

/**
 * SIGNUP_CHALLENGE=proof-of-work: every page tells the app so (the form may be reached from any of
 * them without a reload), in a meta element the form reads (src/web/waitlist/challenge.ts). Off,
 * the pages are served byte for byte as built.
 */
function markChallenge(pages: Map<string, string>): void {
  for (const [file, html] of pages) pages.set(file, html.replace('</head>', `<meta name="${CHALLENGE_META}" content="proof-of-work"></head>`));
}

/** Serves the production web build: hashed assets cached for a year, HTML always revalidated. */
export async function siteRoutes(app: FastifyInstance): Promise<void> {
  const { webRoot } = app.config;
  const built = fs.existsSync(path.join(webRoot, 'index.html'));
  if (!built) {
    app.log.warn({ webRoot }, 'no web build found: run `npm run build` to serve the site');
  }
  const pages = built ? readPages(webRoot) : new Map<string, string>();
  if (app.config.challenge.mode !== 'off') markChallenge(pages);

  if (built) {
    await app.register(fastifyStatic, {
      root: webRoot,
      prefix: '/',
      index: false,
      wildcard: false,
      preCompressed: true,
      // HTML is served by the page routes below, never as /index.html and friends.
      allowedPath: (pathName) => !pathName.endsWith('.html'),
      cacheControl: false,
      setHeaders: (reply, filePath) => {
        const inAssets = filePath.startsWith(path.join(webRoot, 'assets') + path.sep);
        reply.header('cache-control', inAssets ? IMMUTABLE : 'public, max-age=3600');
      },
    });
  }

  // With double opt-in, /thanks is the variant that also asks the visitor to check the inbox.
  const fileOf = (file: string) =>
    file === PAGES.thanks.file && app.config.consent.confirmation === 'required' ? THANKS_CHECK_INBOX.file : file;

  // Each routed page gets its prerendered file; anything else that is not an API route gets the
  // not-found page with status 404.
  for (const { path: route, file: pageFile } of Object.values(PAGES)) {
    if (route === null) continue;
    const file = fileOf(pageFile);
    app.get(route, async (request, reply) => {
      const html = pages.get(file);
      if (!html) return reply.callNotFound();
      app.servedPages.served(file);
      return sendHtml(reply, 200, html);
    });
  }

  app.setNotFoundHandler(async (request, reply) => {
    // Without the query: an e-mail link's token must not reach the logs.
    request.log.info({ path: request.url.split('?')[0], method: request.method }, 'not found');
    const wantsHtml = (request.method === 'GET' || request.method === 'HEAD') && !request.url.startsWith('/api/') && !request.url.startsWith('/auth/v1/');
    const html = pages.get(PAGES.notFound.file);
    if (wantsHtml && html) {
      app.servedPages.served(PAGES.notFound.file);
      return sendHtml(reply, 404, html);
    }
    return reply.status(404).send({ error: { code: 'not_found', message: `No route for ${request.method} ${request.url.split('?')[0]}` } });
  });
}
