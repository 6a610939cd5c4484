import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { auditEmailHash, recordAudit } from '../audit/audit-log.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Database } from '../db/schema.js';
import { lockWaitlistEntry, updateEntryConsent } from '../db/waitlist-entries.js';
import { normalizeIp } from '../geolocation/ip.js';
import { capped, redactedWhenSettled, type RenderedMail, type TemplatedMessage } from '../mail/index.js';
import { emailContent, siteContent } from '../../shared/site/content.js';
import { NO_ATTRIBUTION } from '../../shared/waitlist/attribution.js';
import { CONFIRM_PAGE_PATH, type ConfirmOutcome } from '../../shared/waitlist/consent-contract.js';
import { NO_CONSENT_RECORD, type WaitlistEntry } from '../../shared/waitlist/entry.js';
import { fill, RESTORE_TEMPLATE } from './emails/words.js';
import { linkUrl } from './links.js';
import { welcomeMail, type MailQueue } from './mail.js';
import { queuedSince } from './repository.js';
import { maskEmail } from './service.js';
import { isSuppressed, removeSuppression } from './suppression.js';
import type { HttpError } from '../http/errors.js';

/**
 * The erasure and unsubscribe hold (issue 28, docs/decisions/049): an address its owner erased or
 * unsubscribed through the e-mail links comes back only through a link e-mailed to it at that
 * moment, whatever SIGNUP_CONFIRMATION says. Signing up again leaves it erased (nothing stored) or
 * unsubscribed, and queues the "confirm it's you" e-mail (template `restore`) in the signup's
 * transaction; its link (the Confirm page, /confirm?token=r.…) restores it with a new consent
 * record: confirmed, at that time, from that client address. The form answers exactly as for a new
 * signup. Without e-mail (no SMTP_URL) such an address cannot come back, and the log says why.
 *
 * The link's token carries the address sealed (AES-GCM under the server's secret key) with its
 * expiry, since an erased address is stored nowhere but in the outbox row that mails it.
 */

/** Restore tokens start with this; entry tokens (links.ts) never do (their first part is base64url, no dot). */
const TOKEN_PREFIX = 'r.';
const SEAL_CONTEXT = 'waitlist restore v1';

type RestoreBox = Pick<SecretBox, 'seal' | 'open' | 'hmac'>;

/** Why an address is held: its owner erased it, or unsubscribed. */
export type HoldReason = 'erased' | 'unsubscribed';

export interface HoldDeps {
  mail: MailQueue;
  box: Pick<SecretBox, 'hmac'>;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** CONFIRMATION_RESEND_SECONDS: at most one restore e-mail per address in this time. */
  resendSeconds: number;
  now: Date;
}

/** The restore e-mail's outbox message: capped like a confirmation (mail/caps.ts), rendered when sent. */
export function restoreMail(email: string, client: string | null): TemplatedMessage {
  return capped({ kind: RESTORE_TEMPLATE, to: email, subject: fill(emailContent.restore.subject), template: RESTORE_TEMPLATE, data: {} }, client);
}

/**
 * The signup's hook for an erased or unsubscribed address (inside the signup's transaction): queues
 * the restore e-mail, at most once per resend interval, and changes nothing else. The caller answers
 * as for a new signup. Logs name no address.
 */
export async function holdReturningAddress(trx: Kysely<Database>, deps: HoldDeps, email: string, reason: HoldReason, client: string | null): Promise<void> {
  if (!deps.mail.enabled) {
    deps.log.warn(
      { reason },
      `waitlist signup: an address its owner ${reason} signed up again; it comes back only through a link e-mailed to it, and e-mail is off (SMTP_URL is not set), so it stays ${reason}`,
    );
    return;
  }
  const since = new Date(deps.now.getTime() - deps.resendSeconds * 1000).toISOString();
  if (await queuedSince(trx, email, RESTORE_TEMPLATE, since)) return;
  // To an erased address: once sent (or held back), the outbox row keeps only its masked form.
  const message = restoreMail(email, client);
  await deps.mail.enqueue(trx, reason === 'erased' ? redactedWhenSettled(message, maskEmail(email)) : message);
  deps.log.info({ reason }, `waitlist signup: an address its owner ${reason} signed up again; "confirm it's you" e-mail queued, nothing else changed`);
}

export function isRestoreToken(token: unknown): token is string {
  return typeof token === 'string' && token.startsWith(TOKEN_PREFIX);
}

export function createRestoreToken(box: RestoreBox, email: string, expiresAt: number): string {
  return TOKEN_PREFIX + box.seal(`${Math.floor(expiresAt)}:${email}`, SEAL_CONTEXT);
}

/** The address a restore token names, or why not: forged or altered (`invalid`), or `expired`. Never throws. */
export function openRestoreToken(box: RestoreBox, token: string, nowSeconds: number): { email: string } | { refused: 'invalid' | 'expired' } {
  let plain: string;
  try {
    plain = box.open(token.slice(TOKEN_PREFIX.length), SEAL_CONTEXT);
  } catch {
    return { refused: 'invalid' };
  }
  const colon = plain.indexOf(':');
  const expiresAt = Number(plain.slice(0, colon));
  if (colon <= 0 || !Number.isInteger(expiresAt)) return { refused: 'invalid' };
  if (expiresAt <= nowSeconds) return { refused: 'expired' };
  return { email: plain.slice(colon + 1) };
}

