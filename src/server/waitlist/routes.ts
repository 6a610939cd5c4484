import fs from 'node:fs/promises';
import path from 'node:path';
import formbody from '@fastify/formbody';
import rateLimit from '@fastify/rate-limit';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Geolocator } from '../geolocation/geolocator.js';
import { HttpError } from '../http/errors.js';
import { fastifyRateLimitStore } from '../rate-limit/fastify-store.js';
import { PAGES, SIGNUP_ERROR_FILE } from '../../shared/site/pages.js';
import {
  isSignupErrorCode,
  SIGNUP_BODY_LIMIT,
  SIGNUP_ERRORS,
  SIGNUP_FORM_FAILURES,
  SIGNUP_PATH,
} from '../../shared/waitlist/signup-contract.js';
import { signupCodeOf, signupRequestSchema, signupSuccessSchema } from '../../shared/waitlist/signup-schema.js';
import { isHoneypotFilled, signUp, signupError } from './signup.js';

export interface WaitlistRoutesOptions {
  geolocator: Geolocator;
}

/** Used when the build's signup error page is absent (tests, `npm run dev` without a web build). */
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
    return { title: isSignupErrorCode(err.code) ? SIGNUP_ERRORS[err.code].title : SIGNUP_FORM_FAILURES.other.title, message: err.message };
  }
  return status === 413 ? SIGNUP_FORM_FAILURES.tooLarge : SIGNUP_FORM_FAILURES.other;
}

/** A stored signup, and a filled honeypot alike: 303 to /thanks for the form, 201 for API clients. */
function answerJoined(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.header('cache-control', 'no-store');
  if (isFormPost(request)) return reply.status(303).header('location', PAGES.thanks.path).send();
  return reply.status(201).send({ status: 'joined' });
}

/**
 * `POST /api/waitlist` (contract: src/shared/waitlist/signup-contract.ts), JSON or urlencoded
 * form, rate limited per client address. JSON errors go through the app's error handler; form
 * posts get the signup error page.
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

  const templatePath = path.join(app.config.webRoot, SIGNUP_ERROR_FILE);
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

  app.withTypeProvider<ZodTypeProvider>().post(
    SIGNUP_PATH,
    {
      bodyLimit: SIGNUP_BODY_LIMIT,
      schema: { body: signupRequestSchema, response: { 201: signupSuccessSchema } },
      // A bad address is answered with its signup code (below), not the generic validation error.
      attachValidation: true,
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
      // The honeypot is looked at before the address, so a bot learns nothing from the answer.
      preValidation: async (request, reply) => {
        if (!isHoneypotFilled(request.body)) return;
        request.log.info({ reason: 'honeypot' }, 'waitlist signup ignored');
        return answerJoined(request, reply);
      },
    },
    async (request, reply) => {
      if (request.validationError) throw signupError(signupCodeOf(request.validationError.validation));
      await signUp({ db: app.database.db, geolocator, log: request.log }, request.body.email, request.ip);
      return answerJoined(request, reply);
    },
  );
};
