import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { registerEmbedPreflight } from '../http/cross-site.js';
import { SIGNUP_PATH } from '../../shared/waitlist/signup-contract.js';

/**
 * The signup form on another site (issue 32 point 3): `GET /embed.js`, the script a page of an
 * allowed origin (EMBED_ORIGINS) includes to render the form (src/web/embed, built by
 * scripts/build-embed.ts to dist/embed/embed.js, beside the web build), and the CORS preflight of
 * the signup it posts (http/cross-site.ts). The signup route answers those origins itself.
 */
export const EMBED_SCRIPT_PATH = '/embed.js';

/** Where the build writes the script: beside the web root, so the site's static files never serve it with their headers. */
export function embedScriptFile(webRoot: string): string {
  return path.join(path.dirname(webRoot), 'embed', 'embed.js');
}

export async function embedRoutes(app: FastifyInstance): Promise<void> {
  registerEmbedPreflight(app, SIGNUP_PATH, { embedOrigins: app.config.embedOrigins });
  let script: Promise<Buffer | null> | null = null;
  const load = () => (script ??= fs.readFile(embedScriptFile(app.config.webRoot)).catch(() => null));

  app.get(EMBED_SCRIPT_PATH, async (_request, reply) => {
    const body = await load();
    if (body === null) {
      script = null;
      return reply.callNotFound();
    }
    // Loaded by other sites' pages: they may (the site's own answers say same-origin); its URL is
    // stable, so it is cached for a short while and then revalidated.
    reply.raw.setHeader('cross-origin-resource-policy', 'cross-origin');
    return reply.header('cache-control', 'public, max-age=300').type('text/javascript; charset=utf-8').send(body);
  });
}
