import type { Kysely } from 'kysely';
import { toIsoTimestamp } from '../db/database.js';
import type { Database } from '../db/schema.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';

/** Every waitlist query lives here; each takes the Kysely handle so PostgreSQL and SQLite share them. */
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

/** Inserts one entry in its own (auto-committed) statement; rejects with a unique violation for a known address. */
export async function insertWaitlistEntry(db: Db, entry: NewWaitlistEntry): Promise<void> {
  await db
    .insertInto('waitlist')
    .values({
      id: entry.id,
      email: entry.email,
      created_at: entry.createdAt,
      ip_address: entry.ipAddress,
      country: entry.country,
      city: entry.city,
      region: entry.region,
    })
    .execute();
}

type WaitlistRow = { id: string; email: string; created_at: Date | string; ip_address: string | null; country: string | null; city: string | null; region: string | null };

function toEntry(row: WaitlistRow): WaitlistEntry {
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

const columns = ['id', 'email', 'created_at', 'ip_address', 'country', 'city', 'region'] as const;

export async function countWaitlistEntries(db: Db): Promise<number> {
  const row = await db.selectFrom('waitlist').select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findWaitlistEntryByEmail(db: Db, email: string): Promise<WaitlistEntry | undefined> {
  const row = await db
    .selectFrom('waitlist')
    .select(columns)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst();
  return row ? toEntry(row) : undefined;
}

/** Position after which the next page starts (the last entry of the previous page). */
export interface WaitlistCursor {
  createdAt: string;
  id: string;
}

/** Newest first, keyset-paginated on (created_at, id), matching the waitlist_created_at_id_idx index. */
export async function listWaitlistEntries(db: Db, options: { limit: number; after?: WaitlistCursor }): Promise<WaitlistEntry[]> {
  let query = db.selectFrom('waitlist').select(columns);
  const after = options.after;
  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)]),
      ]),
    );
  }
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit).execute();
  return rows.map(toEntry);
}

/** Deletes the given ids and returns the rows that existed. */
export async function deleteWaitlistEntries(db: Db, ids: readonly string[]): Promise<WaitlistEntry[]> {
  if (ids.length === 0) return [];
  const rows = await db.deleteFrom('waitlist').where('id', 'in', [...ids]).returning(columns).execute();
  return rows.map(toEntry);
}
