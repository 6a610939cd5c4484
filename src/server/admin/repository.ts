import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isPostgres } from '../db/database.js';
import { decodeKeysetCursor, encodeKeysetCursor } from '../db/keyset-cursor.js';
import type { Database } from '../db/schema.js';
import { toWaitlistEntry as toEntry, WAITLIST_COLUMNS } from '../db/waitlist-entries.js';
import { matching } from '../db/waitlist-filter.js';
import { afterPosition, chunk, compareKeysDesc, ID_CHUNK_SIZE, sortKey, uniqueIds, type WaitlistCursor } from '../db/waitlist-keyset.js';
import type { Selection } from './selection.js';
import type { WaitlistFilter } from '../../shared/admin/waitlist-filter.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';

/**
 * The admin API's own SQL on the waitlist: its cursors, and the deletes and invites of named entries
 * or of a select-all. Every function takes `db` or a transaction, and the same queries run on SQLite
 * and PostgreSQL. The filter, the counts and the pages are in db/ (the panel and the export read them too).
 */

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

/**
 * The ids of the entries matching `filter` but those in `except`, newest first, in keyset batches
 * of up to `batchSize`: what a select-all-matching acts on. Only an index and the ids are read.
 * The position moves past each batch, so the caller may delete or update the rows it was given.
 */
async function* iterateMatchingIds(
  db: Kysely<Database>,
  filter: WaitlistFilter,
  except: ReadonlySet<string>,
  batchSize: number,
): AsyncGenerator<string[]> {
  let after: WaitlistCursor | null = null;
  for (;;) {
    let query = db
      .selectFrom('waitlist')
      .select(['id', sortKey(db).as('sort_key')])
      .where(matching(db, filter, { search: 'inline' }))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(batchSize);
    if (after) query = query.where(afterPosition(after));
    const rows = await query.execute();
    const last = rows[rows.length - 1];
    const ids = rows.map((r) => r.id).filter((id) => !except.has(id));
    if (ids.length > 0) yield ids;
    if (!last || rows.length < batchSize) return;
    after = { createdAt: last.sort_key, id: last.id };
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

/** What a select-all delete removed in one batch: the ids and addresses (for the audit's keyed hashes). */
export type DeletedKeys = Array<{ id: string; email: string }>;

/**
 * Deletes every entry matching `filter` but those in `except`, batch by batch (keyset order, newest
 * first), and hands each batch's deleted rows to `onBatch` (the route writes its audit record with
 * the same executor). Resolves to how many were deleted. Memory holds one batch plus `except`. Runs
 * on the connection or transaction it is given; the route passes a transaction, so the rows and
 * their audit records go together or not at all.
 */
export async function deleteMatchingWaitlist(
  db: Kysely<Database>,
  filter: WaitlistFilter,
  except: readonly string[],
  onBatch: (deleted: DeletedKeys) => Promise<void>,
  batchSize = ID_CHUNK_SIZE,
): Promise<number> {
  let deleted = 0;
  for await (const part of iterateMatchingIds(db, filter, new Set(except), batchSize)) {
    const rows = await db.deleteFrom('waitlist').where('id', 'in', part).returning(['id', 'email']).execute();
    // RETURNING has no order: put the batch back newest first, as a named delete records it.
    const position = new Map(part.map((id, i) => [id, i]));
    rows.sort((a, b) => position.get(a.id)! - position.get(b.id)!);
    deleted += rows.length;
    if (rows.length > 0) await onBatch(rows);
  }
  return deleted;
}

/** An invited entry: what the invite e-mail needs. */
export interface InvitedEntry {
  id: string;
  email: string;
}

export interface InviteOutcome {
  /** How many were invited (their ids and addresses went to `queue`, chunk by chunk). */
  invited: number;
  skipped: { pending: number; unsubscribed: number; alreadyInvited: number };
}

export interface InviteOptions {
  invitedAt: string;
  queue: (entries: InvitedEntry[]) => Promise<void>;
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
export async function inviteWaitlistEntries(db: Kysely<Database>, ids: readonly string[], options: InviteOptions): Promise<InviteOutcome> {
  const outcome: InviteOutcome = { invited: 0, skipped: { pending: 0, unsubscribed: 0, alreadyInvited: 0 } };
  for (const part of chunk(uniqueIds(ids), ID_CHUNK_SIZE)) await inviteChunk(db, part, options, outcome);
  return outcome;
}

/**
 * inviteWaitlistEntries for a select-all: every entry matching `filter` but those in `except`, read
 * in keyset batches (ids only) and invited chunk by chunk, so memory holds one chunk plus `except`.
 * The skipped counts are those of the matching entries (pending, unsubscribed, already invited).
 */
export async function inviteMatchingWaitlist(
  db: Kysely<Database>,
  filter: WaitlistFilter,
  except: readonly string[],
  options: InviteOptions,
): Promise<InviteOutcome> {
  const outcome: InviteOutcome = { invited: 0, skipped: { pending: 0, unsubscribed: 0, alreadyInvited: 0 } };
  for await (const part of iterateMatchingIds(db, filter, new Set(except), ID_CHUNK_SIZE)) await inviteChunk(db, part, options, outcome);
  return outcome;
}

/**
 * The ids a selection names, in chunks of up to ID_CHUNK_SIZE: the named ids (unique), or those of
 * every entry matching the filter but `except`, in keyset batches (for other rooms' actions on a
 * selection: the held signups' approve and reject).
 */
export async function* selectionIdChunks(db: Kysely<Database>, selection: Selection): AsyncGenerator<string[]> {
  if ('ids' in selection) {
    yield* chunk(uniqueIds(selection.ids), ID_CHUNK_SIZE);
    return;
  }
  yield* iterateMatchingIds(db, selection.filter, new Set(selection.except), ID_CHUNK_SIZE);
}

/** inviteWaitlistEntries or inviteMatchingWaitlist, as the selection names the entries. */
export function inviteSelection(db: Kysely<Database>, selection: Selection, options: InviteOptions): Promise<InviteOutcome> {
  return 'ids' in selection
    ? inviteWaitlistEntries(db, selection.ids, options)
    : inviteMatchingWaitlist(db, selection.filter, selection.except, options);
}

async function inviteChunk(db: Kysely<Database>, part: string[], options: InviteOptions, outcome: InviteOutcome): Promise<void> {
  const status = statusColumn(db);
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
  outcome.invited += invited.length;
}
