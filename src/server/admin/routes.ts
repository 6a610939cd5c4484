import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requireAdmin, type AdminPrincipal } from '../auth/require-admin.js';
import { recordAudit } from '../audit/audit-log.js';
import { HttpError } from '../http/errors.js';
import {
  UUID_PATTERN,
  countWaitlist,
  decodeCursor,
  deleteWaitlistEntries,
  encodeCursor,
  iterateAllWaitlist,
  iterateSelectedWaitlist,
  listWaitlistPage,
} from '../waitlist/admin-repository.js';
import {
  ADMIN_PAGE_MAX,
  ADMIN_WAITLIST_PATH,
  ADMIN_DEFAULT_PAGE_SIZE,
  ADMIN_MAX_IDS,
  type DeleteRequest,
  type DeleteResult,
  type ExportRequest,
  type WaitlistPage,
} from '../../shared/admin/waitlist-api.js';
import { EXPORT_FILE_NAMES } from '../../shared/waitlist/csv-columns.js';
import { isKnownTimeZone } from '../../shared/waitlist/display.js';
import { CSV_CONTENT_TYPE, waitlistCsvChunks } from './csv.js';

/** 100,000 UUIDs as JSON are about 3.9 MB; twice that leaves room without inviting abuse. */
const IDS_BODY_LIMIT = 8 * 1024 * 1024;

const entrySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'email', 'created_at', 'ip_address', 'country', 'city', 'region'],
  properties: {
    id: { type: 'string' },
    email: { type: 'string' },
    created_at: { type: 'string' },
    ip_address: { type: ['string', 'null'] },
    country: { type: ['string', 'null'] },
    city: { type: ['string', 'null'] },
    region: { type: ['string', 'null'] },
  },
} as const;

const idsSchema = {
  type: 'array',
  minItems: 1,
  maxItems: ADMIN_MAX_IDS,
  items: { type: 'string', pattern: UUID_PATTERN },
} as const;

/** Pulls the first item now and replays it, so errors in the first read surface before streaming starts. */
async function startIteration<T>(source: AsyncGenerator<T>): Promise<AsyncGenerator<T>> {
  const first = await source.next();
  return (async function* () {
    if (first.done) return;
    yield first.value;
    yield* source;
  })();
}

/** The signed-in admin of each request, set by the scope's onRequest hook. */
const principals = new WeakMap<FastifyRequest, AdminPrincipal>();

function principalOf(request: FastifyRequest): AdminPrincipal {
  const principal = principals.get(request);
  // Unreachable while the hook is in place; fail closed if someone removes it.
  if (!principal) throw new HttpError(401, 'unauthorized', 'Sign in as an admin to continue.');
  return principal;
}

/**
 * The admin waitlist API (contract: src/shared/admin/waitlist-api.ts). Every route in this scope
 * is admin-only: the check runs in onRequest, before the body is read or validated, so an
 * anonymous caller can neither make the server parse megabytes of JSON nor learn the schema.
 */
export async function adminWaitlistRoutes(app: FastifyInstance): Promise<void> {
  const { db } = app.database;

  app.addHook('onRequest', async (request, reply) => {
    // Waitlist data is personal data: never cached, including error answers.
    reply.header('cache-control', 'no-store');
    principals.set(request, await requireAdmin(request));
  });

  app.get<{ Querystring: { limit: number; cursor?: string }; Reply: WaitlistPage }>(
    ADMIN_WAITLIST_PATH,
    {
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            limit: { type: 'integer', minimum: 1, maximum: ADMIN_PAGE_MAX, default: ADMIN_DEFAULT_PAGE_SIZE },
            cursor: { type: 'string', minLength: 1, maxLength: 200 },
          },
        },
        response: {
          200: {
            type: 'object',
            additionalProperties: false,
            required: ['entries', 'total', 'nextCursor'],
            properties: {
              entries: { type: 'array', items: entrySchema },
              total: { type: 'integer' },
              nextCursor: { type: ['string', 'null'] },
            },
          },
        },
      },
    },
    async (request) => {
      let after = null;
      if (request.query.cursor !== undefined) {
        after = decodeCursor(request.query.cursor);
        if (!after) throw new HttpError(400, 'invalid_cursor', 'The cursor is not valid. Start again from the first page.');
      }
      const [page, total] = await Promise.all([
        listWaitlistPage(db, { limit: request.query.limit, after }),
        countWaitlist(db),
      ]);
      return { entries: page.entries, total, nextCursor: page.next ? encodeCursor(page.next) : null };
    },
  );

  app.post<{ Body: DeleteRequest; Reply: DeleteResult }>(
    `${ADMIN_WAITLIST_PATH}/delete`,
    {
      bodyLimit: IDS_BODY_LIMIT,
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['ids'],
          properties: { ids: idsSchema },
        },
        response: {
          200: {
            type: 'object',
            additionalProperties: false,
            required: ['deleted'],
            properties: { deleted: { type: 'array', items: entrySchema } },
          },
        },
      },
    },
    async (request) => {
      const admin = principalOf(request);
      // One transaction: the rows go and the audit record is written together, or neither.
      const deleted = await db.transaction().execute(async (trx) => {
        const rows = await deleteWaitlistEntries(trx, request.body.ids);
        await recordAudit(trx, {
          action: 'delete',
          actorEmail: admin.email,
          actorId: admin.userId,
          ip: request.ip,
          detail: { count: rows.length, requested: request.body.ids.length, emails: rows.map((r) => r.email) },
        });
        return rows;
      });
      request.log.info({ deleted: deleted.length, actor: admin.userId }, 'waitlist entries deleted');
      return { deleted };
    },
  );

  app.post<{ Body: ExportRequest }>(
    `${ADMIN_WAITLIST_PATH}/export`,
    {
      bodyLimit: IDS_BODY_LIMIT,
      // No body at all means "everything, in UTC", the same as `{}`.
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            ids: idsSchema,
            timeZone: { type: 'string', minLength: 1, maxLength: 100 },
          },
        },
      },
    },
    async (request, reply) => {
      const admin = principalOf(request);
      const body = request.body;
      const timeZone = body.timeZone ?? 'UTC';
      if (!isKnownTimeZone(timeZone)) {
        throw new HttpError(400, 'invalid_time_zone', `Unknown time zone "${timeZone}". Use an IANA name such as Europe/Berlin.`);
      }
      const scope = body.ids ? 'selected' : 'all';
      // The first batch is read before any byte is sent, so a database failure at the start is a
      // proper 500 answer rather than a cut-off download.
      const batches = await startIteration(body.ids ? iterateSelectedWaitlist(db, body.ids) : iterateAllWaitlist(db));

      // Rows are read, formatted and sent one batch at a time; the audit record is written once
      // the stream ends (or stops early), with the number of rows actually written.
      let rows = 0;
      let completed = false;
      async function* file(): AsyncGenerator<string> {
        try {
          for await (const chunk of waitlistCsvChunks(batches, timeZone, (n) => (rows += n))) yield chunk;
          completed = true;
        } finally {
          try {
            await recordAudit(db, {
              action: 'export',
              actorEmail: admin.email,
              actorId: admin.userId,
              ip: request.ip,
              detail: { count: rows, scope, timeZone, ...(completed ? {} : { incomplete: true }) },
            });
          } catch (err) {
            request.log.error({ err }, 'could not record the export in the audit log');
          }
        }
      }

      return reply
        .type(CSV_CONTENT_TYPE)
        .header('content-disposition', `attachment; filename="${EXPORT_FILE_NAMES[scope]}"`)
        .send(Readable.from(file(), { objectMode: false }));
    },
  );
}
