import type { Kysely, Selectable } from 'kysely';
import { isPostgres, toIsoTimestamp } from './database.js';
import type { Database, WaitlistTable } from './schema.js';
import { WAITLIST_ENTRY_FIELDS, type WaitlistEntry } from '../../shared/waitlist/entry.js';

/**
 * The waitlist table as every feature reads it: the row mapping, and the reads and the consent update
 * that the signup and the e-mail links (consent/) share. Each feature's own SQL is in its room.
 */
type Db = Kysely<Database>;

/** A stored row, as the drivers return it (created_at is a Date on PostgreSQL, ISO text on SQLite). */
export type WaitlistRow = Selectable<WaitlistTable>;

/** The list's columns (issue 31), which the entry's API shape leaves out: the portal's entries never show them. */
type ListColumn = 'list_id' | 'intended_amount';

/** The table and the API entry name the same fields: a column added to one only fails to compile. */
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : never) : never;
const tableMatchesEntry: SameKeys<Omit<WaitlistRow, ListColumn>, WaitlistEntry> = true;
void tableMatchesEntry;

/** The columns every entry read selects, in the entry's field order. */
export const WAITLIST_COLUMNS = WAITLIST_ENTRY_FIELDS;

/** The one place a stored row becomes the API shape (timestamps normalized per driver). */
export function toWaitlistEntry(row: Omit<WaitlistRow, ListColumn>): WaitlistEntry {
  const optionalTime = (value: Date | string | null) => (value === null ? null : toIsoTimestamp(value));
  return {
    ...row,
    created_at: toIsoTimestamp(row.created_at),
    confirmation_sent_at: optionalTime(row.confirmation_sent_at),
    confirmed_at: optionalTime(row.confirmed_at),
    invited_at: optionalTime(row.invited_at),
    unsubscribed_at: optionalTime(row.unsubscribed_at),
  };
}

/**
 * An entry by address (case-insensitively) or id, locked until the transaction ends on PostgreSQL
 * (SQLite has one writer at a time: the transaction's first write takes the lock, and Kysely runs
 * the whole transaction on its one connection). Call inside a transaction.
 */
export async function lockWaitlistEntry(trx: Db, by: { email: string } | { id: string }): Promise<WaitlistEntry | undefined> {
  const row = await trx
    .selectFrom('waitlist')
    .select(WAITLIST_COLUMNS)
    .$call((qb) =>
      // By address: on the portal's waitlist (an offering list's entries are its own; signup/offering.ts).
      'id' in by ? qb.where('id', '=', by.id) : qb.where('list_id', '=', 0).where((eb) => eb(eb.fn('lower', ['email']), '=', by.email.toLowerCase())),
    )
    .$if(isPostgres(trx), (qb) => qb.forUpdate())
    .executeTakeFirst();
  return row ? toWaitlistEntry(row) : undefined;
}

/** The consent and e-mail fields an update may change (never the address, the time joined or the place). */
export type EntryConsentUpdate = Partial<
  Pick<WaitlistEntry, 'status' | 'consent_version' | 'consent_record' | 'confirmation_sent_at' | 'confirmed_at' | 'confirmed_ip' | 'unsubscribed_at' | 'held_reason'>
>;

/** Updates one entry's consent fields; resolves to whether it still existed. */
export async function updateEntryConsent(db: Db, id: string, changes: EntryConsentUpdate): Promise<boolean> {
  const result = await db.updateTable('waitlist').set(changes).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function findWaitlistEntryByEmail(db: Db, email: string): Promise<WaitlistEntry | undefined> {
  const row = await db
    .selectFrom('waitlist')
    .select(WAITLIST_COLUMNS)
    .where('list_id', '=', 0)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst();
  return row ? toWaitlistEntry(row) : undefined;
}
