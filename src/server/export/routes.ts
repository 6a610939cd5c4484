import { finished, Readable } from 'node:stream';
import zlib from 'node:zlib';
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { recordAudit } from '../audit/audit-log.js';
import { HttpError } from '../http/errors.js';
import { helmetHeaders } from '../http/security.js';
import { allowLargeYoungGeneration } from '../runtime/heap.js';
import { auditedFilter, checkBodySelection, IDS_BODY_LIMIT } from '../admin/index.js';
import { csvChunks, type OfferingColumns } from './csv.js';
import { findListBySlug } from '../db/lists.js';
import { amountBands, parseBandKey } from '../../shared/lists/contract.js';
import { exportRows, type ExportBody } from './rows.js';
import {
  beatExportDownload,
  claimExportDownload,
  createExportDownload,
  exportDownloadStatus,
  finishExportDownload,
  HEARTBEAT_MS,
  sweepExportDownloads,
  SWEEP_MS,
  type ExportOutcome,
  type ExportOwner,
} from './tickets.js';
import {
  ADMIN_EXPORT_DOWNLOAD_PATH,
  ADMIN_EXPORT_PATH,
  ADMIN_EXPORTS_PATH,
  EXPORT_FILE_NAMES,
  exportDownloadFormSchema,
  exportDownloadParamsSchema,
  exportDownloadSchema,
  exportDownloadStatusSchema,
  exportRequestSchema,
} from '../../shared/admin/waitlist-api.js';
import { CSV_CONTENT_TYPE } from '../../shared/csv.js';
import { isKnownTimeZone } from '../../shared/waitlist/display.js';
import type { AdminPrincipal } from '../auth/index.js';

/**
 * The CSV export (contract: src/shared/admin/waitlist-api.ts): `POST …/export` answers the file to
 * an API client's token; the admin page prepares a download (`POST …/exports`), has the browser
 * post its one-time ticket (`POST …/exports/download`, tickets.ts) and follows it
 * (`GET …/exports/:id`). The rows come from rows.ts, the text from csv.ts.
 */

/** The download form's body: one ticket (43 characters) and its field name. */
const DOWNLOAD_FORM_BODY_LIMIT = 1024;
const EXPORT_FAILED_MESSAGE = 'The export could not be completed. Try again.';

/**
 * The options of the routes that answer the file: its compression, and an error answer in its
 * place (the rows failed before the first byte went out) that does not claim to be the file.
 *
 * The file (~90 MB of CSV per million rows) is compressed at the fastest levels, off the event loop
 * (zlib's thread pool): zstd for the clients that prefer it (Chromium and Firefox send it; it
 * writes the smallest file for the least CPU, and Chromium reads it fastest), else brotli or gzip.
 * Higher levels cost more CPU than reading the rows (brotli 5: 4.4 s per 90 MB). Decision 017.
 */
export const FILE_ROUTE_OPTIONS = {
  compress: {
    encodings: ['zstd', 'br', 'gzip'] as Array<'zstd' | 'br' | 'gzip'>,
    zlibOptions: { level: 1, chunkSize: 64 * 1024, params: { [zlib.constants.ZSTD_c_compressionLevel]: 1 } },
    brotliOptions: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } },
  },
  onError: async (_request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (reply.raw.headersSent) return;
    // Headers that describe the download rather than an error answer sent in its place.
    for (const name of ['content-encoding', 'content-disposition']) {
      reply.removeHeader(name);
      reply.raw.removeHeader(name);
    }
  },
};

/** The site's Content-Security-Policy, but framable by our own pages (the admin page's hidden download frame). */
const SITE_CSP = helmetHeaders().set.find(([name]) => name.toLowerCase() === 'content-security-policy')?.[1] ?? "default-src 'none'";
const DOWNLOAD_CSP = SITE_CSP.replace("frame-ancestors 'none'", "frame-ancestors 'self'");

/** An export's body: none at all means "everything, in UTC", the same as `{}`; the selection checked as the admin's others. */
export async function checkExportBody(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
  await checkBodySelection(request);
}

/** An unknown time zone is a 400, before anything is read. */
export function checkTimeZone(timeZone: string | undefined): void {
  if (timeZone !== undefined && !isKnownTimeZone(timeZone)) {
    throw new HttpError(400, 'invalid_time_zone', `Unknown time zone "${timeZone}". Use an IANA name such as Europe/Berlin.`);
  }
}

/** The export's routes: those of the admin guard's scope, and the ticket's download outside it. */
export async function exportRoutes(app: FastifyInstance): Promise<void> {
  await app.register(guardedExportRoutes);
  await app.register(ticketDownloadRoutes);
}

