import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { recordAudit } from '../audit/audit-log.js';
import { HttpError } from '../http/errors.js';
import { normalizeIp } from '../geolocation/ip.js';
import { toWaitlistEntry, WAITLIST_COLUMNS } from '../db/waitlist-entries.js';
import { checkQueryFilter, readWaitlistPage } from '../admin/index.js';
import { checkExportBody, checkTimeZone, createExportDownload, downloadByTicket, exportDownloadStatus, FILE_ROUTE_OPTIONS } from '../export/index.js';
import { offeringSignupTarget, ownOriginOf, screenSignup, signupError, signupUnavailable, type Signups } from '../signup/index.js';
import { apiGuard, apiKeyOf, type ApiGuardOptions } from './authenticate.js';
import { findUsableApiKeyById } from './keys.js';
import { API_OPERATIONS } from './operations.js';
import { API_V1_EXPORT_DOWNLOAD_PATH, PORTAL_LIST } from '../../shared/api/v1.js';
import { IDS_BODY_LIMIT } from '../admin/index.js';
import { normalizeAttribution } from '../../shared/waitlist/attribution.js';
import { checkWaitlistEmail } from '../../shared/waitlist/email.js';
import { EMAIL_PROBLEM_CODES, SIGNUP_BODY_LIMIT } from '../../shared/waitlist/signup-contract.js';
import type { SiteContent } from '../../shared/site/content.js';

export interface ApiRoutesOptions extends ApiGuardOptions {
  signups: Signups;
  /** The consent text settings (content.ts `consent`): a checkbox, when there is one, must have been ticked. */
  consent: SiteContent['consent'];
}

const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;
const DOWNLOAD_BODY_LIMIT = 1024;

