import fs from 'node:fs/promises';
import path from 'node:path';
import formbody from '@fastify/formbody';
import rateLimit from '@fastify/rate-limit';
import type { FastifyError, FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Geolocator } from '../geolocation/geolocator.js';
import { HttpError } from '../http/errors.js';
import { fastifyRateLimitStore } from '../rate-limit/fastify-store.js';
import { SIGNUP_PATH, SIGNUP_TOASTS } from '../../shared/waitlist/signup-contract.js';
import { SIGNUP_ERRORS, signUp, signupError } from './signup.js';

export interface WaitlistRoutesOptions {
  geolocator: Geolocator;
}

/** A signup is one small field; anything bigger is not a signup. */
export const SIGNUP_BODY_LIMIT = 8 * 1024;

/** Used when the build's `signup-error.html` is absent (tests, `npm run dev` without a web build). */
export const FALLBACK_ERROR_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}}</title>
</head>
<body>
<main>
<h1>{{title}}</h1>
<p role="alert">{{message}}</p>
<p><a href="/">Back to the waitlist</a></p>
</main>
</body>
</html>
`;

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

export function renderErrorPage(template: string, title: string, message: string): string {
  // Callback replacements, so a `$` in the text is never read as a replacement pattern.
  return template.replaceAll('{{title}}', () => escapeHtml(title)).replaceAll('{{message}}', () => escapeHtml(message));
}

/** The no-JavaScript form posts urlencoded; everything else is an API client and gets JSON. */
function isFormPost(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  return typeof type === 'string' && type.trim().toLowerCase().startsWith('application/x-www-form-urlencoded');
}

function pageTextFor(err: FastifyError | HttpError, status: number): { title: string; message: string } {
  if (err instanceof HttpError) {
    const known = (SIGNUP_ERRORS as Record<string, { title: string; message: string } | undefined>)[err.code];
    return { title: known?.title ?? SIGNUP_TOASTS.failure.title, message: err.message };
  }
  if (status === 413) return { title: SIGNUP_TOASTS.failure.title, message: 'The form submission is too large.' };
  return { title: SIGNUP_TOASTS.failure.title, message: SIGNUP_TOASTS.failure.description };
}

/**
 * `POST /api/waitlist`, JSON or urlencoded form, rate limited per client address.
 * JSON: 201 `{status:'joined'}` or 4xx `{error:{code,message}}` (via the app's error handler).
 * Form: 303 to /thanks, or the signup error page with the matching status.
 */
export const waitlistRoutes: FastifyPluginAsync<WaitlistRoutesOptions> = async (app, { geolocator }) => {
  // Both plugins are registered inside this plugin's scope, so they only touch the signup route.
  await app.register(formbody);
  await app.register(rateLimit, {
    global: false,
    // Counts in the store chosen at start-up (memory on SQLite, else PostgreSQL or Redis, shared by
    // every instance; see rate-limit/index.ts). A failing Redis falls back, it never throws here.
    store: fastifyRateLimitStore(app.rateLimits.signups, 'signup'),
  });
  // Fastify parses text/plain by default; a signup in plain text is a client bug: 415.
  app.removeContentTypeParser('text/plain');

  const templatePath = path.join(app.config.webRoot, 'signup-error.html');
  let template: Promise<string> | undefined;
  const loadTemplate = (): Promise<string> => {
    template ??= fs.readFile(templatePath, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') app.log.warn({ err, file: templatePath }, 'signup error page unreadable; using the built-in page');
      return FALLBACK_ERROR_PAGE;
    });
    return template;
  };

  // Form posts get an HTML page for every error; API clients fall through to the app's JSON handler.
  app.setErrorHandler(async (err: FastifyError | HttpError, request, reply) => {
    if (!isFormPost(request)) throw err;
    const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) request.log.error({ err }, 'request failed');
    const { title, message } = pageTextFor(err, status);
    const page = renderErrorPage(await loadTemplate(), title, message);
    return reply.status(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page);
  });

  const { max, windowMs } = app.config.signupRateLimit;

  app.post(
    SIGNUP_PATH,
    {
      bodyLimit: SIGNUP_BODY_LIMIT,
      config: {
        rateLimit: {
          max,
          timeWindow: windowMs,
          // Default key: `request.ip` (which honours TRUST_PROXY), IPv4-mapped IPv6 folded to IPv4,
          // IPv6 grouped by /64 since one client usually owns a whole /64.
          ipv6Subnet: 64,
          errorResponseBuilder: () => signupError('rate_limited'),
        },
      },
    },
    async (request, reply) => {
      // A filled honeypot ('ignored') is answered exactly like a success on purpose.
      await signUp({ db: app.database.db, geolocator, log: request.log }, { body: request.body, ip: request.ip });
      reply.header('cache-control', 'no-store');
      if (isFormPost(request)) return reply.status(303).header('location', '/thanks').send();
      return reply.status(201).send({ status: 'joined' });
    },
  );
};
