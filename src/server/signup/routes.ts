import formbody from '@fastify/formbody';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { HttpError } from '../http/errors.js';
import { pageTemplateLoader, renderErrorPage } from '../http/error-page.js';
import { refuseCrossSite } from '../http/cross-site.js';
import { isDatabaseUnavailable } from '../db/database.js';
import { clientRateLimitHook } from '../rate-limit/hook.js';
import { siteContent, type SiteContent } from '../../shared/site/content.js';
import { PAGES } from '../../shared/site/pages.js';
import { attributionFromFormReferer, isEmptyAttribution, normalizeAttribution, type Attribution } from '../../shared/waitlist/attribution.js';
import {
  CONSENT_FIELD,
  isSignupErrorCode,
  LIST_FIELD,
  SIGNUP_BODY_LIMIT,
  SIGNUP_ERRORS,
  SIGNUP_FORM_FAILURES,
  SIGNUP_PATH,
  THANKS_URL_FIELD,
} from '../../shared/waitlist/signup-contract.js';
import { isConsentTicked, isKnownList, signupCodeOf, signupRequestSchema, signupSuccessSchema } from './schema.js';
import { isHoneypotFilled, signupError, signupUnavailable, type SignupStatus } from './service.js';
import type { Signups } from './signups.js';
import { screenSignup } from './screening.js';
import { CHALLENGE_FIELD } from '../../shared/waitlist/challenge-contract.js';
import type { SignupRequest } from '../../shared/waitlist/signup-contract.js';
import { INTENDED_AMOUNT_FIELD, OFFERING_RESULT_PARAM, offeringPath } from '../../shared/lists/contract.js';
import { offeringSignupTarget } from './offering.js';
import { createSignupChallenge } from '../challenge/index.js';

export interface WaitlistRoutesOptions {
  /** Where signups are stored (signups.ts; the API adds its signups through the same one). */
  signups: Signups;
  /** The consent text settings (content.ts `consent` by default; tests pass a checkbox text). */
  consent?: SiteContent['consent'];
}

/** What a 503 tells the client: when to try again. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** The no-JavaScript form posts urlencoded; everything else is an API client and gets JSON. */
export function isFormPost(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  return typeof type === 'string' && type.trim().toLowerCase().startsWith('application/x-www-form-urlencoded');
}

/**
 * Our own origin, which is never a referrer and is the only origin whose Referer a form post's
 * attribution is read from: PUBLIC_URL when configured (already an origin, see config.ts), else the
 * request's protocol and Host (X-Forwarded-Proto/-Host only under TRUST_PROXY, as Fastify reads them).
 */
