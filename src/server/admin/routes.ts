import { Readable } from 'node:stream';
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { scrubDeletedRowsSoon } from '../db/database.js';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod/mini';
import { auditEmailHash, recordAudit } from '../audit/audit-log.js';
import { HttpError } from '../http/errors.js';
import { sendBulkDownload } from '../http/bulk-download.js';
import { BULK_DOWNLOAD_COMPRESSION, helmetHeaders } from '../http/security.js';
import * as queries from '../waitlist/admin-repository.js';
import { countWaitlist } from '../db/waitlist-filter.js';
import { listWaitlistPage } from '../db/waitlist-keyset.js';
import { decodeCursor, deleteMatchingWaitlist, deleteWaitlistEntries, encodeCursor, inviteSelection } from './repository.js';
import {
  auditedAction,
  auditedSelection,
  checkBodySelection,
  checkQueryFilter,
  IDS_BODY_LIMIT,
  queryFilter,
  selectionOf,
  selectionRouteOptions,
} from './selection.js';
import { copyWaitlistCsv } from '../waitlist/export-copy.js';
import {
  beatExportDownload,
  claimExportDownload,
  createExportDownload,
  exportDownloadStatus,
  finishExportDownload,
  HEARTBEAT_MS,
  startExportDownloadSweep,
} from '../waitlist/export-downloads.js';
import { sqliteWaitlistCsv } from '../waitlist/export-sqlite.js';
import { waitlistEmailMessage } from '../consent/index.js';
import {
  ADMIN_DELETE_MATCHING_PATH,
  ADMIN_DELETE_PATH,
  ADMIN_EXPORT_DOWNLOAD_PATH,
  ADMIN_EXPORT_PATH,
  ADMIN_EXPORTS_PATH,
  ADMIN_INVITE_PATH,
  ADMIN_WAITLIST_PATH,
  deleteMatchingResultSchema,
  deleteRequestSchema,
  deleteResultSchema,
  EXPORT_FILE_NAMES,
  exportDownloadFormSchema,
  exportDownloadParamsSchema,
  exportDownloadSchema,
  exportDownloadStatusSchema,
  exportRequestSchema,
  inviteRequestSchema,
  inviteResultSchema,
  MAIL_DISABLED_CODE,
  matchingSelectionSchema,
  waitlistPageQuerySchema,
  waitlistPageSchema,
} from '../../shared/admin/waitlist-api.js';
import { isEmptyFilter } from '../../shared/admin/waitlist-filter.js';
import { CSV_CONTENT_TYPE } from '../../shared/csv.js';
import { isKnownTimeZone } from '../../shared/waitlist/display.js';
import { waitlistCsvChunks } from '../../shared/waitlist/csv.js';
import { ATTRIBUTION_FIELDS } from '../../shared/waitlist/attribution.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';
import type { AdminPrincipal } from '../auth/index.js';

/** Rows per keyset read of an export: fewer round trips than a page, still a few MB at most. */
const EXPORT_BATCH_ROWS = queries.ID_CHUNK_SIZE;

/**
 * The entry fields the export's CSV columns read (src/shared/waitlist/csv.ts): the spec's four
 * columns, and the attribution columns when asked for. Only these are read from the database.
 */
const SPEC_EXPORT_FIELDS = queries.SPEC_EXPORT_COLUMNS;
const ATTRIBUTION_EXPORT_FIELDS = [...SPEC_EXPORT_FIELDS, ...ATTRIBUTION_FIELDS, 'source'] as const satisfies ReadonlyArray<keyof WaitlistEntry>;

/** Pulls the first item now and replays it, so errors in the first read surface before streaming starts. */
async function startIteration<T>(source: AsyncGenerator<T>): Promise<AsyncGenerator<T>> {
  const first = await source.next();
  return (async function* () {
    if (first.done) return;
    yield first.value;
    yield* source;
  })();
}

