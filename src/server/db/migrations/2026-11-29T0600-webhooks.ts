import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// Webhooks (src/server/webhooks, docs/decisions/057): the endpoints (URL, events, secret sealed with
// the secret box), the events as sent (one payload per event, however many endpoints take it), and
// one delivery per event and endpoint, written in the same transaction as the change that causes
// the event, then sent by the in-process worker with a lease like the mail outbox.
export async function up(db: Kysely<any>): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = isPostgres ? 'timestamptz' : 'text';
  const id = isPostgres ? 'uuid' : 'text';
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('url', 'text', (c) => c.notNull())
    // `*` (every event) or the event types between commas: `,signup.created,invite.sent,`.
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('disabled_reason', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    // The waitlist entry the event is about: its events go when the entry is erased.
    .addColumn('entry_id', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await sql`CREATE INDEX webhook_events_entry_idx ON webhook_events (entry_id)`.execute(db);
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('event_id', 'text', (c) => c.notNull().references('webhook_events.id').onDelete('cascade'))
    .addColumn('endpoint_id', id, (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('queued').check(sql`status IN ('queued', 'sending', 'delivered', 'failed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', ts, (c) => c.notNull())
    .addColumn('lease_until', ts)
    .addColumn('lease_token', 'text')
    .addColumn('response_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('finished_at', ts)
    .execute();
  await sql`CREATE INDEX webhook_deliveries_status_next_attempt_idx ON webhook_deliveries (status, next_attempt_at)`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at)`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').ifExists().execute();
  await db.schema.dropTable('webhook_events').ifExists().execute();
  await db.schema.dropTable('webhook_endpoints').ifExists().execute();
}
