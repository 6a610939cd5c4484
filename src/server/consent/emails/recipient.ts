import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { EntryStatus } from '../../../shared/waitlist/entry.js';
import type { ListKind } from '../../../shared/lists/contract.js';

/** What a waitlist e-mail needs of its entry when it is rendered (read-only). */
export interface EmailRecipient {
  id: string;
  email: string;
  status: EntryStatus;
  /** The entry's list (issue 31): the portal's (kind `portal`) or an offering list's issuer and kind. */
  listKind: 'portal' | ListKind;
  listName: string;
  listSlug: string;
}

const ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The entry an outbox row's `data.entryId` names, or undefined when it is gone (erased, deleted). */
export async function findEmailRecipient(db: Kysely<Database>, entryId: unknown): Promise<EmailRecipient | undefined> {
  // A malformed id is a bug in whoever queued the message: said clearly, not as a database error.
  if (typeof entryId !== 'string' || !ID_RE.test(entryId)) throw new Error('the message data has no valid entryId');
  return db
    .selectFrom('waitlist')
    .leftJoin('lists', 'lists.id', 'waitlist.list_id')
    .select(['waitlist.id', 'waitlist.email', 'waitlist.status', 'lists.kind as listKind', 'lists.name as listName', 'lists.slug as listSlug'])
    .where('waitlist.id', '=', entryId)
    .executeTakeFirst()
    // The portal's list needs no row of its own (an entry without a list row is the portal's).
    .then((row) => row && { ...row, listKind: row.listKind ?? 'portal', listName: row.listName ?? '', listSlug: row.listSlug ?? 'portal' });
}