/** An export's body (both export routes): none at all means "everything, in UTC", the same as `{}`. */
async function checkExportBody(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
  await checkBodySelection(request);
}

/**
 * The admin waitlist API (contract: src/shared/admin/waitlist-api.ts). Every route in this scope
 * is admin-only: the check runs in onRequest, before the body is read or validated, so an
 * anonymous caller can neither make the server parse megabytes of JSON nor learn the schema.
 */
export async function adminWaitlistRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { db } = app.database;

  app.guardAdminScope();

  /** What the audit log keeps of deleted entries: ids and keyed hashes, never the addresses (it must not keep what was erased). */
  const erasedRows = (rows: ReadonlyArray<{ id: string; email: string }>) => ({
    ids: rows.map((r) => r.id),
    email_hashes: rows.map((r) => auditEmailHash(app.secretBox, r.email)),
  });
  /** After a delete has committed: open admin pages refresh and the deleted rows leave the disk. */
  const deletedRows = (request: FastifyRequest) => {
    app.liveWaitlist.changed('deleted');
    scrubDeletedRowsSoon(db, request.log);
  };

  app.get(
    ADMIN_WAITLIST_PATH,
    { preValidation: checkQueryFilter, schema: { querystring: waitlistPageQuerySchema, response: { 200: waitlistPageSchema } } },
    async (request) => {
      const filter = queryFilter(request.query);
      let after = null;
      if (request.query.cursor !== undefined) {
        after = decodeCursor(request.query.cursor);
        if (!after) throw new HttpError(400, 'invalid_cursor', 'The cursor is not valid. Start again from the first page.');
      }
      // Taken before the reads: a select-all sent with this as `until` then never includes someone
      // who joined after the counts were taken (at worst it leaves out one who joined meanwhile).
      const asOf = new Date().toISOString();
      // The counts are for the count line, shown from the first page: the pages after it skip them
      // (at a million entries a count is a read of a whole index). Without a filter, one count.
      const firstPage = after === null;
      const [page, total, matchingCount] = await Promise.all([
        listWaitlistPage(db, { limit: request.query.limit, after, filter }),
        firstPage ? countWaitlist(db) : null,
        firstPage && !isEmptyFilter(filter) ? countWaitlist(db, filter) : null,
      ]);
      return {
        entries: page.entries,
        total,
        matching: matchingCount ?? total,
        asOf,
        nextCursor: page.next ? encodeCursor(page.next) : null,
      };
    },
  );

  app.post(
    ADMIN_DELETE_PATH,
    { bodyLimit: IDS_BODY_LIMIT, schema: { body: deleteRequestSchema, response: { 200: deleteResultSchema } } },
    async (request) => {
      const admin = app.adminOf(request);
      // The rows go and the audit record is written together, or neither.
      const deleted = await auditedAction(db, { admin, ip: request.ip }, 'delete', async (trx, audit) => {
        const rows = await deleteWaitlistEntries(trx, request.body.ids);
        await audit({ count: rows.length, ...auditedSelection(request.body, app.secretBox), ...erasedRows(rows) });
        return rows;
      });
      request.log.info({ deleted: deleted.length, actor: admin.userId }, 'waitlist entries deleted');
      if (deleted.length > 0) deletedRows(request);
      return { deleted };
    },
  );

  app.post(
    ADMIN_DELETE_MATCHING_PATH,
    selectionRouteOptions(matchingSelectionSchema, deleteMatchingResultSchema),
    async (request) => {
      const admin = app.adminOf(request);
      const { filter } = request.body;
      const except = request.body.except ?? [];
      // Every matching row goes with its audit records, or nothing does. The audit keeps ids and
      // keyed hashes like a named delete, one record per batch (at most ID_CHUNK_SIZE ids each, so
      // no record grows with the list), then one with the filter and count.
      const deleted = await auditedAction(db, { admin, ip: request.ip }, 'delete', async (trx, audit) => {
        let parts = 0;
        const count = await deleteMatchingWaitlist(trx, filter, except, async (rows) => {
          parts++;
          await audit({ scope: 'matching', part: parts, count: rows.length, ...erasedRows(rows) });
        });
        await audit({ ...auditedSelection({ filter, except }, app.secretBox), count, parts });
        return count;
      });
      request.log.info({ deleted, actor: admin.userId }, 'matching waitlist entries deleted');
      if (deleted > 0) deletedRows(request);
      return { deleted };
    },
  );

  app.post(
    ADMIN_INVITE_PATH,
    selectionRouteOptions(inviteRequestSchema, inviteResultSchema),
    async (request) => {
      const admin = app.adminOf(request);
      if (!app.mail.enabled) {
        throw new HttpError(409, MAIL_DISABLED_CODE, 'E-mail is off: set SMTP_URL, MAIL_FROM and PUBLIC_URL to send invites.');
      }
      const selection = selectionOf(request.body);
      const invitedAt = new Date().toISOString();
      // The statuses, the queued e-mails and the audit record, or none of them.
      const outcome = await auditedAction(db, { admin, ip: request.ip }, 'invite', async (trx, audit) => {
        const result = await inviteSelection(trx, selection, {
          invitedAt,
          // Only the template's name and the entry's id are stored; the worker renders each invite when it sends it.
          queue: async (entries) => {
            await app.mail.enqueueMany(trx, entries.map((entry) => waitlistEmailMessage('invite', entry)));
          },
        });
        // Counts only: each invited entry keeps its own invited_at.
        await audit({ invited: result.invited, ...auditedSelection(selection, app.secretBox), skipped: result.skipped });
        return result;
      });
      request.log.info({ invited: outcome.invited, skipped: outcome.skipped, actor: admin.userId }, 'waitlist invites queued');
      if (outcome.invited > 0) app.liveWaitlist.changed('invited');
      return { invited: outcome.invited, skipped: outcome.skipped, invitedAt };
    },
  );

  app.post(
    ADMIN_EXPORT_PATH,
    {
      bodyLimit: IDS_BODY_LIMIT,
      compress: BULK_DOWNLOAD_COMPRESSION,
      preValidation: checkExportBody,
      schema: { body: exportRequestSchema },
    },
    async (request, reply) => sendExport(app, request, reply, app.adminOf(request), request.body),
  );

  // The admin page's exports: prepared here with the access token, downloaded by the browser with
  // the ticket (adminExportDownloadRoutes), followed here until they end.
  app.post(
    ADMIN_EXPORTS_PATH,
    {
      bodyLimit: IDS_BODY_LIMIT,
      preValidation: checkExportBody,
      schema: { body: exportRequestSchema, response: { 201: exportDownloadSchema } },
    },
    async (request, reply) => {
      checkTimeZone(request.body.timeZone);
      const admin = app.adminOf(request);
      reply.code(201);
      return createExportDownload(db, admin, request.body);
    },
  );

  app.get(
    `${ADMIN_EXPORTS_PATH}/:id`,
    { schema: { params: exportDownloadParamsSchema, response: { 200: exportDownloadStatusSchema } } },
    async (request) => {
      const status = await exportDownloadStatus(db, request.params.id.toLowerCase(), app.adminOf(request).userId);
      if (!status) throw new HttpError(404, 'not_found', 'No such export download. Export again.');
      return status;
    },
  );
}

