import type SQLite from 'better-sqlite3';
import type { CompiledQuery, Kysely } from 'kysely';
import { rawSqliteOf } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { toWaitlistEntry as toEntry, WAITLIST_COLUMNS } from '../db/waitlist-entries.js';
import { matching } from '../db/waitlist-filter.js';
import {
  afterPosition,
  chunk,
  compareKeysDesc,
  ID_CHUNK_SIZE,
  sortKey,
  uniqueIds,
  type WaitlistCursor,
} from '../db/waitlist-keyset.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';
import type { WaitlistFilter } from '../../shared/admin/waitlist-filter.js';

/** The export's reads of the waitlist; the filter, the keyset order and the pages they build on are in db/. */

/** The entry fields an export reads besides created_at: none of the other timestamps, which PostgreSQL's driver gives as Dates. */
export type ExportField = Exclude<keyof WaitlistEntry, 'confirmation_sent_at' | 'confirmed_at' | 'invited_at' | 'unsubscribed_at'>;

/**
 * The entries matching `filter` but those in `except`, newest first, one keyset batch at a time
 * (memory: one batch plus the `except` set), never empty (smaller than `batchSize` where excepted
 * rows fall). Only `fields` (the CSV columns' fields), id and created_at are selected and set: at
 * 1,000,000 rows the driver's per-row work is most of an export's time, and the spec's four
 * columns need 7 of the entry's 23 fields, which makes the rows about three times cheaper to fetch.
 */
export async function* iterateMatchingWaitlist(
  db: Kysely<Database>,
  filter: WaitlistFilter,
  except: readonly string[] = [],
  batchSize = ID_CHUNK_SIZE,
  fields: readonly ExportField[] = SPEC_EXPORT_COLUMNS,
): AsyncGenerator<WaitlistEntry[]> {
  const skip = new Set(except);
  // created_at is read as the sort key (ISO text; on PostgreSQL with its microseconds), which the
  // position needs anyway: PostgreSQL's driver would otherwise parse a Date per row.
  const columns = [...new Set<ExportField>(['id', ...fields])].filter((c) => c !== 'created_at');
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
    const entries = skip.size > 0 ? rows.filter((row) => !skip.has(row.id)) : rows;
    if (entries.length > 0) yield entries as unknown as WaitlistEntry[];
  }
}

/** The stored columns the spec's four CSV columns are written from, in the order of the export's COPY. */
export const SPEC_EXPORT_COLUMNS = ['email', 'created_at', 'ip_address', 'city', 'region', 'country'] as const satisfies ReadonlyArray<keyof WaitlistEntry>;

/** The export's query (copy.ts streams it with COPY): SPEC_EXPORT_COLUMNS of every entry matching `filter`, newest first. */
export function exportRowsQuery(db: Kysely<Database>, filter: WaitlistFilter): CompiledQuery {
  const query = db.selectFrom('waitlist').select(SPEC_EXPORT_COLUMNS).where(matching(db, filter, { search: 'inline' }));
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').compile();
}

/**
 * The entries with the given ids that exist, newest first, in batches. First only the sort keys
 * are read and ordered, then the rows are read batch by batch in that order, so memory holds the
 * ids and keys plus one batch of rows. Unknown ids are skipped.
 */
export async function* iterateSelectedWaitlist(db: Kysely<Database>, ids: readonly string[], batchSize = ID_CHUNK_SIZE, withAmount = false): AsyncGenerator<WaitlistEntry[]> {
  const keys: Array<{ key: string; id: string }> = [];
  for (const part of chunk(uniqueIds(ids), ID_CHUNK_SIZE)) {
    keys.push(...(await db.selectFrom('waitlist').select(['id', sortKey(db).as('key')]).where('id', 'in', part).execute()));
  }
  keys.sort(compareKeysDesc);

  for (const part of chunk(keys, batchSize)) {
    const position = new Map(part.map((k, i) => [k.id, i]));
    const rows = await db
      .selectFrom('waitlist')
      .select(WAITLIST_COLUMNS)
      .$if(withAmount, (qb) => qb.select('intended_amount'))
      .where('id', 'in', part.map((k) => k.id))
      .execute();
    // A row deleted between the two reads is simply missing from the batch.
    rows.sort((a, b) => (position.get(a.id) ?? 0) - (position.get(b.id) ?? 0));
    if (rows.length > 0) yield rows.map(toEntry);
  }
}
