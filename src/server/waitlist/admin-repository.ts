import type SQLite from 'better-sqlite3';
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import { isPostgres, rawSqliteOf } from '../db/database.js';
import { inlinePostgresParameters } from '../db/postgres-literals.js';
import type { Database } from '../db/schema.js';
import { toWaitlistEntry as toEntry, WAITLIST_COLUMNS } from '../db/waitlist-entries.js';
import { matching } from '../db/waitlist-filter.js';
import {
  afterPosition,
  chunk,
  compareKeysDesc,
  ID_CHUNK_SIZE,
  listWaitlistPage,
  sortKey,
  uniqueIds,
  type WaitlistCursor,
  type WaitlistPageResult,
} from '../db/waitlist-keyset.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';
import type { WaitlistFilter } from '../../shared/admin/waitlist-filter.js';

/**
 * The export's reads of the waitlist: entries in batches (named ones, or those matching a filter),
 * and the statements the bytes exports stream (export-copy.ts, export-sqlite.ts). They move to
 * src/server/export/ with the export (issue 27); the filter, the keyset order and the pages they
 * build on are in db/.
 */

/** What the export's modules take from here too (the keyset batch size and position). */
export { ID_CHUNK_SIZE, type WaitlistCursor };

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
 * The stored columns the spec's four CSV columns are written from, in this order: the entry
 * export's fields (admin/routes.ts) and the cells the bytes export reads by position
 * (export-copy.ts, export-sqlite.ts).
 */
export const SPEC_EXPORT_COLUMNS = ['email', 'created_at', 'ip_address', 'city', 'region', 'country'] as const satisfies ReadonlyArray<keyof WaitlistEntry>;

/** SPEC_EXPORT_COLUMNS (and `extra`) of the entries matching `filter`, newest first: the query every bytes export starts from. */
function exportRows(db: Kysely<Database>, filter: WaitlistFilter, extra: ReadonlyArray<'id'> = []) {
  return db
    .selectFrom('waitlist')
    .select([...extra, ...SPEC_EXPORT_COLUMNS])
    .where(matching(db, filter, { search: 'inline' }))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc');
}

/**
 * PostgreSQL: one SELECT of SPEC_EXPORT_COLUMNS for every entry matching `filter`, newest first,
 * with its parameters written in as literals (a COPY takes none): the statement export-copy.ts
 * streams with COPY … TO STDOUT.
 */
export function copyExportQuery(db: Kysely<Database>, filter: WaitlistFilter): string {
  return inlinePostgresParameters(exportRows(db, filter).compile());
}

/** What separates the cells of a row and the rows in a batch of sqliteExportBatchQuery (control characters, which no plain cell has). */
export const SQLITE_EXPORT_CELL_SEPARATOR = 0x1f;
export const SQLITE_EXPORT_ROW_SEPARATOR = 0x1e;
/** How much of each row's id a batch of sqliteExportBatchQuery carries, after its columns. */
export const SQLITE_EXPORT_ID_PREFIX = 8;

/**
 * SQLite: the next `limit` entries matching `filter` after `after` (from the newest without one),
 * as one value: SPEC_EXPORT_COLUMNS of each row and the start of its id (SQLITE_EXPORT_ID_PREFIX
 * characters) joined by SQLITE_EXPORT_CELL_SEPARATOR (NULL as empty), the rows joined by
 * SQLITE_EXPORT_ROW_SEPARATOR, as a BLOB of UTF-8; with the number of
 * rows and the last one's position (created_at and id joined by the cell separator, which sorts
 * below every character of a timestamp, so the smallest joined value is the last row's). SQLite
 * builds the text, so the driver hands over one buffer instead of six strings per row.
 *
 * `ordered`: the rows are joined in the list's order as SQL promises it (string_agg … ORDER BY, a
 * sort that makes the batch half as costly again). Without it they come in the order the subquery
 * reads them, which SQLite does not promise; export-sqlite.ts checks it (by created_at, then the
 * id's start) and asks again with `ordered` for a batch where it does not hold or cannot be told.
 */
export function sqliteExportBatchQuery(db: Kysely<Database>, filter: WaitlistFilter, after: WaitlistCursor | null, limit: number, ordered: boolean): CompiledQuery {
  const cell = (column: (typeof SPEC_EXPORT_COLUMNS)[number]) => (column === 'email' || column === 'created_at' ? sql.ref(column) : sql`coalesce(${sql.ref(column)}, '')`);
  const separator = sql`char(${sql.lit(SQLITE_EXPORT_CELL_SEPARATOR)})`;
  // The columns, then the first 8 characters of the id: with created_at, enough to check the order.
  // concat_ws builds each row's text in one go (a chain of || copies the growing text at every
  // step: a fifth of SQLite's time per batch). It skips NULLs, so none reaches it: created_at and
  // email are NOT NULL, the other columns are coalesced to '', and a NULL id (which SQLite lets a
  // TEXT primary key hold) becomes a separator, so that row has a cell too many, its batch does not
  // split, and export-sqlite.ts reads it again as rows.
  const idStart = sql`coalesce(substr(id, 1, ${sql.lit(SQLITE_EXPORT_ID_PREFIX)}), ${separator})`;
  const cells = sql`concat_ws(${separator}, ${sql.join([...SPEC_EXPORT_COLUMNS.map((column) => cell(column)), idStart])})`;
  let batch = exportRows(db, filter, ['id']).limit(limit);
  if (after) batch = batch.where(afterPosition(after));
  const rowSeparator = sql`char(${sql.lit(SQLITE_EXPORT_ROW_SEPARATOR)})`;
  return db
    .selectFrom(batch.as('batch'))
    .select([
      (ordered
        ? sql<Buffer | null>`CAST(string_agg(${cells}, ${rowSeparator} ORDER BY created_at DESC, id DESC) AS BLOB)`
        : sql<Buffer | null>`CAST(string_agg(${cells}, ${rowSeparator}) AS BLOB)`
      ).as('cells'),
      sql<number>`count(*)`.as('n'),
      sql<string | null>`min(created_at || ${separator} || id)`.as('last'),
    ])
    .compile();
}

/** SQLite: the entries of the same batch as sqliteExportBatchQuery, as rows of SPEC_EXPORT_COLUMNS (for a batch its text could not carry). */
export function sqliteExportRowsQuery(db: Kysely<Database>, filter: WaitlistFilter, after: WaitlistCursor | null, limit: number): CompiledQuery {
  let query = exportRows(db, filter).limit(limit);
  if (after) query = query.where(afterPosition(after));
  return query.compile();
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