export function ownOriginOf(request: FastifyRequest, publicUrl: string | null): string | null {
  if (publicUrl) return publicUrl;
  try {
    const origin = new URL(`${request.protocol}://${request.host}`).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/**
 * Where a signup came from (attribution.ts): the fields the form sent with JavaScript (or an API
 * client), cleaned. A form post without any usable field is the no-JavaScript form: the browser's
 * Referer (the landing page's full URL, same origin under our strict-origin-when-cross-origin
 * Referrer-Policy) gives its UTM parameters and landing path. Never throws: bad values are dropped.
 */
export function requestAttribution(
  request: FastifyRequest,
  body: Partial<Record<string, unknown>>,
  publicUrl: string | null,
  embedOrigins: readonly string[] = [],
): Attribution {
  const ownOrigin = ownOriginOf(request, publicUrl);
  // The form on another site (EMBED_ORIGINS, issue 32 point 3): the embedding page's origin is the referrer.
  const embedding = embeddingOrigin(request, embedOrigins);
  if (embedding !== null) return normalizeAttribution({ ...body, referrer: embedding }, ownOrigin);
  const sent = normalizeAttribution(body, ownOrigin);
  if (!isEmptyAttribution(sent) || !isFormPost(request)) return sent;
  return attributionFromFormReferer(request.headers.referer, ownOrigin);
}

/** The request's Origin when it is one of EMBED_ORIGINS (the signup form on an allowed site), else null. */
export function embeddingOrigin(request: FastifyRequest, embedOrigins: readonly string[]): string | null {
  const origin = request.headers.origin;
  if (typeof origin !== 'string') return null;
  const lower = origin.trim().toLowerCase();
  return embedOrigins.find((allowed) => allowed.toLowerCase() === lower) ?? null;
}

/**
 * Where a form post goes once it is stored: the thanks page the embedding site asked for, when the
 * operator allows that exact URL (EMBED_THANKS_URLS) and the form was posted from that site; else our /thanks.
 */
function thanksLocation(request: FastifyRequest, body: unknown, thanksUrls: readonly string[], embedOrigins: readonly string[]): string {
  const asked = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[THANKS_URL_FIELD] : undefined;
  if (typeof asked !== 'string' || asked.length > 2048) return PAGES.thanks.path;
  let href: string;
  try {
    href = new URL(asked.trim()).href;
  } catch {
    return PAGES.thanks.path;
  }
  const embedding = embeddingOrigin(request, embedOrigins);
  return embedding !== null && thanksUrls.includes(href) && new URL(href).origin === embedding ? href : PAGES.thanks.path;
}

function pageTextFor(err: FastifyError | HttpError, status: number): { title: string; message: string } {
  if (status >= 500) return SIGNUP_FORM_FAILURES.other;
  if (err instanceof HttpError) {
    return { title: isSignupErrorCode(err.code) ? SIGNUP_ERRORS[err.code].title : SIGNUP_FORM_FAILURES.other.title, message: err.message };
  }
  return status === 413 ? SIGNUP_FORM_FAILURES.tooLarge : SIGNUP_FORM_FAILURES.other;
}

/**
 * A stored signup, and a filled honeypot alike: 303 to /thanks for the form, 201 for API clients.
 * `pending` (double opt-in on) goes to the same /thanks, which the server then serves in its
 * check-your-inbox variant.
 */
function answerJoined(request: FastifyRequest, reply: FastifyReply, status: SignupStatus): FastifyReply {
  reply.header('cache-control', 'no-store');
  if (isFormPost(request)) {
    const { embedThanksUrls, embedOrigins } = request.server.config;
    return reply.status(303).header('location', thanksLocation(request, request.body, embedThanksUrls, embedOrigins)).send();
  }
  // The same bytes signupSuccessSchema would serialize, written once: a string with a JSON type is sent as is.
  return reply.status(201).header('content-type', JSON_TYPE).send(JOINED_BODIES[status]);
}

const JSON_TYPE = 'application/json; charset=utf-8';
const JOINED_BODIES: Record<SignupStatus, string> = {
  joined: JSON.stringify(signupSuccessSchema.parse({ status: 'joined' })),
  pending: JSON.stringify(signupSuccessSchema.parse({ status: 'pending' })),
};

/**
 * `POST /api/waitlist` (contract: src/shared/waitlist/signup-contract.ts), JSON or urlencoded
 * form, rate limited per client address. JSON errors go through the app's error handler; form
 * posts get the signup error page.
 */
export const waitlistRoutes: FastifyPluginAsync<WaitlistRoutesOptions> = async (app, { signups, consent = siteContent.consent }) => {
  // Registered inside this plugin's scope, so it only touches the signup route.
  await app.register(formbody);
  // Fastify parses text/plain by default; a signup in plain text is a client bug: 415.
  app.removeContentTypeParser('text/plain');

  const loadTemplate = pageTemplateLoader(app);

  // Form posts get an HTML page for every error; API clients fall through to the app's JSON handler.
  app.setErrorHandler(async (err: FastifyError | HttpError, request, reply) => {
    if (!isFormPost(request)) throw err;
    const code = typeof err.statusCode === 'number' ? err.statusCode : 500;
    const status = (code >= 400 && code < 500) || (err instanceof HttpError && code === 503) ? code : 500;
    if (status === 500) request.log.error({ err }, 'request failed');
    const { title, message } = pageTextFor(err, status);
    const page = renderErrorPage(await loadTemplate(), title, message);
    return reply.status(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page);
  });

  const unavailable = (reply: FastifyReply) => {
    reply.header('retry-after', UNAVAILABLE_RETRY_AFTER_SECONDS);
    return signupUnavailable();
  };

  const { max, windowMs } = app.config.signupRateLimit;
  // Counted before the body is read, in the store chosen at start-up (memory on SQLite, else
  // PostgreSQL or Redis, shared by every instance; see rate-limit/index.ts). A failing Redis falls
  // back to memory; a database that cannot count is an outage (503).
  const countSignup = clientRateLimitHook({
    store: app.rateLimits.signups,
    kind: 'signup',
    max,
    windowMs,
    error: () => {
      app.signupScreening.count('rate-limit');
      return signupError('rate_limited');
    },
    storeError: (err, reply) => (isDatabaseUnavailable(err) ? unavailable(reply) : err instanceof Error ? err : new Error(String(err))),
  });

  /**
   * A signup naming an offering list (issue 31): open lists only, the amount one of its bands. The
   * offering page works without JavaScript, so no proof of work is asked (SIGNUP_CHALLENGE applies
   * to the portal's form); the address screening and the rate limit apply as to every signup.
   */
  const offeringSignup = async (request: FastifyRequest, reply: FastifyReply, body: SignupRequest) => {
    try {
      const { list, intendedAmount } = await offeringSignupTarget(app.database.db, body[LIST_FIELD], body[INTENDED_AMOUNT_FIELD]);
      // An offering list is joined on its own page, where the testing-the-waters statements stand
      // beside the form (17 CFR 227.206), or through the keyed API: never from another site's form
      // (EMBED_ORIGINS open the portal's list only).
      refuseCrossSite(request, app.config);
      if (request.validationError) throw signupError(signupCodeOf(request.validationError.validation));
      const refused = await screenSignup(app, request, body.email);
      if (refused) throw refused;
      const attribution = requestAttribution(request, body, app.config.publicUrl, app.config.embedOrigins);
      const { status } = await signups.createOffering(request.log, list, body.email, request.ip, attribution, intendedAmount);
      reply.header('cache-control', 'no-store');
      if (isFormPost(request)) return reply.status(303).header('location', `${offeringPath(list.slug)}?${OFFERING_RESULT_PARAM}=${status}`).send();
      return reply.status(201).header('content-type', JSON_TYPE).send(JOINED_BODIES[status]);
    } catch (err) {
      if (err instanceof HttpError && err.statusCode === 503) throw unavailable(reply);
      throw err;
    }
  };

  // SIGNUP_CHALLENGE=proof-of-work: the solution to spend with the signup, or why it is held (off: neither).
  const checkChallenge = createSignupChallenge(app.secretBox, app.config.challenge);

  app.withTypeProvider<ZodTypeProvider>().post(
    SIGNUP_PATH,
    {
      bodyLimit: SIGNUP_BODY_LIMIT,
      schema: { body: signupRequestSchema, response: { 201: signupSuccessSchema } },
      // A bad address is answered with its signup code (below), not the generic validation error.
      attachValidation: true,
      onRequest: countSignup,
      // The public form: from our pages, and from the other sites EMBED_ORIGINS names (http/cross-site.ts).
      config: { crossSite: 'embed' },
    },
    async (request, reply) => {
      // The honeypot is looked at before the address, so a bot learns nothing from the answer:
      // it is answered like a real signup under the current setting.
      if (isHoneypotFilled(request.body)) {
        request.log.info({ reason: 'honeypot' }, 'waitlist signup ignored');
        return answerJoined(request, reply, app.config.consent.confirmation === 'required' ? 'pending' : 'joined');
      }
      if (request.validationError) throw signupError(signupCodeOf(request.validationError.validation));
      if (!isKnownList(request.body[LIST_FIELD])) return offeringSignup(request, reply, request.body);
      if (consent.checkbox !== null && !isConsentTicked(request.body[CONSENT_FIELD])) throw signupError('consent_required');
      const refused = await screenSignup(app, request, request.body.email);
      if (refused) throw refused;
      try {
        const attribution = requestAttribution(request, request.body, app.config.publicUrl, app.config.embedOrigins);
        const { status, heldFor } = await signups.create(request.log, request.body.email, request.ip, attribution, checkChallenge(request.body[CHALLENGE_FIELD]));
        if (heldFor) {
          // Held (or left unchanged): counted for the insight panel, answered like any signup.
          app.signupScreening.count('no-challenge');
          request.log.info({ reason: heldFor }, 'waitlist signup held');
        }
        return answerJoined(request, reply, status);
      } catch (err) {
        if (err instanceof HttpError && err.statusCode === 503) throw unavailable(reply);
        throw err;
      }
    },
  );
};
