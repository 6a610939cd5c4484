import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// Consent and e-mail (issue 9): each entry's status and consent record, the suppression list of
// erased addresses (keyed hashes only), and outbox messages rendered from a template at send time.
export async function up(db: Kysely<any>): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = isPostgres ? 'timestamptz' : 'text';

  // Existing entries joined without a confirmation step: 'joined'. Adding a column with a constant
  // default rewrites no rows on either database, so this is instant at a million entries.
  await db.schema
    .alterTable('waitlist')
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('joined').check(sql`status IN ('pending', 'joined', 'confirmed', 'invited', 'unsubscribed')`),
    )
    .execute();
  for (const [name, type] of [
    ['consent_version', 'text'],
    ['confirmation_sent_at', ts],
    ['confirmed_at', ts],
    ['confirmed_ip', 'text'],
    ['invited_at', ts],
    ['unsubscribed_at', ts],
  ] as const) {
    await db.schema.alterTable('waitlist').addColumn(name, type).execute();
  }
  await sql`CREATE INDEX waitlist_status_idx ON waitlist (status)`.execute(db);

  // Erased addresses: HMAC-SHA256 (hex) under a key kept outside the database, so a dump cannot
  // tell which addresses they were, yet an import or an invite can check an address against them.
  await db.schema
    .createTable('waitlist_suppressions')
    .addColumn('email_hash', 'text', (c) => c.primaryKey())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();

  // A templated message stores only the template's name and its data (JSON); the worker renders
  // subject, text and HTML when it sends, so links carry a fresh expiry and no link is stored.
  await db.schema.alterTable('mail_outbox').addColumn('template', 'text').execute();
  await db.schema.alterTable('mail_outbox').addColumn('template_data', 'text').execute();
  // Erasure and unsubscribe find a person's queued messages by address.
  await sql`CREATE INDEX mail_outbox_to_address_idx ON mail_outbox (to_address)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS mail_outbox_to_address_idx`.execute(db);
  await db.schema.alterTable('mail_outbox').dropColumn('template_data').execute();
  await db.schema.alterTable('mail_outbox').dropColumn('template').execute();
  await db.schema.dropTable('waitlist_suppressions').ifExists().execute();
  await sql`DROP INDEX IF EXISTS waitlist_status_idx`.execute(db);
  for (const name of ['unsubscribed_at', 'invited_at', 'confirmed_ip', 'confirmed_at', 'confirmation_sent_at', 'consent_version', 'status']) {
    await db.schema.alterTable('waitlist').dropColumn(name).execute();
  }
}
