import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { HttpError } from '../http/errors.js';
import { countWaitlist } from '../db/waitlist-filter.js';
import { listWaitlistPage } from '../db/waitlist-keyset.js';
import { decodeCursor, encodeCursor } from './repository.js';
import { queryFilter } from './selection.js';
import type { WaitlistPage } from '../../shared/admin/waitlist-api.js';
import { isEmptyFilter } from '../../shared/admin/waitlist-filter.js';

/**
 * One page of the waitlist for a list query (waitlistPageQuerySchema: limit, cursor and the
 * filter), newest first in keyset order: the admin's table, and the API's GET /api/v1/entries.
 * The route runs checkQueryFilter first, so a bad filter is a 400 invalid_filter; a cursor this
 * server did not issue is a 400 invalid_cursor.
 */
export async function readWaitlistPage(db: Kysely<Database>, query: { limit: number; cursor?: string | undefined }): Promise<WaitlistPage> {
  const filter = queryFilter(query);
  let after = null;
  if (query.cursor !== undefined) {
    after = decodeCursor(query.cursor);
    if (!after) throw new HttpError(400, 'invalid_cursor', 'The cursor is not valid. Start again from the first page.');
  }
  // Taken before the reads: a select-all sent with this as `until` then never includes someone
  // who joined after the counts were taken (at worst it leaves out one who joined meanwhile).
  const asOf = new Date().toISOString();
  // The counts are for the count line, shown from the first page: the pages after it skip them
  // (at a million entries a count is a read of a whole index). Without a filter, one count.
  const firstPage = after === null;
  const [page, total, matchingCount] = await Promise.all([
    listWaitlistPage(db, { limit: query.limit, after, filter }),
    firstPage ? countWaitlist(db, filter.list ? { list: filter.list } : {}) : null,
    firstPage && !isEmptyFilter(filter) ? countWaitlist(db, filter) : null,
  ]);
  return {
    entries: page.entries,
    total,
    matching: matchingCount ?? total,
    asOf,
    nextCursor: page.next ? encodeCursor(page.next) : null,
  };
}
