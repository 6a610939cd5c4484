import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// The outbox's lease token (security review, finding 10): each claim writes a random token into
// the rows it takes, and only that claim may renew the lease or record the outcome. A sender that
// outlived its lease (another worker has taken the row meanwhile) has its result discarded.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('mail_outbox').addColumn('lease_token', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('mail_outbox').dropColumn('lease_token').execute();
}