export interface RestoreDeps {
  db: Kysely<Database>;
  box: RestoreBox;
  mail: MailQueue;
  /** MAIL_WELCOME=on: the welcome e-mail goes with the restore. */
  welcome: boolean;
  now?: () => Date;
  /** The kept texts the restore link's page stands for (app.records.consentRecord), stored with the entry. */
  consentRecord: string | null;
  /** The refusal of a link (service.ts linkError). */
  refuse(code: 'link_invalid' | 'link_expired' | 'entry_gone'): HttpError;
}

/** What a restore did: the entry, and whether it is a new row (an erased address) or the unsubscribed one confirmed. */
export interface RestoreOutcome {
  outcome: ConfirmOutcome;
  entryId: string | null;
  created: boolean;
}

/**
 * The restore link used (POST /confirm or /api/waitlist/confirm with a restore token): an
 * unsubscribed entry is confirmed again with a new consent record; an erased address leaves the
 * suppression list and joins as a new, confirmed entry (time and client address of this click, no
 * location or attribution: nothing of its old entry is kept). An address on the list otherwise is
 * `already_confirmed`; one neither on the list nor suppressed is `entry_gone`. Audited with a keyed hash.
 */
export async function restoreAddress(deps: RestoreDeps, token: string, ip: string | undefined): Promise<RestoreOutcome> {
  const now = deps.now?.() ?? new Date();
  const opened = openRestoreToken(deps.box, token, now.getTime() / 1000);
  if ('refused' in opened) throw deps.refuse(opened.refused === 'expired' ? 'link_expired' : 'link_invalid');
  const { email } = opened;
  const at = now.toISOString();
  const clientIp = normalizeIp(ip);
  const consent = { status: 'confirmed', consent_version: siteContent.consent.version, consent_record: deps.consentRecord, confirmed_at: at, confirmed_ip: clientIp } as const;
  return deps.db.transaction().execute(async (trx) => {
    const known = await lockWaitlistEntry(trx, { email });
    let restored: { id: string; email: string; created: boolean; was: HoldReason };
    if (known) {
      if (known.status !== 'unsubscribed') return { outcome: 'already_confirmed', entryId: known.id, created: false };
      await updateEntryConsent(trx, known.id, { ...consent, unsubscribed_at: null });
      restored = { id: known.id, email: known.email, created: false, was: 'unsubscribed' };
    } else {
      if (!(await removeSuppression(trx, deps.box, email))) throw deps.refuse('entry_gone');
      const entry: WaitlistEntry = {
        id: randomUUID(),
        email,
        created_at: at,
        ip_address: clientIp,
        country: null,
        city: null,
        region: null,
        ...NO_ATTRIBUTION,
        ...NO_CONSENT_RECORD,
        ...consent,
      };
      await trx.insertInto('waitlist').values(entry).execute();
      restored = { id: entry.id, email, created: true, was: 'erased' };
    }
    if (deps.welcome && deps.mail.enabled) await deps.mail.enqueue(trx, welcomeMail(restored));
    await recordAudit(trx, {
      action: 'waitlist.restored_by_subject',
      actorEmail: null,
      actorId: null,
      ip: null,
      detail: { email_hash: auditEmailHash(deps.box, email), was: restored.was },
    });
    return { outcome: 'confirmed', entryId: restored.id, created: restored.created };
  });
}

/**
 * The restore e-mail's renderer (registered with the waitlist's e-mails, emails/index.ts): sent only
 * while the address is still erased or unsubscribed, its link signed then, valid as long as a
 * confirmation link. No manage link and no List-Unsubscribe: the address is on no list.
 */
export function registerRestoreEmail(app: FastifyInstance, publicUrl: string, loadRender: () => Promise<{ renderRestoreEmail(props: { restoreUrl: string; hours: number }): Promise<{ html: string; text: string }> }>): void {
  const { db } = app.database;
  const ttl = app.config.consent.confirmationLinkTtlSeconds;
  app.mail.registerTemplate(RESTORE_TEMPLATE, async (_data, message): Promise<RenderedMail | { skip: string }> => {
    const entry = await db
      .selectFrom('waitlist')
      .select('status')
      .where('list_id', '=', 0)
      .where((eb) => eb(eb.fn('lower', ['email']), '=', message.to.toLowerCase()))
      .executeTakeFirst();
    if (entry ? entry.status !== 'unsubscribed' : !(await isSuppressed(db, app.secretBox, message.to))) {
      return { skip: 'the address is no longer erased or unsubscribed' };
    }
    const token = createRestoreToken(app.secretBox, message.to, Math.floor(Date.now() / 1000) + ttl);
    const bodies = await (await loadRender()).renderRestoreEmail({ restoreUrl: linkUrl(publicUrl, CONFIRM_PAGE_PATH, token), hours: Math.round(ttl / 3600) });
    return { subject: fill(emailContent.restore.subject), text: bodies.text, html: bodies.html, headers: {} };
  });
}
