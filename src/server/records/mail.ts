import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { RECORDED_EMAIL_TEMPLATES, renderWaitlistEmailForRecords, type RecordedEmailTemplate } from '../consent/index.js';
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

/** The template's archived version as this instance sends it: rendered and stored once, then its id. */
export function templateVersions(db: Kysely<Database>, settings: MailRecordSettings): (template: RecordedEmailTemplate) => Promise<string> {
  const versions = new Map<RecordedEmailTemplate, Promise<string>>();
  return (template) => {
    let version = versions.get(template);
    if (!version) {
      version = renderWaitlistEmailForRecords(template, settings).then((mail) =>
        storeVersion(db, { kind: 'email', name: template, parts: { 'subject.txt': `${mail.subject}\n`, 'body.txt': mail.text, 'body.html': mail.html } }),
      );
      // A failure (the database away) is tried again on the next send.
      version.catch(() => versions.delete(template));
      versions.set(template, version);
    }
    return version;
  };
}

/** The recorder app.mail calls for every message: the waitlist's and the restore e-mail are recorded, other messages (the admin's test e-mail) are not. */
export function mailSendRecorder(versionOf: (template: RecordedEmailTemplate) => Promise<string>, usage: UsageCounter): SendRecorder {
  return async (message) => {
    const template = message.template;
    if (!isRecordedTemplate(template)) return null;
    const versionId = await versionOf(template);
    const entryId = typeof message.data?.entryId === 'string' && ENTRY_ID.test(message.data.entryId) ? message.data.entryId : null;
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
