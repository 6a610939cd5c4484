import type { Kysely } from 'kysely';
import { toIsoTimestamp } from '../db/database.js';
import type { Database } from '../db/schema.js';
import type { RecordVersion } from '../../shared/admin/records-api.js';
import { findVersions, sha256Hex } from './versions.js';

/**
 * Consent records (docs/decisions/055): the versions one server instance gives every signup, as a
 * row named by their ids' hash; each entry stores that name (waitlist.consent_record), a constant
 * of the instance, so a signup writes no row of its own for it.
 */
type Db = Kysely<Database>;

export interface ConsentVersions {
  page: string | null;
  statement: string;
  legends: string;
}

/** Stores the set unless it exists; resolves to its id (the same set has the same id everywhere). */
export async function storeConsentRecord(db: Db, versions: ConsentVersions, now: Date = new Date()): Promise<string> {
  const id = sha256Hex(JSON.stringify([versions.page, versions.statement, versions.legends])).slice(0, 32);
  await db
    .insertInto('records_consents')
    .values({ id, page_version: versions.page, statement_version: versions.statement, legends_version: versions.legends, created_at: now.toISOString() })
    .onConflict((oc) => oc.doNothing())
    .execute();
  return id;
}

/** What one entry was shown when it joined: the consent version string it stores, and the kept texts. */
export interface EntryConsentTexts {
  entryId: string;
  consentVersion: string | null;
  consentRecord: string | null;
  page: RecordVersion | null;
  statement: RecordVersion | null;
  legends: RecordVersion | null;
}

/** The texts an entry was given, or undefined when there is no such entry. */
export async function entryConsentTexts(db: Db, entryId: string): Promise<EntryConsentTexts | undefined> {
  const entry = await db.selectFrom('waitlist').select(['id', 'consent_version', 'consent_record']).where('id', '=', entryId).executeTakeFirst();
  if (!entry) return undefined;
  const none = { entryId: entry.id, consentVersion: entry.consent_version, consentRecord: entry.consent_record, page: null, statement: null, legends: null };
  if (entry.consent_record === null) return none;
  const record = await db.selectFrom('records_consents').selectAll().where('id', '=', entry.consent_record).executeTakeFirst();
  if (!record) return none;
  const ids = [record.page_version, record.statement_version, record.legends_version].filter((id): id is string => id !== null);
  const byId = new Map((await findVersions(db, ids)).map((v) => [v.id, v]));
  const of = (id: string | null) => (id === null ? null : (byId.get(id) ?? null));
  return { ...none, page: of(record.page_version), statement: of(record.statement_version), legends: of(record.legends_version) };
}

/** The template version each e-mail sent to an entry was rendered from, oldest first (kept after the outbox rows). */
export async function entryMailSends(db: Db, entryId: string): Promise<Array<{ messageId: string; template: string; versionId: string; sentAt: string }>> {
  const rows = await db
    .selectFrom('records_mail_sends')
    .select(['message_id', 'template', 'version_id', 'sent_at'])
    .where('entry_id', '=', entryId)
    .orderBy('sent_at')
    .execute();
  return rows.map((r) => ({ messageId: r.message_id, template: r.template, versionId: r.version_id, sentAt: toIsoTimestamp(r.sent_at) }));
}