async function guardedExportRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { db } = app.database;
  app.guardAdminScope();

  app.post(
    ADMIN_EXPORT_PATH,
    { ...FILE_ROUTE_OPTIONS, config: { role: 'admin' }, bodyLimit: IDS_BODY_LIMIT, preValidation: checkExportBody, schema: { body: exportRequestSchema } },
    async (request, reply) => sendExport(app, request, reply, adminActor(app.adminOf(request)), request.body),
  );

  app.post(
    ADMIN_EXPORTS_PATH,
    {
      config: { role: 'admin' },
      bodyLimit: IDS_BODY_LIMIT,
      preValidation: checkExportBody,
      schema: { body: exportRequestSchema, response: { 201: exportDownloadSchema } },
    },
    async (request, reply) => {
      checkTimeZone(request.body.timeZone);
      reply.code(201);
      return createExportDownload(db, app.adminOf(request), request.body);
    },
  );

  app.get(
    `${ADMIN_EXPORTS_PATH}/:id`,
    { config: { role: 'admin' }, schema: { params: exportDownloadParamsSchema, response: { 200: exportDownloadStatusSchema } } },
    async (request) => {
      const status = await exportDownloadStatus(db, request.params.id.toLowerCase(), { userId: app.adminOf(request).userId });
      if (!status) throw new HttpError(404, 'not_found', 'No such export download. Export again.');
      return status;
    },
  );
}

/**
 * The browser's own download of an export: a form POST of a one-time ticket, outside the admin guard
 * (a form carries no Authorization header): the ticket is the credential, and the session it was
 * made for must still be active, checked as the guard checks a token's.
 */
async function ticketDownloadRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { db } = app.database;
  await app.register(formbody, { bodyLimit: DOWNLOAD_FORM_BODY_LIMIT });
  // Swept now and every SWEEP_MS, by a timer that never keeps the process alive.
  const sweep = () => void sweepExportDownloads(db).catch((err: unknown) => app.log.error({ err }, 'could not sweep export downloads'));
  sweep();
  const sweeper = setInterval(sweep, SWEEP_MS).unref();
  app.addHook('onClose', async () => clearInterval(sweeper));
  // ICU loads its locale and time zone data with the first date format a process makes (~20 ms):
  // done once the server is up rather than in the first export's time.
  app.addHook('onReady', async () => {
    setImmediate(() => isKnownTimeZone('UTC')).unref();
  });

  app.post(
    ADMIN_EXPORT_DOWNLOAD_PATH,
    {
      ...FILE_ROUTE_OPTIONS,
      // The ticket is the credential; adminOfSession checks this role against the admin's, now.
      config: { role: 'admin', adminCredential: 'ticket' },
      bodyLimit: DOWNLOAD_FORM_BODY_LIMIT,
      schema: { body: exportDownloadFormSchema },
    },
    async (request, reply) =>
      downloadByTicket(app, request, reply, request.body.ticket, 'session', async (owner) => {
        if ('apiKeyId' in owner) throw new HttpError(401, 'unauthorized', 'Sign in as an admin to continue.');
        return adminActor(await app.adminOfSession(request, owner.userId, owner.sessionId));
      }),
  );
}

/** Who an export is audited as: the admin (their address and id), or an API key (its id, no address). */
export interface ExportActor {
  email: string | null;
  id: string;
  /** Added to the export's audit record (an API key's `{ api_key_id }`). */
  detail?: Record<string, unknown>;
}

const adminActor = (admin: AdminPrincipal): ExportActor => ({ email: admin.email, id: admin.userId });

/**
 * Answers a one-time ticket's download (the admin page's form, or an API client's POST of its
 * ticket): claims the ticket (`kind`: whose tickets this route takes), has `actorOf` check that its
 * owner may still export (an admin's session still active, an API key not revoked or expired:
 * throws otherwise), and sends the file. Whatever happens, the download's status says so, since
 * the page cannot read this answer.
 */
