import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// The records a funding portal keeps (issue 30, 17 CFR 227.404; src/server/records): every version
// of every text shown or sent, stored once by content, with when it was first and last used and how
// often; the set of versions each signup was given (waitlist.consent_record); and each e-mail sent
// with the template version it was rendered from, kept after its outbox row is deleted.
export async function up(db: Kysely<any>): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = isPostgres ? 'timestamptz' : 'text';

  await db.schema
    .createTable('records_versions')
    // `<kind>:<name>@<first 16 hex of the hash>`: the same text gets the same id on every instance.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind IN ('page', 'statement', 'legends', 'email')`))
    .addColumn('name', 'text', (c) => c.notNull())
    // SHA-256 (hex) of `parts`, the text as served: a JSON object of part name → text.
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('parts', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('first_used_at', ts)
    .addColumn('last_used_at', ts)
    .addColumn('use_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addUniqueConstraint('records_versions_text_key', ['kind', 'name', 'hash'])
    .execute();
  // The bundle and the admin list read versions by when they were in use.
  await sql`CREATE INDEX records_versions_last_used_idx ON records_versions (last_used_at)`.execute(db);

  // A kept text never changes: only its use (first, last, count) is written after it is stored.
  if (isPostgres) {
    await sql`
      CREATE FUNCTION records_versions_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.id IS DISTINCT FROM OLD.id OR NEW.kind IS DISTINCT FROM OLD.kind OR NEW.name IS DISTINCT FROM OLD.name
           OR NEW.hash IS DISTINCT FROM OLD.hash OR NEW.parts IS DISTINCT FROM OLD.parts OR NEW.created_at IS DISTINCT FROM OLD.created_at THEN
          RAISE EXCEPTION 'records_versions: a kept version never changes (id %)', OLD.id;
        END IF;
        RETURN NEW;
      END $$`.execute(db);
    await sql`CREATE TRIGGER records_versions_immutable BEFORE UPDATE ON records_versions FOR EACH ROW EXECUTE FUNCTION records_versions_immutable()`.execute(db);
  } else {
    await sql`
      CREATE TRIGGER records_versions_immutable BEFORE UPDATE OF id, kind, name, hash, parts, created_at ON records_versions
      BEGIN SELECT RAISE(ABORT, 'records_versions: a kept version never changes'); END`.execute(db);
  }

  // The versions a signup was given: the page with the form (null when the server has no web
  // build: `npm run dev`, tests), the consent statement, the legends.
  await db.schema
    .createTable('records_consents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('page_version', 'text', (c) => c.references('records_versions.id'))
    .addColumn('statement_version', 'text', (c) => c.notNull().references('records_versions.id'))
    .addColumn('legends_version', 'text', (c) => c.notNull().references('records_versions.id'))
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();

  // A constant per server instance, written with the entry (no statement of its own; no foreign
  // key, so a signup's insert does not look it up). Null for entries from before, and imports.
  await db.schema.alterTable('waitlist').addColumn('consent_record', 'text').execute();

  // Each e-mail sent: its template version. Kept after the outbox row; deleted once the entry is
  // gone (the records' daily retention pass). No foreign key: TRUNCATE waitlist keeps working, and
  // deleting entries (a million at a time from the admin) checks nothing here.
  await db.schema
    .createTable('records_mail_sends')
    .addColumn('message_id', 'text', (c) => c.primaryKey())
    .addColumn('entry_id', isPostgres ? 'uuid' : 'text')
    .addColumn('template', 'text', (c) => c.notNull())
    .addColumn('version_id', 'text', (c) => c.notNull().references('records_versions.id'))
    .addColumn('sent_at', ts, (c) => c.notNull())
    .execute();
  await sql`CREATE INDEX records_mail_sends_entry_idx ON records_mail_sends (entry_id)`.execute(db);
  await sql`CREATE INDEX records_mail_sends_version_idx ON records_mail_sends (version_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.dropTable('records_mail_sends').ifExists().execute();
  await db.schema.alterTable('waitlist').dropColumn('consent_record').execute();
  await db.schema.dropTable('records_consents').ifExists().execute();
  await db.schema.dropTable('records_versions').ifExists().execute();
  if (isPostgres) await sql`DROP FUNCTION IF EXISTS records_versions_immutable()`.execute(db);
}
