import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { EntryStatus } from '../../../shared/waitlist/entry.js';

/** What a waitlist e-mail needs of its entry when it is rendered (read-only). */
export interface EmailRecipient {
  id: string;
  email: string;
  status: EntryStatus;
}

const ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The entry an outbox row's `data.entryId` names, or undefined when it is gone (erased, deleted). */
export async function findEmailRecipient(db: Kysely<Database>, entryId: unknown): Promise<EmailRecipient | undefined> {
  // A malformed id is a bug in whoever queued the message: said clearly, not as a database error.
  if (typeof entryId !== 'string' || !ID_RE.test(entryId)) throw new Error('the message data has no valid entryId');
  return db.selectFrom('waitlist').select(['id', 'email', 'status']).where('id', '=', entryId).executeTakeFirst();
}