export async function downloadByTicket(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  ticket: string,
  kind: 'session' | 'api-key',
  actorOf: (owner: ExportOwner) => Promise<ExportActor>,
): Promise<FastifyReply> {
  const { db } = app.database;
  // An answer holding personal data, or about a credential: never cached. It loads into the
  // admin page's hidden frame, so that page (our origin only) may frame it.
  reply.header('cache-control', 'no-store');
  reply.raw.setHeader('x-frame-options', 'SAMEORIGIN');
  reply.raw.setHeader('content-security-policy', DOWNLOAD_CSP);
  const claimed = await claimExportDownload(db, ticket, kind);
  if (!claimed) throw new HttpError(410, 'ticket_used', 'This download was already started, or its link has expired. Export again.');
  // While the answer is open, a heartbeat says it is still being sent (HEARTBEAT_MS; once the
  // download has ended, a late beat changes nothing).
  const heartbeat = setInterval(() => {
    beatExportDownload(db, claimed.id).catch((err: unknown) => request.log.error({ err }, 'could not record an export download heartbeat'));
  }, HEARTBEAT_MS).unref();
  reply.raw.once('close', () => clearInterval(heartbeat));
  const finish = (outcome: ExportOutcome) =>
    finishExportDownload(db, claimed.id, outcome).catch((err: unknown) => request.log.error({ err }, 'could not record how an export download ended'));
  let actor: ExportActor;
  let body: ExportBody;
  try {
    actor = await actorOf(claimed.owner);
    body = exportRequestSchema.parse(JSON.parse(claimed.request));
    checkTimeZone(body.timeZone);
  } catch (err) {
    await finish({ status: 'failed', rows: null, message: err instanceof HttpError ? err.message : EXPORT_FAILED_MESSAGE });
    throw err;
  }
  return sendExport(app, request, reply, actor, body, (outcome) => void finish(outcome));
}

/**
 * Answers `body`'s export as a CSV download for `actor` (the export route, and a download by
 * ticket), audited when its stream ends; `track`, when given, hears once how the answer ended. The
 * first rows are read before any byte is sent, so a database failure at the start is a proper 500.
 */
async function sendExport(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  actor: ExportActor,
  body: ExportBody,
  track?: (outcome: ExportOutcome) => void,
): Promise<FastifyReply> {
  const { db } = app.database;
  const timeZone = body.timeZone ?? 'UTC';
  checkTimeZone(timeZone);
  // Named ids, or a select-all of a (filtered) view: Export Selected; neither: Export All.
  const scope = body.ids || body.filter ? 'selected' : 'all';
  const attribution = body.attribution === true;
  let rows = 0;
  // An offering list's file ends with its List and Intended amount columns (issue 31).
  const slug = body.filter?.list ?? body.list;
  const list = slug && slug !== 'portal' ? await findListBySlug(db, slug) : undefined;
  if (slug && slug !== 'portal' && !list) throw new HttpError(404, 'unknown_list', 'There is no list with this slug.');
  const bands = amountBands(list?.bands ?? null);
  const offering: OfferingColumns | null = list
    ? { name: list.name, amountLabel: (key) => (key ? ((bands.find((b) => b.key === key) ?? parseBandKey(key))?.label ?? '') : '') }
    : null;
  const batches = await exportRows(db, body, !!list).catch((err: unknown) => {
    track?.({ status: 'failed', rows: 0, message: EXPORT_FAILED_MESSAGE });
    throw err;
  });

  // The answer's end decides, once: every byte handed to the connection (done), or closed before
  // (the browser cancelled, the connection dropped, the database failed part way: failed).
  finished(reply.raw, (err) => {
    if (err) track?.({ status: 'failed', rows, message: 'The download stopped before the whole file was sent. Export again.' });
    else track?.(reply.raw.statusCode === 200 ? { status: 'done', rows, message: null } : { status: 'failed', rows, message: EXPORT_FAILED_MESSAGE });
  });
  // A response closed before its stream was read still lets go of what the export holds.
  reply.raw.once('close', () => void batches.return?.());

  // The audit record is written once the stream ends (or stops early), with the rows actually written.
  let completed = false;
  async function* file(): AsyncGenerator<string> {
    // A million rows are ~1 GB of short-lived strings: scavenged in a larger young generation (047).
    const holdAgain = allowLargeYoungGeneration();
    try {
      yield* csvChunks(batches, timeZone, { attribution }, (n) => (rows += n), offering);
      completed = true;
    } finally {
      holdAgain();
      const filter = body.filter ? { filter: auditedFilter(body.filter, app.secretBox), except: (body.except ?? []).length } : {};
      const detail = { count: rows, scope, timeZone, ...filter, ...(list ? { list: list.slug } : {}), ...(attribution ? { attribution } : {}), ...(completed ? {} : { incomplete: true }) };
      await recordAudit(db, { action: 'export', actorEmail: actor.email, actorId: actor.id, ip: request.ip, detail: { ...actor.detail, ...detail } }).catch(
        (err: unknown) => request.log.error({ err }, 'could not record the export in the audit log'),
      );
    }
  }

  reply.type(CSV_CONTENT_TYPE).header('content-disposition', `attachment; filename="${EXPORT_FILE_NAMES[scope]}"`);
  return reply.send(Readable.from(file(), { objectMode: false }));
}
