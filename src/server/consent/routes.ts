import { LINK_RESULT_FILES } from '../../shared/site/pages.js';
import formbody from '@fastify/formbody';
import rateLimit from '@fastify/rate-limit';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { scrubDeletedRowsSoon } from '../db/database.js';
import { HttpError } from '../http/errors.js';
import { pageTemplateLoader, renderErrorPage } from '../http/error-page.js';
import { fastifyRateLimitStore } from '../rate-limit/fastify-store.js';
import { refuseCrossSite } from '../http/cross-site.js';
import { siteContent } from '../../shared/site/content.js';
import {
  CONFIRM_API_PATH,
  CONFIRM_PAGE_PATH,
  ERASE_API_PATH,
  ERASE_LINK_API_PATH,
  ERASE_PAGE_PATH,
  isLinkErrorCode,
  LINK_ERRORS,
  LINK_TOKEN_MAX_LENGTH,
  LINK_TOKEN_PARAM,
  ONE_CLICK_FIELD,
  ONE_CLICK_VALUE,
  PREFERENCES_ACTION_FIELD,
  PREFERENCES_API_PATH,
  PREFERENCES_PAGE_PATH,
  UNSUBSCRIBE_ALL_API_PATH,
  UNSUBSCRIBE_API_PATH,
  type LinkPurpose,
} from '../../shared/waitlist/consent-contract.js';
import {
  confirmResultSchema,
  eraseLinkSentSchema,
  eraseResultSchema,
  linkTokenRequestSchema,
  preferencesViewSchema,
  unsubscribeAllResultSchema,
  unsubscribeResultSchema,
} from './schema.js';
import { LEAVE_ALL_WORDS } from '../../shared/lists/contract.js';
import { SIGNUP_FORM_FAILURES } from '../../shared/waitlist/signup-contract.js';
import { confirmEntry, entryIdOfToken, eraseEntry, linkError, linkOfToken, preferencesOf, sendErasureLink, unsubscribeEntry, unsubscribeEverywhere, type ConsentDeps } from './service.js';
import { registerWaitlistEmails } from './emails/index.js';
import { verifyLinkToken } from './links.js';
import { isRestoreToken, restoreAddress } from './restore.js';

/**
 * The routes behind the links in e-mails (contract: src/shared/waitlist/consent-contract.ts):
 * - the JSON API of the pages with JavaScript: POST /api/waitlist/{confirm,preferences,unsubscribe,erase-link,erase} {token};
 * - the same-URL posts: POST /confirm?token= (the Confirm page's form without JavaScript),
 *   POST /unsubscribe?token= (RFC 8058 one-click from the mail provider, or the preferences page's
 *   form without JavaScript) and POST /erase?token= (the erasure page's form). The GET pages are the
 *   site's (site/routes.ts); a GET never changes anything, since mail scanners prefetch links.
 * The manage link (every e-mail, List-Unsubscribe) only unsubscribes and asks for an erasure link;
 * only the erasure link, e-mailed at that moment and valid an hour, erases (security review, finding 6).
 * Every route is rate limited per client address; every refusal is a 4xx that changes nothing.
 */

/** A link's request is a token and a word or two. */
const LINK_BODY_LIMIT = 8 * 1024;

/** Routes of this file that answer pages (HTML, or plain text to a one-click unsubscribe), not JSON. */
const PAGE_PATHS: ReadonlySet<string> = new Set([CONFIRM_PAGE_PATH, PREFERENCES_PAGE_PATH, ERASE_PAGE_PATH]);

type Fields = Record<string, unknown>;

function fieldsOf(body: unknown): Fields {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Fields) : {};
}

/** The token of a same-URL post: the link's `?token=`, or a `token` field of the form. */
function tokenOf(request: FastifyRequest): unknown {
  const fromQuery = fieldsOf(request.query)[LINK_TOKEN_PARAM];
  return fromQuery !== undefined ? fromQuery : fieldsOf(request.body)[LINK_TOKEN_PARAM];
}

