import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// Each suppression record carries a check value of the keyed-hash key that made it
// (consent/suppression.ts suppressionKeyCheck), so an import run with another secret key is refused
// instead of letting erased addresses back in. Records from before this migration have none.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('waitlist_suppressions').addColumn('key_check', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('waitlist_suppressions').dropColumn('key_check').execute();
}
