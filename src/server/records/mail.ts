import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { RECORDED_EMAIL_TEMPLATES, recordedEmailText, renderWaitlistEmailForRecords, type RecordedEmailTemplate } from '../consent/index.js';
import type { SendRecorder } from '../mail/index.js';
import type { UsageCounter } from './usage.js';
import { storeVersion } from './versions.js';

/**
 * Each e-mail sent, with the version of its template (docs/decisions/055). The version is the
 * template rendered with placeholders for each recipient's links (consent/emails), archived the
 * first time this instance sends that template; the send is written in the transaction that marks
 * the outbox row sent, and outlives that row (deleted once the entry it was sent to is gone).
 */
const ENTRY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isRecordedTemplate(name: string | null): name is RecordedEmailTemplate {
  return name !== null && (RECORDED_EMAIL_TEMPLATES as readonly string[]).includes(name);
}

export interface MailRecordSettings {
  publicUrl: string;
  confirmationLinkTtlSeconds: number;
}

/**
 * The archived version of the text an e-mail was sent from, as this instance sends it: the template
 * as the portal's list sends it, or as an offering list's (named `offerings/SLUG/template`: its issuer and
 * statements are in the text), rendered and stored once per instance, then its id. Undefined when
 * the entry is gone (erased while its message was sent).
 */
export function templateVersions(
  db: Kysely<Database>,
  settings: MailRecordSettings,
): (template: RecordedEmailTemplate, entryId: string | null) => Promise<string | undefined> {
  const versions = new Map<string, Promise<string>>();
  return async (template, entryId) => {
    const text = await recordedEmailText(db, template, entryId);
    if (!text) return undefined;
    let version = versions.get(text.key);
    if (!version) {
      version = renderWaitlistEmailForRecords(template, settings, text.offering).then((mail) =>
        storeVersion(db, { kind: 'email', name: text.key, parts: { 'subject.txt': `${mail.subject}\n`, 'body.txt': mail.text, 'body.html': mail.html } }),
      );
      // A failure (the database away) is tried again on the next send.
      version.catch(() => versions.delete(text.key));
      versions.set(text.key, version);
    }
    return version;
  };
}

/** The recorder app.mail calls for every message: the waitlist's and the restore e-mail are recorded, other messages (the admin's test e-mail) are not. */
export function mailSendRecorder(
  versionOf: (template: RecordedEmailTemplate, entryId: string | null) => Promise<string | undefined>,
  usage: UsageCounter,
): SendRecorder {
  return async (message) => {
    const template = message.template;
    if (!isRecordedTemplate(template)) return null;
    const entryId = typeof message.data?.entryId === 'string' && ENTRY_ID.test(message.data.entryId) ? message.data.entryId : null;
    const versionId = await versionOf(template, entryId);
    // The entry went while its message was sent: its send records would be deleted with it anyway.
    if (versionId === undefined) return null;
    return async (trx: Kysely<Database>, sentAt: Date) => {
      await trx
        .insertInto('records_mail_sends')
        .values({
          message_id: message.messageId,
          // Null when the entry is gone since (erased while the message was sent).
          entry_id: entryId === null ? null : sql<string>`(SELECT id FROM waitlist WHERE id = ${entryId})`,
          template,
          version_id: versionId,
          sent_at: sentAt.toISOString(),
        })
        .onConflict((oc) => oc.doNothing())
        .execute();
      usage.add(versionId, sentAt.getTime());
    };
  };
}
