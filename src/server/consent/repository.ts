import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** The e-mail links' own writes: an erasure, and the outbox rows of a person who unsubscribed or erased. */
type Db = Kysely<Database>;

/** Deletes one entry (erasure); resolves to whether it existed. */
export async function deleteWaitlistEntry(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('waitlist').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** Why a queued message to an unsubscribed person is never sent (shown in the admin's outbox view). */
export const UNSUBSCRIBED_MAIL_ERROR = 'Not sent: the recipient unsubscribed';

/**
 * Every message to `email` still waiting in the outbox becomes failed with UNSUBSCRIBED_MAIL_ERROR
 * (one being sent right now cannot be called back), but an erasure link the person asked for
 * (`keep`): unsubscribing stops our e-mail, not the answer to their own request. Outbox rows of an
 * entry carry its stored address.
 */
export async function cancelQueuedMail(db: Db, email: string, keep: string, otherEntries: readonly string[] = []): Promise<number> {
  const result = await db
    .updateTable('mail_outbox')
    .set({ status: 'failed', last_error: UNSUBSCRIBED_MAIL_ERROR, lease_until: null })
    .where('to_address', '=', email)
    .where('status', '=', 'queued')
    .where('kind', '<>', keep)
    // Messages about the address's entries on other lists (issue 31) are theirs, not this list's.
    .$call((qb) => otherEntries.reduce((q, id) => q.where((eb) => eb.or([eb('template_data', 'is', null), eb('template_data', 'not like', `%${id}%`)])), qb))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Whether a message of `kind` to `email` was queued at or after `since` (ISO), whatever became of it. */
export async function queuedSince(db: Db, email: string, kind: string, since: string): Promise<boolean> {
  const row = await db
    .selectFrom('mail_outbox')
    .select('id')
    .where('to_address', '=', email)
    .where('kind', '=', kind)
    .where('created_at', '>=', since)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Deletes every outbox row to `email`, whatever its status: after an erasure they are personal data we no longer hold. */
export async function deleteMailTo(db: Db, email: string): Promise<number> {
  const result = await db.deleteFrom('mail_outbox').where('to_address', '=', email).executeTakeFirst();
  return Number(result.numDeletedRows);
}
