import type SQLite from 'better-sqlite3';
import { sql, type CompiledQuery, type Expression, type ExpressionBuilder, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import { isPostgres, rawSqliteOf } from '../db/database.js';
import type { Database } from '../db/schema.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';
import { isEmptyFilter, NONE_VALUE, searchDomain, type WaitlistFilter } from '../../shared/admin/waitlist-filter.js';
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
// Filters (src/shared/admin/waitlist-filter.ts), applied by the database. Every query below (pages,
// counts, export, delete and invite of a selection, and the insight panel in insights.ts) builds its
// WHERE from this one function, so they all agree on what "matching" means.

/** Text for a LIKE pattern: `%`, `_` and the escape character itself stand for themselves. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

const DAY_MS = 86_400_000;

/** The UTC day after `day` (YYYY-MM-DD), or null after 9999-12-31 (nothing can be later). */
export function dayAfter(day: string): string | null {
  const next = new Date(Date.parse(`${day}T00:00:00.000Z`) + DAY_MS);
  return next.getUTCFullYear() > 9999 ? null : next.toISOString().slice(0, 10);
}

/**
 * The start of a UTC day as the created_at column compares it: SQLite compares the stored ISO text
 * (always `YYYY-MM-DDTHH:MM:SS.sssZ`), PostgreSQL parses the same text as a timestamptz.
 */
const dayStart = (day: string) => `${day}T00:00:00.000Z`;

/**
 * `until` as the column compares it. SQLite compares text, so the instant is rewritten with exactly
 * three decimals like the stored values (`…:00Z` would sort after `…:00.500Z`); PostgreSQL parses it
 * and keeps any microseconds. The route has checked that it is a real instant.
 */
function untilBound(db: Kysely<Database>, until: string): string {
  return isPostgres(db) ? until : new Date(until).toISOString();
}

/**
 * The text after the last `@` of lower(email) (NULL without one), written exactly as the domain index has it
 * (migration 2026-11-27T0700; SQLite uses an expression index only for the same text).
 */
function emailDomain(db: Kysely<Database>) {
  return isPostgres(db)
    ? sql<string | null>`CASE WHEN strpos(email, '@') > 0 THEN reverse(split_part(reverse(lower(email)), '@', 1)) END`
    : sql<string | null>`substr(lower(email), nullif(length(rtrim(lower(email), replace(lower(email), '@', ''))), 0) + 1)`;
}

export type WaitlistExpressionBuilder = ExpressionBuilder<Database, 'waitlist'>;

/**
 * How a search that is not a domain search (those read the domain index: emailDomain) is written on
 * SQLite (PostgreSQL always tests `lower(email) LIKE` per row: its planner weighs a parallel scan
 * against the created_at index with its statistics).
 *
 * - `rowids` (default): the matching rows are found once by a scan of the lower(email) index (the
 *   unique index every table has; small, and it holds the rowid) and the rest of the query only
 *   checks membership (`+rowid IN (…)`: the `+` keeps SQLite from turning the list into row
 *   lookups plus a sort). A page then walks the created_at index (or a filter's index) without
 *   reading a table row per entry it skips: at 1,000,000 entries a rare search's page drops from a
 *   read of the whole table (about 0.6 s of CPU) to about 0.15-0.3 s, a GROUP BY with a search
 *   from ~2.8 s (a table read per row of its index) to ~0.5 s.
 * - `inline`: `lower(email) LIKE` per row, for a plain count (which then reads the lower(email)
 *   index alone) and for the keyset batches of an export, delete or invite (one pass over the list
 *   in all; the subquery would be scanned again for every batch).
 */
export type SearchForm = 'rowids' | 'inline';

/**
 * The filter as a WHERE condition (`1 = 1` for an empty filter), for `.where(matching(db, filter))`.
 *
 * - `q`: `lower(email) LIKE '%term%'` with LIKE's wildcards in the text escaped, so `_` and `%` match
 *   themselves; a domain search (`@domain`) is the domain index's key (emailDomain) equal to the
 *   domain, which is the same as `LIKE '%@domain'` for a domain without `@` (one with `@` is
 *   searched with the LIKE). Both databases lower-case ASCII the same way.
 * - `from`/`to`: `created_at >= from 00:00` and `< the day after to, 00:00` (UTC days, inclusive).
 * - `until`: `created_at <= until`.
 * - `country`, `source`, `campaign` (utm_campaign): equality, NONE_VALUE → IS NULL; `status`: equality.
 *
 * Each equality filter has its own (column, created_at DESC, id DESC) index (migration
 * 2026-11-25T0900), so a filtered page reads its index newest first and stops at the limit, and a
 * filtered count or GROUP BY reads the index alone.
 */
export function matching(
  db: Kysely<Database>,
  filter: WaitlistFilter,
  options: { search?: SearchForm } = {},
): (eb: WaitlistExpressionBuilder) => Expression<SqlBool> {
  const until = filter.until ? untilBound(db, filter.until) : null;
  const searchForm = options.search ?? 'rowids';
  const sqlite = !isPostgres(db);
  return (eb) => {
    const conditions: Array<Expression<SqlBool>> = [];
    if (filter.q) {
      const domain = searchDomain(filter.q);
      if (domain !== null && !domain.includes('@')) {
        // Ending in `@domain` is having `domain` after the last `@`: the domain index's key.
        conditions.push(sql<SqlBool>`${emailDomain(db)} = ${domain}`);
      } else {
        const pattern = domain !== null ? `%@${escapeLike(domain)}` : `%${escapeLike(filter.q.toLowerCase())}%`;
        conditions.push(
          sqlite && searchForm === 'rowids'
            ? sql<SqlBool>`+rowid IN (SELECT rowid FROM waitlist WHERE lower(email) LIKE ${pattern} ESCAPE '\\')`
            : sql<SqlBool>`lower(email) LIKE ${pattern} ESCAPE '\\'`,
        );
      }
    }
    if (filter.from) conditions.push(eb('created_at', '>=', dayStart(filter.from)));
    if (filter.to) {
      const end = dayAfter(filter.to);
      if (end) conditions.push(eb('created_at', '<', dayStart(end)));
    }
    if (until) conditions.push(eb('created_at', '<=', until));
    const equals = (column: 'country' | 'source' | 'utm_campaign', value: string | undefined) => {
      if (!value) return;
      conditions.push(value === NONE_VALUE ? eb(column, 'is', null) : eb(column, '=', value));
    };
    equals('country', filter.country);
    equals('source', filter.source);
    equals('utm_campaign', filter.campaign);
    if (filter.status) conditions.push(eb('status', '=', filter.status));
    return eb.and(conditions);
  };
}

/**
 * (created_at, id) < (T, I): the rows after a keyset position, written so both dialects use the
 * index range: the first term bounds the scan, the OR settles ties within the same timestamp.
 */
function afterPosition(after: WaitlistCursor): (eb: WaitlistExpressionBuilder) => Expression<SqlBool> {
  return (eb) =>
    eb.and([eb('created_at', '<=', after.createdAt), eb.or([eb('created_at', '<', after.createdAt), eb('id', '<', after.id)])]);
}

// ---------------------------------------------------------------------------------------------

/** How many entries match the filter (all of them without one). */
export async function countWaitlist(db: Kysely<Database>, filter: WaitlistFilter = {}): Promise<number> {
  if (isPostgres(db) && isEmptyFilter(filter) && !filter.until) {
    // Every entry: the per-day status counts the triggers keep (migration 2026-11-27T0900), summed;
    // a few thousand rows instead of a read of an index of every entry.
    const total = await db
      .selectFrom('waitlist_rollup')
      .select(sql<string | null>`sum(n)`.as('n'))
      .where('dim', '=', 1)
      .executeTakeFirstOrThrow();
    return Number(total.n ?? 0);
  }
  const row = await db
    .selectFrom('waitlist')
    .select((eb) => eb.fn.countAll().as('n'))
    .where(matching(db, filter, { search: 'inline' }))
    .executeTakeFirstOrThrow();
  // PostgreSQL returns count(*) as a bigint string.
  return Number(row.n);
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
    entries: pageRows.map(({ sort_key: _key, ...row }) => toEntry(row)),
    next: hasMore && last ? { createdAt: last.sort_key, id: last.id } : null,
  };
}

