import type { Kysely, Selectable } from 'kysely';
import { toIsoTimestamp } from '../db/database.js';
import type { Database, WaitlistTable } from '../db/schema.js';
import { WAITLIST_ENTRY_FIELDS, type WaitlistEntry } from '../../shared/waitlist/entry.js';

/** Signup-side waitlist queries and the row mapping; admin reads and deletes are in admin-repository.ts. */
type Db = Kysely<Database>;

/** A stored row, as the drivers return it (created_at is a Date on PostgreSQL, ISO text on SQLite). */
export type WaitlistRow = Selectable<WaitlistTable>;

/** The table and the API entry name the same fields: a column added to one only fails to compile. */
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : never) : never;
const tableMatchesEntry: SameKeys<WaitlistRow, WaitlistEntry> = true;
void tableMatchesEntry;

/** The columns every entry read selects, in the entry's field order. */
export const WAITLIST_COLUMNS = WAITLIST_ENTRY_FIELDS;

/** The one place a stored row becomes the API shape (timestamps normalized per driver). */
export function toWaitlistEntry(row: WaitlistRow): WaitlistEntry {
  return { ...row, created_at: toIsoTimestamp(row.created_at) };
}

/** Inserts one entry in its own (auto-committed) statement; rejects with a unique violation for a known address. */
export async function insertWaitlistEntry(db: Db, entry: WaitlistEntry): Promise<void> {
  await db.insertInto('waitlist').values(entry).execute();
}

/** Rows per multi-row INSERT: 7 parameters each, far below SQLite's 32,766 and PostgreSQL's 65,535. */
export const INSERT_CHUNK_SIZE = 500;

/**
 * Bulk insert (the CSV import): inserts the entries in multi-row statements, silently skipping any
 * whose e-mail is already stored (case-insensitively, by the unique index) or inserted by an
 * earlier chunk, and returns how many rows were inserted. Runs on the connection or transaction
 * it is given; callers wanting all-or-nothing pass a transaction.
 */
export async function insertWaitlistEntriesSkippingDuplicates(db: Db, entries: readonly WaitlistEntry[]): Promise<number> {
  let inserted = 0;
  for (let i = 0; i < entries.length; i += INSERT_CHUNK_SIZE) {
    const result = await db
      .insertInto('waitlist')
      .values(entries.slice(i, i + INSERT_CHUNK_SIZE))
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    inserted += Number(result.numInsertedOrUpdatedRows ?? 0n);
  }
  return inserted;
}

export async function findWaitlistEntryByEmail(db: Db, email: string): Promise<WaitlistEntry | undefined> {
  const row = await db
    .selectFrom('waitlist')
    .select(WAITLIST_COLUMNS)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst();
  return row ? toWaitlistEntry(row) : undefined;
}
