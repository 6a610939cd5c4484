import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isPostgres } from '../db/database.js';
import type { Database } from '../db/schema.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';
import { toWaitlistEntry as toEntry, WAITLIST_COLUMNS } from './repository.js';
import { decodeKeysetCursor, encodeKeysetCursor, type KeysetCursor } from '../db/keyset-cursor.js';

/**
 * Admin reads and deletes on the waitlist. Every function takes `db` or a transaction, and the
 * same queries run on SQLite and PostgreSQL.
 *
 * Order is always newest first: created_at DESC, id DESC (the id breaks ties between rows that
 * joined in the same millisecond), which the (created_at DESC, id DESC) index serves.
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
function sortKey(db: Kysely<Database>): RawBuilder<string> {
  return isPostgres(db)
    ? sql<string>`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
    : sql<string>`created_at`;
}

/** Newest first by (key, id), the order the database uses. Both are ASCII, so code-unit order matches. */
function compareKeysDesc(a: { key: string; id: string }, b: { key: string; id: string }): number {
  if (a.key !== b.key) return a.key < b.key ? 1 : -1;
  if (a.id !== b.id) return a.id < b.id ? 1 : -1;
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Cursors: opaque to clients (base64url JSON), validated strictly so a forged one is a 400 and
// never reaches the database as something PostgreSQL cannot parse.

const TIMESTAMP_RE =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2})(?::?(\d{2}))?)?$/;

function isValidTimestamp(value: string): boolean {
  const m = TIMESTAMP_RE.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = m.slice(1, 9).map((p) => Number(p ?? 0)) as number[];
  const date = new Date(Date.UTC(year!, month! - 1, day!));
  return (
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month! - 1 &&
    date.getUTCDate() === day &&
    hour! <= 23 &&
    minute! <= 59 &&
    second! <= 59 &&
    // PostgreSQL rejects UTC offsets beyond ±15:59 ("time zone displacement out of range").
    offsetHours! <= 15 &&
    offsetMinutes! <= 59
  );
}

export const encodeCursor: (cursor: WaitlistCursor) => string = encodeKeysetCursor;

/** The cursor, or null when it is not one this server issued. */
export function decodeCursor(value: string): WaitlistCursor | null {
  return decodeKeysetCursor(value, isValidTimestamp);
}

// ---------------------------------------------------------------------------------------------

export async function countWaitlist(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('waitlist')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  // PostgreSQL returns count(*) as a bigint string.
  return Number(row.n);
}

/**
 * One page, newest first, strictly after `after`. Reads limit + 1 rows so the last page has no
 * cursor (the client never fetches an empty page).
 */
export async function listWaitlistPage(
  db: Kysely<Database>,
  options: { limit: number; after?: WaitlistCursor | null },
): Promise<WaitlistPageResult> {
  const { limit, after } = options;
  let query = db
    .selectFrom('waitlist')
    .select([...WAITLIST_COLUMNS, sortKey(db).as('sort_key')])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1);
  if (after) {
    // (created_at, id) < (T, I), written so both dialects use the index range: the first term
    // bounds the scan, the OR settles ties within the same timestamp.
    query = query.where((eb) =>
      eb.and([
        eb('created_at', '<=', after.createdAt),
        eb.or([eb('created_at', '<', after.createdAt), eb('id', '<', after.id)]),
      ]),
    );
  }
  const rows = await query.execute();
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    entries: pageRows.map(({ sort_key: _key, ...row }) => toEntry(row)),
    next: hasMore && last ? { createdAt: last.sort_key, id: last.id } : null,
  };
}

/** Every entry, newest first, one keyset batch at a time (memory stays at one batch). */
export async function* iterateAllWaitlist(
  db: Kysely<Database>,
  batchSize = ID_CHUNK_SIZE,
): AsyncGenerator<WaitlistEntry[]> {
  let after: WaitlistCursor | null = null;
  do {
    const page: WaitlistPageResult = await listWaitlistPage(db, { limit: batchSize, after });
    if (page.entries.length > 0) yield page.entries;
    after = page.next;
  } while (after);
}

