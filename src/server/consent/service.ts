import type { Kysely } from 'kysely';
import { auditEmailHash, recordAudit } from '../audit/audit-log.js';
import type { Database } from '../db/schema.js';
import { normalizeIp } from '../geolocation/ip.js';
import { HttpError } from '../http/errors.js';
import {
  LINK_ERRORS,
  type ConfirmOutcome,
  type LinkErrorCode,
  type LinkPurpose,
  type PreferencesView,
  type UnsubscribeOutcome,
} from '../../shared/waitlist/consent-contract.js';
import { welcomeMail, type MailQueue } from './mail.js';
import { verifyLinkToken } from './links.js';
import { lockWaitlistEntry, updateEntryConsent } from '../db/waitlist-entries.js';
import { cancelQueuedMail, deleteMailTo, deleteWaitlistEntry } from './repository.js';
import { addSuppression, suppressionHash, type SuppressionBox } from './suppression.js';

/**
 * What the links in e-mails do (src/shared/waitlist/consent-contract.ts): confirm (double opt-in),
 * show whom a link is for, unsubscribe, erase. Each checks the link's signed token first, then
 * changes the entry in one transaction; every refusal is an HttpError with a LINK_ERRORS code and
 * changes nothing.
 */

export interface ConsentDeps {
  db: Kysely<Database>;
  /** app.secretBox: verifies tokens, hashes erased addresses. */
  box: SuppressionBox;
  mail: MailQueue;
  /** MAIL_WELCOME=on: the welcome e-mail is queued when an entry is confirmed. */
  welcome: boolean;
  /** The clock (tests); now by default. */
  now?: () => Date;
}

export function linkError(code: LinkErrorCode): HttpError {
  const { status, message } = LINK_ERRORS[code];
  return new HttpError(status, code, message);
}

/** The entry a token names, or the refusal: forged, altered or for another purpose (400), expired (410). */
export function entryIdOfToken(deps: Pick<ConsentDeps, 'box' | 'now'>, token: unknown, purpose: LinkPurpose): string {
  const now = deps.now?.() ?? new Date();
  const check = verifyLinkToken(deps.box, token, purpose, now.getTime() / 1000);
  if (!check.ok) throw linkError(check.reason === 'expired' ? 'link_expired' : 'link_invalid');
  return check.claims.entryId;
}

const nowOf = (deps: Pick<ConsentDeps, 'now'>) => deps.now?.() ?? new Date();

/**
 * Double opt-in: a pending entry becomes confirmed, with the time and the address the request came
 * from (the consent record), and gets the welcome e-mail when MAIL_WELCOME=on. An entry that joined
 * without a confirmation step is confirmed too (the person proved the address is theirs), without
 * a second welcome. Confirmed or invited already: nothing changes.
 */
export async function confirmEntry(deps: ConsentDeps, entryId: string, ip: string | undefined): Promise<ConfirmOutcome> {
  return deps.db.transaction().execute(async (trx) => {
    const entry = await lockWaitlistEntry(trx, { id: entryId });
    if (!entry) throw linkError('entry_gone');
    switch (entry.status) {
      case 'confirmed':
      case 'invited':
        return 'already_confirmed';
      case 'unsubscribed':
        throw linkError('unsubscribed');
      case 'pending':
      case 'joined': {
        await updateEntryConsent(trx, entry.id, { status: 'confirmed', confirmed_at: nowOf(deps).toISOString(), confirmed_ip: normalizeIp(ip) });
        if (entry.status === 'pending' && deps.welcome && deps.mail.enabled) await deps.mail.enqueue(trx, welcomeMail(entry));
        return 'confirmed';
      }
    }
  });
}

/** Whom a manage link is for (the preferences page shows the address); changes nothing. */
export async function preferencesOf(deps: Pick<ConsentDeps, 'db'>, entryId: string): Promise<PreferencesView> {
  const entry = await deps.db.selectFrom('waitlist').select(['email', 'status']).where('id', '=', entryId).executeTakeFirst();
  if (!entry) throw linkError('entry_gone');
  return { email: entry.email, status: entry.status };
}

/**
 * Never mailed again: the entry keeps its place as `unsubscribed`, and every message to it still
 * waiting in the outbox is marked failed (the worker's renderers also skip unsubscribed entries, for
 * a message claimed meanwhile). Idempotent.
 */
export async function unsubscribeEntry(deps: ConsentDeps, entryId: string): Promise<UnsubscribeOutcome> {
  return deps.db.transaction().execute(async (trx) => {
    const entry = await lockWaitlistEntry(trx, { id: entryId });
    if (!entry) throw linkError('entry_gone');
    const already = entry.status === 'unsubscribed';
    if (!already) await updateEntryConsent(trx, entry.id, { status: 'unsubscribed', unsubscribed_at: nowOf(deps).toISOString() });
    await cancelQueuedMail(trx, entry.email);
    return already ? 'already_unsubscribed' : 'unsubscribed';
  });
}

/**
 * Erasure at the person's request: the entry and every outbox message to its address (sent or not:
 * they hold the address) are deleted, and only a keyed hash of the address is kept on the
 * suppression list, so an import or an invite cannot bring it back; the audit log records that an
 * erasure happened, with a keyed hash, never the address or the requester's IP.
 */
export async function eraseEntry(deps: ConsentDeps, entryId: string): Promise<'erased'> {
  return deps.db.transaction().execute(async (trx) => {
    const entry = await lockWaitlistEntry(trx, { id: entryId });
    if (!entry) throw linkError('entry_gone');
    await deleteWaitlistEntry(trx, entry.id);
    await deleteMailTo(trx, entry.email);
    await addSuppression(trx, suppressionHash(deps.box, entry.email), 'erased', nowOf(deps));
    await recordAudit(trx, {
      action: 'waitlist.erased_by_subject',
      actorEmail: null,
      actorId: null,
      ip: null,
      detail: { email_hash: auditEmailHash(deps.box, entry.email) },
    });
    return 'erased' as const;
  });
}