/** The site's Content-Security-Policy, but framable by our own pages (the admin page's hidden download frame). */
const DOWNLOAD_CSP = (helmetHeaders().set.find(([name]) => name.toLowerCase() === 'content-security-policy')?.[1] ?? "default-src 'none'").replace(
  "frame-ancestors 'none'",
  "frame-ancestors 'self'",
);

/** The download form's body: one ticket (43 characters) and its field name. */
const DOWNLOAD_FORM_BODY_LIMIT = 1024;

/**
 * The browser's own download of an export (contract: ADMIN_EXPORT_DOWNLOAD_PATH): a form POST of a
 * one-time ticket made by ADMIN_EXPORTS_PATH, answered with the file. Outside the admin guard (the
 * form carries no Authorization header): the ticket is the credential, and the session it was made
 * for must still be active, checked as the guard checks a token's. Whatever happens, the download's
 * status says so, since the page cannot read this answer.
 */
export async function adminExportDownloadRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { db } = app.database;
  await app.register(formbody, { bodyLimit: DOWNLOAD_FORM_BODY_LIMIT });
  const stopSweep = startExportDownloadSweep(db, (err) => app.log.error({ err }, 'could not sweep export downloads'));
  app.addHook('onClose', async () => stopSweep());
  // ICU loads its locale and time zone data with the first date format a process makes (~20 ms):
  // done once the server is up rather than in the first export's time.
  app.addHook('onReady', async () => {
    setImmediate(() => isKnownTimeZone('UTC')).unref();
  });

  app.post(
    ADMIN_EXPORT_DOWNLOAD_PATH,
    { bodyLimit: DOWNLOAD_FORM_BODY_LIMIT, compress: BULK_DOWNLOAD_COMPRESSION, schema: { body: exportDownloadFormSchema } },
    async (request, reply) => {
      // An answer holding personal data, or about a credential: never cached. It loads into the
      // admin page's hidden frame, so that page (our origin only) may frame it.
      reply.header('cache-control', 'no-store');
      reply.raw.setHeader('x-frame-options', 'SAMEORIGIN');
      reply.raw.setHeader('content-security-policy', DOWNLOAD_CSP);
      const claimed = await claimExportDownload(db, request.body.ticket);
      if (!claimed) throw new HttpError(410, 'ticket_used', 'This download was already started, or its link has expired. Export again.');
      // While the answer is open, a heartbeat says it is still being sent (its status turns failed
      // if the heartbeat stops: this server died part way).
      const heartbeat = setInterval(() => {
        beatExportDownload(db, claimed.id).catch((err: unknown) => request.log.error({ err }, 'could not record an export download heartbeat'));
      }, HEARTBEAT_MS);
      heartbeat.unref();
      reply.raw.once('close', () => clearInterval(heartbeat));
      const finish = (outcome: { status: 'done' | 'failed'; rows: number | null; message: string | null }) => {
        clearInterval(heartbeat);
        return finishExportDownload(db, claimed.id, outcome).catch((err: unknown) => request.log.error({ err }, 'could not record how an export download ended'));
      };
      let admin: AdminPrincipal;
      let body: ExportRequest;
      try {
        admin = await app.adminOfSession(request, claimed.userId, claimed.sessionId);
        body = exportRequestSchema.parse(JSON.parse(claimed.request));
        checkTimeZone(body.timeZone);
      } catch (err) {
        await finish({ status: 'failed', rows: null, message: err instanceof HttpError ? err.message : EXPORT_FAILED_MESSAGE });
        throw err;
      }
      return sendExport(app, request, reply, admin, body, (outcome) => void finish(outcome));
    },
  );
}