/** RFC 8058: the mail provider's POST carries `List-Unsubscribe=One-Click`. */
function isOneClick(request: FastifyRequest): boolean {
  return fieldsOf(request.body)[ONE_CLICK_FIELD] === ONE_CLICK_VALUE;
}

/**
 * The text fields of a multipart/form-data body (RFC 8058 says a one-click POST SHOULD be sent
 * that way); enough for a few short fields, which is all a link's post has. Null when malformed.
 */
export function parseMultipartFields(body: string, contentType: string | undefined): Fields | null {
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType ?? '');
  const boundary = match?.[1] ?? match?.[2];
  if (!boundary) return null;
  const fields: Fields = Object.create(null) as Fields;
  for (const part of body.split(`--${boundary}`).slice(1)) {
    if (part.startsWith('--')) break;
    const split = /\r?\n\r?\n/.exec(part);
    if (!split) continue;
    const head = part.slice(0, split.index);
    const name = /content-disposition:\s*form-data;(?:[^\r\n]*;)?\s*name="([^"]*)"/i.exec(head)?.[1];
    if (name !== undefined && !(name in fields)) fields[name] = part.slice(split.index + split[0].length).replace(/\r?\n$/, '');
  }
  return fields;
}

export const consentRoutes: FastifyPluginAsync = async (app) => {
  // The confirmation, welcome and invite e-mails (./emails, with these routes' links) render when the outbox worker sends them.
  registerWaitlistEmails(app);
  // Registered in this plugin's scope only, like the signup's.
  await app.register(formbody, { bodyLimit: LINK_BODY_LIMIT });
  app.addContentTypeParser('multipart/form-data', { parseAs: 'string', bodyLimit: LINK_BODY_LIMIT }, (request, body, done) => {
    const fields = parseMultipartFields(body as string, request.headers['content-type']);
    if (fields) done(null, fields);
    else done(new HttpError(400, 'bad_request', 'The form data could not be read.'), undefined);
  });
  app.removeContentTypeParser('text/plain');
  await app.register(rateLimit, {
    global: false,
    // Counted apart from signups (key kind `link`) in the same store (memory, database or Redis).
    store: fastifyRateLimitStore(app.rateLimits.signups, 'link'),
  });

  const deps = (): ConsentDeps => ({ db: app.database.db, box: app.secretBox, mail: app.mail, webhooks: app.webhooks, welcome: app.config.consent.welcome });
  /** After an erasure: open admin pages refresh, the deleted row leaves the disk, and the log line names no one. */
  const afterErasure = (request: FastifyRequest) => {
    app.liveWaitlist.changed('deleted');
    scrubDeletedRowsSoon(app.database.db, request.log);
    request.log.info("waitlist: entry erased at the person's request");
  };
  // Outcomes on the success page (a check mark), refusals on the error page (LINK_RESULT_FILES).
  const loadSuccess = pageTemplateLoader(app, LINK_RESULT_FILES.success);
  const loadError = pageTemplateLoader(app, LINK_RESULT_FILES.error);
  const { max, windowMs } = app.config.signupRateLimit;
  const rateLimitConfig = {
    max,
    timeWindow: windowMs,
    ipv6Subnet: 64,
    // After the body is read, so a one-click post with a good token can pass (allowList below).
    hook: 'preHandler' as const,
    errorResponseBuilder: () => linkError('rate_limited'),
  };

  const sendPage = async (reply: FastifyReply, status: number, text: { title: string; message: string }) =>
    reply
      .status(status)
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(renderErrorPage(await (status < 300 ? loadSuccess : loadError)(), text.title, text.message));
  const sendPlain = (reply: FastifyReply, status: number, text: string) =>
    reply.status(status).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(`${text}\n`);

  // The same-URL posts answer a page (or plain text to a one-click client) for every error too;
  // the JSON API falls through to the app's JSON error handler.
  app.setErrorHandler(async (err: FastifyError | HttpError, request, reply) => {
    if (!PAGE_PATHS.has(request.routeOptions.url ?? '')) throw err;
    const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) request.log.error({ err }, 'request failed');
    const text =
      err instanceof HttpError && isLinkErrorCode(err.code)
        ? LINK_ERRORS[err.code]
        : status === 413
          ? SIGNUP_FORM_FAILURES.tooLarge
          : SIGNUP_FORM_FAILURES.other;
    if (isOneClick(request)) return sendPlain(reply, status, text.message);
    return sendPage(reply, status, text);
  });

  // ------------------------------------------------------------------------------------------
  // JSON API: POST {token}

  const api = app.withTypeProvider<ZodTypeProvider>();
  const apiOptions = <R>(response: R) => ({
    bodyLimit: LINK_BODY_LIMIT,
    schema: { body: linkTokenRequestSchema, response: { 200: response } },
    // A missing or malformed token is the link's fault: link_invalid, not a generic validation error.
    attachValidation: true,
    config: { rateLimit: rateLimitConfig },
  });
  const linkOf = (request: { validationError?: Error; body: { token: string } }, purposes: readonly LinkPurpose[]) => {
    if (request.validationError) throw linkError('link_invalid');
    return linkOfToken(deps(), request.body.token, purposes);
  };
  const entryIdOf = (request: { validationError?: Error; body: { token: string } }, purpose: LinkPurpose): string => linkOf(request, [purpose]).entryId;
  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

  /** A confirm link with a restore token ("confirm it's you", restore.ts): the address comes back. */
  const restore = async (request: FastifyRequest, token: string) => {
    const restored = await restoreAddress({ db: app.database.db, box: app.secretBox, mail: app.mail, welcome: app.config.consent.welcome, consentRecord: app.records.consentRecord, refuse: linkError }, token, request.ip);
    if (restored.created && restored.entryId) app.liveWaitlist.signedUp(restored.entryId);
    else if (restored.outcome === 'confirmed') app.liveWaitlist.changed('confirmed');
    request.log.info({ outcome: restored.outcome }, 'waitlist: restore link used');
    return restored.outcome;
  };

  api.post(CONFIRM_API_PATH, apiOptions(confirmResultSchema), async (request, reply) => {
    if (!request.validationError && isRestoreToken(request.body.token)) return noStore(reply).send({ outcome: await restore(request, request.body.token) });
    const entryId = entryIdOf(request, 'confirm');
    const outcome = await confirmEntry(deps(), entryId, request.ip);
    if (outcome === 'confirmed') app.liveWaitlist.changed('confirmed');
    request.log.info({ entryId, outcome }, 'waitlist: confirmation link used');
    return noStore(reply).send({ outcome });
  });
  // The preferences page (a manage link) and the erasure page (an erase link) both show whose link it is.
  api.post(PREFERENCES_API_PATH, apiOptions(preferencesViewSchema), async (request, reply) => {
    return noStore(reply).send(await preferencesOf(deps(), linkOf(request, ['manage', 'erase'])));
  });
  api.post(UNSUBSCRIBE_API_PATH, apiOptions(unsubscribeResultSchema), async (request, reply) => {
    const entryId = entryIdOf(request, 'manage');
    const outcome = await unsubscribeEntry(deps(), entryId);
    if (outcome === 'unsubscribed') app.liveWaitlist.changed('unsubscribed');
    request.log.info({ entryId, outcome }, 'waitlist: unsubscribed by link');
    return noStore(reply).send({ outcome });
  });
  // Leave every list the address is on (issue 31).
  api.post(UNSUBSCRIBE_ALL_API_PATH, apiOptions(unsubscribeAllResultSchema), async (request, reply) => {
    const lists = await unsubscribeEverywhere(deps(), entryIdOf(request, 'manage'));
    app.liveWaitlist.changed('unsubscribed');
    request.log.info({ lists }, 'waitlist: unsubscribed from every list by link');
    return noStore(reply).send({ outcome: 'unsubscribed' as const, lists });
  });
  api.post(ERASE_LINK_API_PATH, apiOptions(eraseLinkSentSchema), async (request, reply) => {
    const sent = await sendErasureLink(deps(), entryIdOf(request, 'manage'));
    request.log.info('waitlist: erasure link requested');
    return noStore(reply).send(sent);
  });
  api.post(ERASE_API_PATH, apiOptions(eraseResultSchema), async (request, reply) => {
    const outcome = await eraseEntry(deps(), entryIdOf(request, 'erase'));
    afterErasure(request);
    return noStore(reply).send({ outcome });
  });

  // ------------------------------------------------------------------------------------------
  // Same-URL posts (no JavaScript, and RFC 8058 one-click)

  app.post(CONFIRM_PAGE_PATH, { bodyLimit: LINK_BODY_LIMIT, config: { rateLimit: rateLimitConfig } }, async (request, reply) => {
    const token = tokenOf(request);
    let outcome;
    if (isRestoreToken(token) && token.length <= LINK_TOKEN_MAX_LENGTH) outcome = await restore(request, token);
    else {
      const entryId = entryIdOfToken(deps(), token, 'confirm');
      outcome = await confirmEntry(deps(), entryId, request.ip);
      if (outcome === 'confirmed') app.liveWaitlist.changed('confirmed');
      request.log.info({ entryId, outcome }, 'waitlist: confirmation link used');
    }
    return sendPage(reply, 200, outcome === 'confirmed' ? siteContent.confirmPage.confirmed : siteContent.confirmPage.alreadyConfirmed);
  });

  app.post(
    PREFERENCES_PAGE_PATH,
    {
      bodyLimit: LINK_BODY_LIMIT,
      config: {
        rateLimit: {
          ...rateLimitConfig,
          // Mail providers send the one-click posts of many people from few addresses: a post with
          // a good manage token is never refused for the rate; anything else counts.
          allowList: (request: FastifyRequest) => isOneClick(request) && verifyLinkToken(app.secretBox, tokenOf(request), 'manage').ok,
        },
        // RFC 8058: mail providers post the one-click unsubscribe from their own servers; the page's
        // own form is refused from another site below, once the body says which it is.
        crossSite: 'any',
      },
    },
    async (request, reply) => {
      const oneClick = isOneClick(request);
      if (!oneClick) refuseCrossSite(request, app.config);
      const action = fieldsOf(request.body)[PREFERENCES_ACTION_FIELD];
      if (!oneClick && action !== 'unsubscribe' && action !== 'erase' && action !== 'unsubscribe_all') throw linkError('link_invalid');
      const entryId = entryIdOfToken(deps(), tokenOf(request), 'manage');
      if (action === 'erase' && !oneClick) {
        // The manage link does not erase: it e-mails the erasure link.
        const sent = await sendErasureLink(deps(), entryId);
        request.log.info('waitlist: erasure link requested');
        const { title, message } = siteContent.preferencesPage.eraseLink.sent;
        return sendPage(reply, 200, { title, message: message.replace('{email}', sent.email) });
      }
      if (action === 'unsubscribe_all' && !oneClick) {
        await unsubscribeEverywhere(deps(), entryId);
        app.liveWaitlist.changed('unsubscribed');
        request.log.info('waitlist: unsubscribed from every list by link');
        return sendPage(reply, 200, LEAVE_ALL_WORDS.done);
      }
      const outcome = await unsubscribeEntry(deps(), entryId);
      if (outcome === 'unsubscribed') app.liveWaitlist.changed('unsubscribed');
      request.log.info({ entryId, outcome, oneClick }, 'waitlist: unsubscribed by link');
      const { done, already } = siteContent.preferencesPage.unsubscribe;
      const text = outcome === 'unsubscribed' ? done : already;
      if (oneClick) return sendPlain(reply, 200, text.title);
      return sendPage(reply, 200, text);
    },
  );

  // The erasure page's form without JavaScript: erases with the erasure link's token.
  app.post(ERASE_PAGE_PATH, { bodyLimit: LINK_BODY_LIMIT, config: { rateLimit: rateLimitConfig } }, async (request, reply) => {
    await eraseEntry(deps(), entryIdOfToken(deps(), tokenOf(request), 'erase'));
    afterErasure(request);
    return sendPage(reply, 200, siteContent.preferencesPage.erase.done);
  });
};
