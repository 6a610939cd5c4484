import type { Kysely } from 'kysely';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Database } from '../db/schema.js';

/**
 * The suppression list: the addresses of people who erased their entry, as keyed hashes only
 * (HMAC-SHA256 under a key derived from the server's secret key, never stored in the database), so
 * a dump cannot tell which addresses they were, yet a CSV import or an invite can check an address
 * against them. Signing up again does not remove it: the address comes back only through the link
 * e-mailed to it at that moment (restore.ts), and each record carries a check value of the key
 * that made it, so a run with another key is told apart from an address that was never erased.
 */

/** The keyed hash of app.secretBox. */
export type SuppressionBox = Pick<SecretBox, 'hmac'>;

/** The HMAC context of suppression hashes; a new context would orphan every stored hash. */
export const SUPPRESSION_HASH_CONTEXT = 'waitlist suppression v1';

/** Why an address is suppressed: `erased` (by the person, from an e-mail's preferences page). */
export type SuppressionReason = 'erased';

type Db = Kysely<Database>;

/** The stored hash of an address: trimmed and lower-cased first, as the waitlist stores addresses. */
export function suppressionHash(box: SuppressionBox, email: string): string {
  return box.hmac(email.trim().toLowerCase(), SUPPRESSION_HASH_CONTEXT);
}

/** The HMAC context of the key check value: a hash of nothing, as long as the key it checks stays secret. */
const KEY_CHECK_CONTEXT = 'waitlist suppression key check v1';

/**
 * A short check value of the keyed-hash key (its first 64 bits of an HMAC of nothing): the same for
 * every record made with one key, different under another, and useless for recomputing a hash.
 */
export function suppressionKeyCheck(box: SuppressionBox): string {
  return box.hmac('', KEY_CHECK_CONTEXT).slice(0, 16);
}

/**
 * How many suppression records were made with another key than `box`'s: their check value differs
 * (records from before the check value existed carry none and are not counted).
 */
export async function recordsUnderAnotherKey(db: Db, box: SuppressionBox): Promise<number> {
  const row = await db
    .selectFrom('waitlist_suppressions')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('key_check', 'is not', null)
    .where('key_check', '<>', suppressionKeyCheck(box))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** True when the address was erased and must not be brought back by an import, an invite or a signup. */
export async function isSuppressed(db: Db, box: SuppressionBox, email: string): Promise<boolean> {
  const row = await db
    .selectFrom('waitlist_suppressions')
    .select('email_hash')
    .where('email_hash', '=', suppressionHash(box, email))
    .executeTakeFirst();
  return row !== undefined;
}

/** Hashes per `IN (…)` query: far below both databases' parameter limits. */
const LOOKUP_CHUNK_SIZE = 500;

/** Which of these hashes are suppressed (bulk form of isSuppressed, for imports). */
export async function suppressedHashes(db: Db, hashes: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < hashes.length; i += LOOKUP_CHUNK_SIZE) {
    const rows = await db
      .selectFrom('waitlist_suppressions')
      .select('email_hash')
      .where('email_hash', 'in', hashes.slice(i, i + LOOKUP_CHUNK_SIZE))
      .execute();
    for (const row of rows) found.add(row.email_hash);
  }
  return found;
}

/** How many addresses are suppressed (an import without the secret key can only go on at 0). */
export async function countSuppressions(db: Db): Promise<number> {
  const row = await db.selectFrom('waitlist_suppressions').select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Adds an address's hash (idempotent: a hash already listed keeps its first reason and time). */
export async function addSuppression(db: Db, box: SuppressionBox, email: string, reason: SuppressionReason, now: Date): Promise<void> {
  await db
    .insertInto('waitlist_suppressions')
    .values({ email_hash: suppressionHash(box, email), reason, created_at: now.toISOString(), key_check: suppressionKeyCheck(box) })
    .onConflict((oc) => oc.column('email_hash').doNothing())
    .execute();
}

/** Removes an address's hash (the person came back through the link e-mailed to them, restore.ts). */
export async function removeSuppression(db: Db, box: SuppressionBox, email: string): Promise<boolean> {
  const result = await db.deleteFrom('waitlist_suppressions').where('email_hash', '=', suppressionHash(box, email)).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
