import { PostgresAdapter, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// Keys the secret box keeps across a change of AUTH_SECRET_KEY (security review, finding 9): the
// keyed-hash key (suppression hashes, audit hashes, e-mail link tokens) cannot change, since the
// values hashed with it (erased addresses) are gone. `npm run admin -- rotate-secret` stores it here,
// sealed with the new AUTH_SECRET_KEY; without a row it is derived from the secret key, as before.
export async function up(db: Kysely<any>): Promise<void> {
  const ts = db.getExecutor().adapter instanceof PostgresAdapter ? 'timestamptz' : 'text';
  await db.schema
    .createTable('auth_secret_box_keys')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('sealed_key', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('auth_secret_box_keys').ifExists().execute();
}