/** The API's routes (operations.ts): each checks its key and scope before anything is read (authenticate.ts). */
export async function apiV1Routes(instance: FastifyInstance, options: ApiRoutesOptions): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { db } = app.database;
  const { signups, consent } = options;
  const guard = (scope: Parameters<typeof apiGuard>[2]) => apiGuard(app, options, scope);
  await app.register(formbody, { bodyLimit: DOWNLOAD_BODY_LIMIT });
  // A body in plain text is a client bug (415), as on the signup route.
  app.removeContentTypeParser('text/plain');

  const signup = API_OPERATIONS.createSignup;
  app.route({
    method: signup.method,
    url: signup.url,
    bodyLimit: SIGNUP_BODY_LIMIT,
    onRequest: guard(signup.scope),
    schema: { body: signup.body, response: { [signup.success.status]: signup.success.schema } },
    handler: async (request, reply) => {
      const key = apiKeyOf(request);
      const { email, list, intended_amount: amount, ip_address: ipAddress, consent: consented, ...fields } = request.body;
      try {
        // The portal's list, or an open offering list with its amount, checked by the offering page's own rules.
        const offering = list === undefined || list === PORTAL_LIST ? null : await offeringSignupTarget(db, list, amount);
        if (offering === null && amount !== undefined && amount !== '') throw signupError('amount_invalid');
        const check = checkWaitlistEmail(email);
        if (!check.ok) throw signupError(EMAIL_PROBLEM_CODES[check.problem]);
        const ip = ipAddress === undefined ? null : normalizeIp(ipAddress);
        if (ipAddress !== undefined && ip === null) throw new HttpError(400, 'invalid_ip_address', 'ip_address is not an IPv4 or IPv6 address.');
        // The consent checkbox is the portal's form's; an offering page has its statements and no checkbox.
        if (offering === null && consent.checkbox !== null && consented !== true) throw signupError('consent_required');
        // The same domain screening as the form's (throwaway and dead domains: 422).
        const refused = await screenSignup(app, request, check.email);
        if (refused) throw refused;
        const attribution = normalizeAttribution(fields, ownOriginOf(request, app.config.publicUrl));
        const outcome = offering
          ? await signups.createOffering(request.log, offering.list, check.email, ip, attribution, offering.intendedAmount)
          : await signups.create(request.log, check.email, ip, attribution);
        // The key's use that changed data: the entry's id and what happened, never the address.
        // Written once the signup has committed (the group commit holds many signups); a failure
        // here is logged, as the export's is, and never turns a stored signup into an error answer.
        await recordAudit(db, {
          action: 'api_signup',
          actorEmail: null,
          actorId: key.id,
          ip: request.ip,
          detail: { api_key_id: key.id, entry_id: outcome.id, list: offering?.list.slug ?? PORTAL_LIST, status: outcome.status, created: outcome.created },
        }).catch((err: unknown) => request.log.error({ err, apiKeyId: key.id }, 'could not record an API signup in the audit log'));
        return reply.status(201).send({ id: outcome.id, status: outcome.status });
      } catch (err) {
        if (err instanceof HttpError && err.statusCode === 503) throw unavailable(reply);
        throw err;
      }
    },
  });

  const list = API_OPERATIONS.listEntries;
  app.route({
    method: list.method,
    url: list.url,
    onRequest: guard(list.scope),
    preValidation: checkQueryFilter,
    schema: { querystring: list.querystring, response: { [list.success.status]: list.success.schema } },
    handler: async (request) => readWaitlistPage(db, request.query),
  });

  const one = API_OPERATIONS.getEntry;
  app.route({
    method: one.method,
    url: one.url,
    onRequest: guard(one.scope),
    schema: { params: one.params, response: { [one.success.status]: one.success.schema } },
    handler: async (request) => {
      const row = await db.selectFrom('waitlist').select(WAITLIST_COLUMNS).where('id', '=', request.params.id.toLowerCase()).executeTakeFirst();
      if (!row) throw new HttpError(404, 'not_found', 'No entry has this id.');
      return toWaitlistEntry(row);
    },
  });

  const start = API_OPERATIONS.startExport;
  app.route({
    method: start.method,
    url: start.url,
    bodyLimit: IDS_BODY_LIMIT,
    onRequest: guard(start.scope),
    preValidation: checkExportBody,
    schema: { body: start.body, response: { [start.success.status]: start.success.schema } },
    handler: async (request, reply) => {
      checkTimeZone(request.body.timeZone);
      const download = await createExportDownload(db, { apiKeyId: apiKeyOf(request).id }, request.body);
      return reply.status(201).send({ ...download, downloadUrl: API_V1_EXPORT_DOWNLOAD_PATH });
    },
  });

  const follow = API_OPERATIONS.getExport;
  app.route({
    method: follow.method,
    url: follow.url,
    onRequest: guard(follow.scope),
    schema: { params: follow.params, response: { [follow.success.status]: follow.success.schema } },
    handler: async (request) => {
      const status = await exportDownloadStatus(db, request.params.id.toLowerCase(), { apiKeyId: apiKeyOf(request).id });
      if (!status) throw new HttpError(404, 'not_found', 'No export of this key has this id.');
      return status;
    },
  });

  const download = API_OPERATIONS.downloadExport;
  app.route({
    method: download.method,
    url: download.url,
    ...FILE_ROUTE_OPTIONS,
    bodyLimit: DOWNLOAD_BODY_LIMIT,
    schema: { body: download.body },
    handler: async (request, reply) =>
      downloadByTicket(app, request, reply, request.body.ticket, 'api-key', async (owner) => {
        const key = 'apiKeyId' in owner ? await findUsableApiKeyById(db, owner.apiKeyId) : 'unknown';
        if (typeof key === 'string' || !key.scopes.has('export')) {
          throw new HttpError(401, 'unauthorized', 'The API key that started this export is no longer valid.');
        }
        return { email: null, id: key.id, detail: { api_key_id: key.id } };
      }),
  });
}

function unavailable(reply: FastifyReply): HttpError {
  reply.header('retry-after', UNAVAILABLE_RETRY_AFTER_SECONDS);
  return signupUnavailable();
}