/** Every entry, newest first, one keyset batch at a time (memory stays at one batch). */
export function iterateAllWaitlist(db: Kysely<Database>, batchSize = ID_CHUNK_SIZE): AsyncGenerator<WaitlistEntry[]> {
  return iterateMatchingWaitlist(db, {}, [], batchSize);
}

/** The timestamp fields of an entry: Date on PostgreSQL, ISO text on SQLite. */
const TIMESTAMP_FIELDS = new Set<keyof WaitlistEntry>(['created_at', 'confirmation_sent_at', 'confirmed_at', 'invited_at', 'unsubscribed_at']);

/**
 * The entries matching `filter` but those in `except`, newest first, one keyset batch at a time
 * (memory: one batch plus the `except` set). A batch may come out smaller than `batchSize` when
 * excepted rows fall in it; it is never empty.
 *
 * `fields`, when given, is all the caller reads (an export's CSV columns): only those columns (and
 * id and created_at) are selected and set on the entries, the others are absent. At 1,000,000
 * rows the driver's per-row work is most of an export's time, and the spec's four columns need 7
 * of the entry's 23 fields: reading only them makes the rows about three times cheaper to fetch.
 */
export async function* iterateMatchingWaitlist(
  db: Kysely<Database>,
  filter: WaitlistFilter,
  except: readonly string[] = [],
  batchSize = ID_CHUNK_SIZE,
  fields?: ReadonlyArray<keyof WaitlistEntry>,
): AsyncGenerator<WaitlistEntry[]> {
  const skip = new Set(except);
  if (!fields) {
    let after: WaitlistCursor | null = null;
    do {
      const page: WaitlistPageResult = await listWaitlistPage(db, { limit: batchSize, after, filter, search: 'inline' });
      const entries = skip.size === 0 ? page.entries : page.entries.filter((e) => !skip.has(e.id));
      if (entries.length > 0) yield entries;
      after = page.next;
    } while (after);
    return;
  }
  // created_at is read as the sort key (ISO text; on PostgreSQL with its microseconds), which the
  // position needs anyway: PostgreSQL's driver would otherwise parse a Date per row.
  const columns = [...new Set<keyof WaitlistEntry>(['id', ...fields])].filter((c) => c !== 'created_at');
  const times = columns.filter((c) => TIMESTAMP_FIELDS.has(c));
  const pg = isPostgres(db);
  type Row = Record<string, unknown> & { id: string; created_at: string };
  const read = (after: WaitlistCursor | null) => {
    let query = db
      .selectFrom('waitlist')
      .select([...columns, sortKey(db).as('created_at')])
      .where(matching(db, filter, { search: 'inline' }))
      // Qualified: PostgreSQL would take a bare created_at for the text column of the same name.
      .orderBy('waitlist.created_at', 'desc')
      .orderBy('waitlist.id', 'desc')
      .limit(batchSize);
    if (after) query = query.where(afterPosition(after));
    return sqlite ? readRaw(query.compile()) : (query.execute() as Promise<Row[]>);
  };
  // SQLite: the rows as arrays (better-sqlite3's raw mode), made into objects of one shape here,
  // which costs a third less than the driver's objects (about 0.8 s at 1,000,000 rows). The
  // statement runs while Kysely's connection is held, so never inside another request's transaction.
  const sqlite = rawSqliteOf(db);
  const selected = [...columns, 'created_at'];
  const statements = new Map<string, SQLite.Statement>();
  const readRaw = (compiled: CompiledQuery) =>
    db.connection().execute(async () => {
      let statement = statements.get(compiled.sql);
      if (!statement) statements.set(compiled.sql, (statement = sqlite!.prepare(compiled.sql).raw(true)));
      const rows: Row[] = [];
      for (const values of statement.all(...(compiled.parameters as unknown[])) as unknown[][]) {
        const row: Record<string, unknown> = {};
        for (let i = 0; i < selected.length; i++) row[selected[i]!] = values[i];
        rows.push(row as Row);
      }
      return rows;
    });
  let pending: Promise<Row[]> | null = read(null);
  while (pending) {
    const rows: Row[] = await pending;
    const last = rows[rows.length - 1];
    // The next batch is asked for before this one is handed over: PostgreSQL reads it while the
    // caller formats this one (SQLite answers synchronously, so there it changes nothing).
    pending = last && rows.length === batchSize ? read({ createdAt: last.created_at, id: last.id }) : null;
    // Never left unhandled if the caller stops early; the caller sees the error on its next read.
    pending?.catch(() => undefined);
    const entries: WaitlistEntry[] = [];
    for (const row of rows) {
      if (skip.size > 0 && skip.has(row.id)) continue;
      // The entry's other timestamps are ISO text too: SQLite stores them so; PostgreSQL's driver gives Dates.
      if (pg) for (const c of times) if (row[c] instanceof Date) row[c] = (row[c] as Date).toISOString();
      entries.push(row as unknown as WaitlistEntry);
    }
    if (entries.length > 0) yield entries;
  }
}

/**
 * The stored columns the spec's four CSV columns are written from, in this order: the fields the
 * export reads of an entry, and the columns of its COPY (src/server/export).
 */
export const SPEC_EXPORT_COLUMNS = ['email', 'created_at', 'ip_address', 'city', 'region', 'country'] as const satisfies ReadonlyArray<keyof WaitlistEntry>;

/**
 * The export's query (src/server/export/copy.ts streams it with COPY): SPEC_EXPORT_COLUMNS of every
 * entry matching `filter`, newest first, with the filter's SQL from `matching` like every other
 * query here.
 */
export function exportRowsQuery(db: Kysely<Database>, filter: WaitlistFilter): CompiledQuery {
  return db
    .selectFrom('waitlist')
    .select(SPEC_EXPORT_COLUMNS)
    .where(matching(db, filter, { search: 'inline' }))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .compile();
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
