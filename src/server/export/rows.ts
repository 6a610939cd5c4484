import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { iterateMatchingWaitlist, iterateSelectedWaitlist, SPEC_EXPORT_COLUMNS, type ExportField } from './queries.js';
import type { z } from 'zod/mini';
import type { exportRequestSchema } from '../../shared/admin/waitlist-api.js';
import { ATTRIBUTION_FIELDS } from '../../shared/waitlist/attribution.js';
import { copyExport } from './copy.js';
import type { RowBatch } from './csv.js';

/** An export request as the routes' schema gives it. */
export type ExportBody = z.infer<typeof exportRequestSchema>;

/** Rows per keyset read of entries: small, so that a batch and its text die young (5,000 outlived scavenges; decision 047). */
const ENTRY_BATCH_ROWS = 500;

/** The entry fields the attribution columns read, besides the spec's four columns' (SPEC_EXPORT_COLUMNS). */
const ATTRIBUTION_EXPORT_FIELDS = [...SPEC_EXPORT_COLUMNS, ...ATTRIBUTION_FIELDS, 'source'] as const satisfies readonly ExportField[];

/**
 * `source` with its first item read now and handed out first, so a failure of the first read
 * rejects here, before a download has begun. Its return() reaches `source` (suspended after that
 * first read), whether or not the first item was taken: the response closing early lets go of what
 * the source holds (a COPY's connection).
 */
export async function started<T>(source: AsyncGenerator<T>): Promise<AsyncIterableIterator<T>> {
  let first: IteratorResult<T> | null = await source.next();
  const replay: AsyncIterableIterator<T> = {
    next: () => {
      const item = first;
      first = null;
      return item ? Promise.resolve(item) : source.next();
    },
    return: async () => {
      first = null;
      return source.return(undefined);
    },
    [Symbol.asyncIterator]: () => replay,
  };
  return replay;
}

/**
 * The rows an export request names, newest first, the first batch read. Everything matching a
 * filter (none excepted, the spec's columns) comes from a COPY on PostgreSQL (copy.ts); the rest,
 * and everything on SQLite, as entries with only the fields the file's columns read, in keyset
 * batches (each a synchronous read on SQLite, so other requests run between them). An offering
 * list's file (`withAmount`, issue 31) reads the intended amount too.
 */
export async function exportRows(db: Kysely<Database>, request: ExportBody, withAmount = false): Promise<AsyncIterableIterator<RowBatch>> {
  const except = request.except ?? [];
  const attribution = request.attribution === true;
  const copied = !request.ids && except.length === 0 && !attribution && !withAmount ? await copyExport(db, request.filter ?? {}) : null;
  if (copied) return started(copied);
  const fields = [...(attribution ? ATTRIBUTION_EXPORT_FIELDS : SPEC_EXPORT_COLUMNS), ...(withAmount ? ['intended_amount' as ExportField] : [])];
  const entries = request.ids
    ? iterateSelectedWaitlist(db, request.ids, ENTRY_BATCH_ROWS, withAmount)
    : iterateMatchingWaitlist(db, request.filter ?? {}, except, ENTRY_BATCH_ROWS, fields);
  return started(
    (async function* () {
      for await (const batch of entries) yield { entries: batch };
    })(),
  );
}
