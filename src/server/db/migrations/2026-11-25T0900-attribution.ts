import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// Attribution, search and filters (issue 10): where each signup came from, and the indexes that
// keep the admin's filtered pages, counts and GROUP BY panels fast at a million entries.
export async function up(db: Kysely<any>): Promise<void> {
  // Nullable columns without a default: adding them rewrites no rows on either database.
  for (const name of ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'referrer', 'landing_path', 'source']) {
    await db.schema.alterTable('waitlist').addColumn(name, 'text').execute();
  }
  // One index per equality filter, ending in the list's order (created_at DESC, id DESC): a filtered
  // page is an index range read newest first, its count and its GROUP BY read the index alone.
  await sql`CREATE INDEX waitlist_country_created_idx ON waitlist (country, created_at DESC, id DESC)`.execute(db);
  await sql`CREATE INDEX waitlist_source_created_idx ON waitlist (source, created_at DESC, id DESC)`.execute(db);
  await sql`CREATE INDEX waitlist_campaign_created_idx ON waitlist (utm_campaign, created_at DESC, id DESC)`.execute(db);
  // Replaces the status index of 2026-11-24T0900 (this one serves every query that one did).
  await sql`CREATE INDEX waitlist_status_created_idx ON waitlist (status, created_at DESC, id DESC)`.execute(db);
  await sql`DROP INDEX IF EXISTS waitlist_status_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS waitlist_status_idx ON waitlist (status)`.execute(db);
  for (const index of ['waitlist_status_created_idx', 'waitlist_campaign_created_idx', 'waitlist_source_created_idx', 'waitlist_country_created_idx']) {
    await sql`DROP INDEX IF EXISTS ${sql.raw(index)}`.execute(db);
  }
  for (const name of ['source', 'landing_path', 'referrer', 'utm_content', 'utm_term', 'utm_campaign', 'utm_medium', 'utm_source']) {
    await db.schema.alterTable('waitlist').dropColumn(name).execute();
  }
}
