import { sql, type Expression, type ExpressionBuilder, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import { isPostgres } from './database.js';
import type { KeysetCursor } from './keyset-cursor.js';
import type { Database } from './schema.js';
import { toWaitlistEntry, WAITLIST_COLUMNS } from './waitlist-entries.js';
import { matching, type SearchForm } from './waitlist-filter.js';
import type { WaitlistFilter } from '../../shared/admin/waitlist-filter.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';

/**
 * The waitlist read in keyset order, newest first: created_at DESC, id DESC (the id breaks ties
 * between rows that joined in the same millisecond), which the (created_at DESC, id DESC) index
 * serves. The admin's list, its select-all actions and the export all walk it this way.
 */

/** Keyset position: the exact stored created_at of the last row seen, and its id. */
export type WaitlistCursor = KeysetCursor;

export interface WaitlistPageResult {
  entries: WaitlistEntry[];
  /** Position after the last entry, or null when nothing follows. */
  next: WaitlistCursor | null;
}

/** Rows per statement for `id IN (...)`: far below SQLite's 32,766 and PostgreSQL's 65,535 parameters. */
export const ID_CHUNK_SIZE = 5000;

/**
 * created_at exactly as the database compares it. SQLite stores ISO text, so the stored text is
 * the key. PostgreSQL keeps microseconds, which a JS Date would drop (a cursor rounded to the
 * millisecond skips rows written by now() in an adopted database), so it is rendered as ISO UTC
 * with all six digits.
 */
export function sortKey(db: Kysely<Database>): RawBuilder<string> {
  return isPostgres(db)
    ? sql<string>`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
    : sql<string>`created_at`;
}

/** Newest first by (key, id), the order the database uses. Both are ASCII, so code-unit order matches. */
export function compareKeysDesc(a: { key: string; id: string }, b: { key: string; id: string }): number {
  if (a.key !== b.key) return a.key < b.key ? 1 : -1;
  if (a.id !== b.id) return a.id < b.id ? 1 : -1;
  return 0;
}

/**
 * (created_at, id) < (T, I): the rows after a keyset position, written so both dialects use the
 * index range: the first term bounds the scan, the OR settles ties within the same timestamp.
 */
export function afterPosition(after: WaitlistCursor): (eb: ExpressionBuilder<Database, 'waitlist'>) => Expression<SqlBool> {
  return (eb) =>
    eb.and([eb('created_at', '<=', after.createdAt), eb.or([eb('created_at', '<', after.createdAt), eb('id', '<', after.id)])]);
}

/**
 * One page of the entries matching `filter`, newest first, strictly after `after`. Reads limit + 1
 * rows so the last page has no cursor (the client never fetches an empty page). The cursor is only
 * a position in the list's order, so it stays valid under any filter (and across filter changes).
 */
export async function listWaitlistPage(
  db: Kysely<Database>,
  options: { limit: number; after?: WaitlistCursor | null; filter?: WaitlistFilter; search?: SearchForm },
): Promise<WaitlistPageResult> {
  const { limit, after, filter = {}, search } = options;
  let query = db
    .selectFrom('waitlist')
    .select([...WAITLIST_COLUMNS, sortKey(db).as('sort_key')])
    // An offering list's entries show their intended amount (issue 31); the portal's never have one.
    .$if(!!filter.list && filter.list !== 'portal', (qb) => qb.select('intended_amount'))
    .where(matching(db, filter, search ? { search } : {}))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1);
  if (after) query = query.where(afterPosition(after));
  const rows = await query.execute();
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    entries: pageRows.map(({ sort_key: _key, ...row }) => toWaitlistEntry(row)),
    next: hasMore && last ? { createdAt: last.sort_key, id: last.id } : null,
  };
}

/** Every entry with all its fields, newest first, one keyset page at a time (`npm run db -- export`). */
export async function* iterateAllWaitlist(db: Kysely<Database>, batchSize = ID_CHUNK_SIZE): AsyncGenerator<WaitlistEntry[]> {
  let after: WaitlistCursor | null = null;
  do {
    const page: WaitlistPageResult = await listWaitlistPage(db, { limit: batchSize, after, filter: {}, search: 'inline' });
    if (page.entries.length > 0) yield page.entries;
    after = page.next;
  } while (after);
}

/** The ids once each (a request may name one twice). */
export function uniqueIds(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}

/** `items` in runs of at most `size` (ID_CHUNK_SIZE for the ids of one `id IN (…)` statement). */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