/** An export request as the route's schema gives it. */
type ExportRequest = z.infer<typeof exportRequestSchema>;

/** An unknown time zone is a 400, before anything is read. */
function checkTimeZone(timeZone: string | undefined): void {
  if (timeZone !== undefined && !isKnownTimeZone(timeZone)) {
    throw new HttpError(400, 'invalid_time_zone', `Unknown time zone "${timeZone}". Use an IANA name such as Europe/Berlin.`);
  }
}

const EXPORT_FAILED_MESSAGE = 'The export could not be completed. Try again.';

/** How an export's answer ended, for a download that follows it (export-downloads.ts). */
type ExportOutcome = { status: 'done' | 'failed'; rows: number; message: string | null };

/**
 * Answers `body`'s export as a CSV download for `admin` (the export route, and a download by
 * ticket), audited when its stream ends; `track`, when given, hears once how the answer ended.
 */
async function sendExport(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  admin: AdminPrincipal,
  body: ExportRequest,
  track?: (outcome: ExportOutcome) => void,
): Promise<FastifyReply> {
  const { db } = app.database;
  const timeZone = body.timeZone ?? 'UTC';
  checkTimeZone(timeZone);
  // Named ids, or a select-all of a (filtered) view: Export Selected; neither: Export All.
  const scope = body.ids || body.filter ? 'selected' : 'all';
  const except = body.except ?? [];
  const attribution = body.attribution === true;
  let rows = 0;
  const counted = (n: number) => (rows += n);
  // The spec's four columns of everything matching (no ids, none excepted) are written from the
  // bytes the database hands over: a COPY on PostgreSQL (export-copy.ts), batches of text on
  // SQLite (export-sqlite.ts); the rest from entries. Either way the first rows are read before
  // any byte is sent, so a database failure at the start is a proper 500 answer rather than a
  // cut-off download.
  const fast = !body.ids && except.length === 0 && !attribution ? { filter: body.filter ?? {}, timeZone, onRows: counted } : null;
  let chunks: AsyncIterableIterator<string | Buffer>;
  try {
    const copied = fast ? ((await copyWaitlistCsv(db, fast)) ?? (await sqliteWaitlistCsv(db, fast))) : null;
    chunks =
      copied ??
      waitlistCsvChunks(
        await startIteration(
          body.ids
            ? queries.iterateSelectedWaitlist(db, body.ids)
            : queries.iterateMatchingWaitlist(db, body.filter ?? {}, except, EXPORT_BATCH_ROWS, attribution ? ATTRIBUTION_EXPORT_FIELDS : SPEC_EXPORT_FIELDS),
        ),
        timeZone,
        counted,
        { attribution },
      );
  } catch (err) {
    track?.({ status: 'failed', rows: 0, message: EXPORT_FAILED_MESSAGE });
    throw err;
  }

  if (track) {
    // The answer's end decides: every byte handed to the connection (done), or closed before
    // (the browser cancelled, the connection dropped, the database failed part way: failed).
    // Told once, here: the two records would otherwise race each other to the database.
    const raw = reply.raw;
    let told = false;
    const tell = (outcome: ExportOutcome) => {
      if (told) return;
      told = true;
      track(outcome);
    };
    raw.once('finish', () => tell(raw.statusCode === 200 ? { status: 'done', rows, message: null } : { status: 'failed', rows, message: EXPORT_FAILED_MESSAGE }));
    raw.once('close', () => {
      if (!raw.writableFinished) tell({ status: 'failed', rows, message: 'The download stopped before the whole file was sent. Export again.' });
    });
  }

  // A response closed before its stream was read still lets go of what the export holds.
  reply.raw.once('close', () => void chunks.return?.());

  // Rows are read, formatted and sent one batch at a time; the audit record is written once
  // the stream ends (or stops early), with the number of rows actually written.
  let completed = false;
  async function* file(): AsyncGenerator<string | Buffer> {
    try {
      yield* chunks;
      completed = true;
    } finally {
      try {
        await recordAudit(db, {
          action: 'export',
          actorEmail: admin.email,
          actorId: admin.userId,
          ip: request.ip,
          detail: {
            count: rows,
            scope,
            timeZone,
            ...(body.filter ? { filter: body.filter, except: except.length } : {}),
            ...(attribution ? { attribution } : {}),
            ...(completed ? {} : { incomplete: true }),
          },
        });
      } catch (err) {
        request.log.error({ err }, 'could not record the export in the audit log');
      }
    }
  }

  reply.type(CSV_CONTENT_TYPE).header('content-disposition', `attachment; filename="${EXPORT_FILE_NAMES[scope]}"`);
  return sendBulkDownload(request, reply, Readable.from(file(), { objectMode: false }));
}
