import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './errors.js';

/**
 * Requests another site makes a visitor's browser send (security review, finding 3). A page
 * elsewhere can post to us without a CORS preflight (a form, or `fetch` in `no-cors` mode with a
 * text/plain, urlencoded or multipart body): the browser sends it and only hides the answer. So
 * every state-changing request (POST, PUT, PATCH, DELETE) whose `Origin` or `Sec-Fetch-Site` shows
 * another site is refused with 403 `cross_site_request` before its body is read, except on routes
 * that say otherwise in their config (`crossSite`):
 *
 * - `'embed'`: also from the origins the operator allows (EMBED_ORIGINS): the public signup form.
 * - `'any'`: from anywhere; the route decides (the RFC 8058 one-click unsubscribe, which mail
 *   providers post from their own servers, shares its URL with the preferences page's form).
 *
 * Our own pages are the request's own host (`Host`, or `X-Forwarded-Host` under TRUST_PROXY, as
 * Fastify reads it; the scheme is not compared, so a TLS proxy without TRUST_PROXY still matches)
 * or PUBLIC_URL. A request with neither header (curl, a server, an old browser) is not a browser
 * acting for a visitor elsewhere and passes: browsers send `Origin` on every cross-origin POST.
 */
export type CrossSitePolicy = 'embed' | 'any';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may send this route's state-changing requests besides our own pages (http/cross-site.ts). */
    crossSite?: CrossSitePolicy;
  }
}

export const CROSS_SITE_CODE = 'cross_site_request';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface CrossSiteOptions {
  /** PUBLIC_URL: an origin of ours besides the request's own host. */
  publicUrl: string | null;
  /** EMBED_ORIGINS: where the signup form may also be posted from. */
  embedOrigins: readonly string[];
}

function headerOf(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value.trim().toLowerCase() : undefined;
}

/** `host[:port]` without the scheme's default port. */
function withoutDefaultPort(host: string): string {
  return host.replace(/:(80|443)$/, '');
}

function isOwnOrigin(origin: string, request: FastifyRequest, publicUrl: string | null): boolean {
  if (publicUrl !== null && origin === publicUrl.toLowerCase()) return true;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  return host !== '' && withoutDefaultPort(host) === withoutDefaultPort(request.host.toLowerCase());
}

/**
 * The other site a request comes from (its origin, or what Sec-Fetch-Site says), or null when it
 * comes from one of our pages, from an origin in `allowed`, or from no browser page at all.
 */
export function foreignSite(request: FastifyRequest, publicUrl: string | null, allowed: ReadonlySet<string> = new Set()): string | null {
  const origin = headerOf(request, 'origin');
  if (origin !== undefined && allowed.has(origin)) return null;
  const fetchSite = headerOf(request, 'sec-fetch-site');
  if (fetchSite === 'cross-site') return origin ?? fetchSite;
  if (origin !== undefined) {
    // `null`: a sandboxed frame, a data: URL, a redirect across sites: nobody's page of ours.
    if (origin === 'null' || !isOwnOrigin(origin, request, publicUrl)) return origin;
    return null;
  }
  // Another origin of our site (a sibling subdomain) that sent no Origin: not ours either.
  return fetchSite === 'same-site' ? fetchSite : null;
}

export function crossSiteRefusal(): HttpError {
  return new HttpError(403, CROSS_SITE_CODE, 'This request came from another site. Use the page on our own site instead.');
}

/** Throws crossSiteRefusal() when `request` comes from another site (for routes with `crossSite: 'any'` that check part of their requests). */
export function refuseCrossSite(request: FastifyRequest, options: Pick<CrossSiteOptions, 'publicUrl'>): void {
  if (foreignSite(request, options.publicUrl) !== null) throw crossSiteRefusal();
}

/**
 * The check of every state-changing request, as a root onRequest hook (register before the routes).
 * On `'embed'` routes, a request from an allowed origin also gets the CORS answer (its
 * `Access-Control-Allow-Origin`, errors included), so the embed script on that site can read it.
 */
export function registerCrossSiteGuard(app: FastifyInstance, options: CrossSiteOptions): void {
  const none = new Set<string>();
  const embed = new Set(options.embedOrigins.map((origin) => origin.toLowerCase()));
  app.addHook('onRequest', (request, reply, done) => {
    const policy = request.routeOptions.config?.crossSite;
    if (policy === 'embed') allowEmbedOrigin(request, reply, embed);
    if (!STATE_CHANGING.has(request.method)) return done();
    if (policy === 'any') return done();
    const foreign = foreignSite(request, options.publicUrl, policy === 'embed' ? embed : none);
    done(foreign === null ? undefined : crossSiteRefusal());
  });
}

/**
 * True when a body is there to read: a Content-Length above 0, or a chunked body. (What Fastify
 * itself takes for "no body" when a request has no Content-Type.)
 */
export function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** `application/json`, with no charset or UTF-8 (RFC 8259: JSON between systems is UTF-8). */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const [type = '', ...parameters] = header.split(';');
  if (type.trim().toLowerCase() !== 'application/json') return false;
  return parameters.every((parameter) => {
    const [name = '', value = ''] = parameter.split('=');
    return name.trim().toLowerCase() !== 'charset' || value.trim().replace(/^"|"$/g, '').toLowerCase() === 'utf-8';
  });
}

/** The CORS headers of an answer to one of EMBED_ORIGINS (`Vary: Origin` on every answer of the route). */
function allowEmbedOrigin(request: FastifyRequest, reply: FastifyReply, embed: ReadonlySet<string>): boolean {
  reply.header('vary', 'Origin');
  const origin = headerOf(request, 'origin');
  if (origin === undefined || !embed.has(origin)) return false;
  reply.header('access-control-allow-origin', request.headers.origin as string);
  return true;
}

/** How long a browser may keep a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * `OPTIONS path`: the CORS preflight of an `'embed'` route. An origin of EMBED_ORIGINS asking to POST
 * with a Content-Type (JSON) gets 204 and the permission; any other origin, method or header gets
 * 403 without it, so the browser does not send the request.
 */
export function registerEmbedPreflight(app: FastifyInstance, path: string, options: Pick<CrossSiteOptions, 'embedOrigins'>): void {
  const embed = new Set(options.embedOrigins.map((origin) => origin.toLowerCase()));
  app.options(path, async (request, reply) => {
    const method = headerOf(request, 'access-control-request-method');
    const headers = (headerOf(request, 'access-control-request-headers') ?? '').split(',').map((h) => h.trim()).filter(Boolean);
    const allowed = allowEmbedOrigin(request, reply, embed) && method === 'post' && headers.every((h) => h === 'content-type');
    reply.header('cache-control', 'no-store');
    if (!allowed) {
      reply.removeHeader('access-control-allow-origin');
      return reply.status(403).send();
    }
    return reply
      .status(204)
      .header('access-control-allow-methods', 'POST')
      .header('access-control-allow-headers', 'Content-Type')
      .header('access-control-max-age', PREFLIGHT_MAX_AGE_SECONDS)
      .send();
  });
}
