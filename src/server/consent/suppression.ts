import type { Kysely } from 'kysely';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Database } from '../db/schema.js';

/**
 * The suppression list: the addresses of people who erased their entry, as keyed hashes only
 * (HMAC-SHA256 under a key derived from the server's secret key, never stored in the database), so
 * a dump cannot tell which addresses they were, yet a CSV import or an invite can check an address
 * against them. Signing up again removes the address's hash: the person asked.
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

/** True when the address was erased and must not be brought back by an import or an invite. */
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

/** Adds a hash (idempotent: a hash already listed keeps its first reason and time). */
export async function addSuppression(db: Db, hash: string, reason: SuppressionReason, now: Date): Promise<void> {
  await db
    .insertInto('waitlist_suppressions')
    .values({ email_hash: hash, reason, created_at: now.toISOString() })
    .onConflict((oc) => oc.column('email_hash').doNothing())
    .execute();
}
