import type { Kysely } from 'kysely';
import { toIsoTimestamp } from '../db/database.js';
import type { Database } from '../db/schema.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';

/** Signup-side waitlist queries and the row mapping; admin reads and deletes are in admin-repository.ts. */
type Db = Kysely<Database>;

export interface NewWaitlistEntry {
  id: string;
  /** Already trimmed and lower-cased. */
  email: string;
  /** ISO-8601 UTC. */
  createdAt: string;
  ipAddress: string | null;
  country: string | null;
  city: string | null;
  region: string | null;
}

function toInsertRow(entry: NewWaitlistEntry) {
  return {
    id: entry.id,
    email: entry.email,
    created_at: entry.createdAt,
    ip_address: entry.ipAddress,
    country: entry.country,
    city: entry.city,
    region: entry.region,
  };
}

/** Inserts one entry in its own (auto-committed) statement; rejects with a unique violation for a known address. */
export async function insertWaitlistEntry(db: Db, entry: NewWaitlistEntry): Promise<void> {
  await db.insertInto('waitlist').values(toInsertRow(entry)).execute();
}

/** Rows per multi-row INSERT: 7 parameters each, far below SQLite's 32,766 and PostgreSQL's 65,535. */
export const INSERT_CHUNK_SIZE = 500;

/**
 * Bulk insert (the CSV import): inserts the entries in multi-row statements, silently skipping any
 * whose e-mail is already stored (case-insensitively, by the unique index) or inserted by an
 * earlier chunk, and returns how many rows were inserted. Runs on the connection or transaction
 * it is given; callers wanting all-or-nothing pass a transaction.
 */
export async function insertWaitlistEntriesSkippingDuplicates(db: Db, entries: readonly NewWaitlistEntry[]): Promise<number> {
  let inserted = 0;
  for (let i = 0; i < entries.length; i += INSERT_CHUNK_SIZE) {
    const result = await db
      .insertInto('waitlist')
      .values(entries.slice(i, i + INSERT_CHUNK_SIZE).map(toInsertRow))
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    inserted += Number(result.numInsertedOrUpdatedRows ?? 0n);
  }
  return inserted;
}

export type WaitlistRow = { id: string; email: string; created_at: Date | string; ip_address: string | null; country: string | null; city: string | null; region: string | null };

/** The one place a stored row becomes the API shape (timestamps normalised per driver). */
export function toWaitlistEntry(row: WaitlistRow): WaitlistEntry {
  return {
    id: row.id,
    email: row.email,
    created_at: toIsoTimestamp(row.created_at),
    ip_address: row.ip_address,
    country: row.country,
    city: row.city,
    region: row.region,
  };
}

export const WAITLIST_COLUMNS = ['id', 'email', 'created_at', 'ip_address', 'country', 'city', 'region'] as const;

export async function findWaitlistEntryByEmail(db: Db, email: string): Promise<WaitlistEntry | undefined> {
  const row = await db
    .selectFrom('waitlist')
    .select(WAITLIST_COLUMNS)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst();
  return row ? toWaitlistEntry(row) : undefined;
}