function uniqueIds(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The entries with the given ids that exist, newest first, in batches. First only the sort keys
 * are read and ordered, then the rows are read batch by batch in that order, so memory holds the
 * ids and keys plus one batch of rows. Unknown ids are skipped.
 */
export async function* iterateSelectedWaitlist(
  db: Kysely<Database>,
  ids: readonly string[],
  batchSize = ID_CHUNK_SIZE,
): AsyncGenerator<WaitlistEntry[]> {
  const keys: Array<{ key: string; id: string }> = [];
  for (const part of chunk(uniqueIds(ids), ID_CHUNK_SIZE)) {
    const rows = await db.selectFrom('waitlist').select(['id', sortKey(db).as('key')]).where('id', 'in', part).execute();
    for (const row of rows) keys.push({ key: row.key, id: row.id });
  }
  keys.sort(compareKeysDesc);

  for (const part of chunk(keys, batchSize)) {
    const position = new Map(part.map((k, i) => [k.id, i]));
    const rows = await db
      .selectFrom('waitlist')
      .select(WAITLIST_COLUMNS)
      .where(
        'id',
        'in',
        part.map((k) => k.id),
      )
      .execute();
    // A row deleted between the two reads is simply missing from the batch.
    rows.sort((a, b) => (position.get(a.id) ?? 0) - (position.get(b.id) ?? 0));
    if (rows.length > 0) yield rows.map(toEntry);
  }
}

/**
 * Deletes the entries with the given ids and returns the rows actually deleted, newest first.
 * Runs in chunks on the connection or transaction it is given; callers wanting all-or-nothing
 * pass a transaction.
 */
export async function deleteWaitlistEntries(db: Kysely<Database>, ids: readonly string[]): Promise<WaitlistEntry[]> {
  const deleted: Array<{ key: string; id: string; entry: WaitlistEntry }> = [];
  for (const part of chunk(uniqueIds(ids), ID_CHUNK_SIZE)) {
    const rows = await db
      .deleteFrom('waitlist')
      .where('id', 'in', part)
      .returning([...WAITLIST_COLUMNS, sortKey(db).as('sort_key')])
      .execute();
    for (const { sort_key: key, ...row } of rows) deleted.push({ key, id: row.id, entry: toEntry(row) });
  }
  deleted.sort(compareKeysDesc);
  return deleted.map((d) => d.entry);
}

/** An invited entry: what the invite e-mail needs. */
export interface InvitedEntry {
  id: string;
  email: string;
}

export interface InviteOutcome {
  invited: InvitedEntry[];
  skipped: { pending: number; unsubscribed: number; alreadyInvited: number };
}

/**
 * `status` where a query also names the ids. SQLite keeps no statistics, so given
 * `id IN (...) AND status IN (...)` it picks the status index, which at a launch (nearly every
 * row joined) it walks whole for each chunk, over the primary key; a unary plus keeps the column
 * out of index selection. PostgreSQL plans by its statistics and has no unary plus for text.
 * (The counting query below names no status at all for the same reason: with one, it scanned
 * every invited row per chunk, 6 times slower at 100,000 entries.)
 */
function statusColumn(db: Kysely<Database>): RawBuilder<string> {
  return isPostgres(db) ? sql<string>`status` : sql<string>`+status`;
}

/**
 * Marks the named joined and confirmed entries invited (status and invited_at) and hands each
 * chunk of them to `queue` (which writes their e-mails with the same executor); counts the named
 * entries left out by their status. Unknown ids are ignored. Runs in chunks on the connection or
 * transaction it is given; the invite route passes a transaction, so the statuses and the queued
 * e-mails are written together or not at all.
 *
 * The UPDATE's own WHERE decides who is invited, so two admins inviting the same people at once
 * (PostgreSQL: the second waits for the first's row locks, then re-checks) never send one person
 * two invites: the rows the second finds already invited are counted as such.
 */
export async function inviteWaitlistEntries(
  db: Kysely<Database>,
  ids: readonly string[],
  options: { invitedAt: string; queue: (entries: InvitedEntry[]) => Promise<void> },
): Promise<InviteOutcome> {
  const outcome: InviteOutcome = { invited: [], skipped: { pending: 0, unsubscribed: 0, alreadyInvited: 0 } };
  const status = statusColumn(db);
  for (const part of chunk(uniqueIds(ids), ID_CHUNK_SIZE)) {
    const invited = await db
      .updateTable('waitlist')
      .set({ status: 'invited', invited_at: options.invitedAt })
      .where('id', 'in', part)
      .where(status, 'in', ['joined', 'confirmed'])
      .returning(['id', 'email'])
      .execute();
    // Read after the update, in the same transaction: the rows just invited count as `invited` here.
    const left = await db
      .selectFrom('waitlist')
      .select(['status', (eb) => eb.fn.countAll().as('n')])
      .where('id', 'in', part)
      .groupBy('status')
      .execute();
    for (const row of left) {
      const n = Number(row.n);
      if (row.status === 'pending') outcome.skipped.pending += n;
      else if (row.status === 'unsubscribed') outcome.skipped.unsubscribed += n;
      else if (row.status === 'invited') outcome.skipped.alreadyInvited += n - invited.length;
    }
    if (invited.length > 0) await options.queue(invited);
    for (const row of invited) outcome.invited.push(row);
  }
  return outcome;
}
