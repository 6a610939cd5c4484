import { sql, type Kysely } from 'kysely';
import { auditEmailHash, recordAudit } from '../audit/audit-log.js';
import type { Database } from '../db/schema.js';
import { normalizeIp } from '../geolocation/ip.js';
import { HttpError } from '../http/errors.js';
import {
  LINK_ERRORS,
  type ConfirmOutcome,
  type EraseLinkSent,
  type LinkErrorCode,
  type LinkPurpose,
  type PreferencesView,
  type UnsubscribeOutcome,
} from '../../shared/waitlist/consent-contract.js';
import { erasureMail, welcomeMail, type MailQueue } from './mail.js';
import { fill } from './emails/words.js';
import { verifyLinkToken } from './links.js';
import { lockWaitlistEntry, updateEntryConsent } from '../db/waitlist-entries.js';
import { cancelQueuedMail, deleteMailTo, deleteWaitlistEntry, queuedSince } from './repository.js';
import { addSuppression, type SuppressionBox } from './suppression.js';
import { webhookEvents, type WebhookQueue } from '../webhooks/index.js';

/**
 * What the links in e-mails do (src/shared/waitlist/consent-contract.ts): confirm (double opt-in),
 * show whom a link is for (masked), unsubscribe, e-mail an erasure link, erase (with that link only).
 * Each checks the link's signed token first, then changes the entry in one transaction; every
 * refusal is an HttpError with a LINK_ERRORS code and changes nothing.
 */

export interface ConsentDeps {
  db: Kysely<Database>;
  /** app.secretBox: verifies tokens, hashes erased addresses. */
  box: SuppressionBox;
  mail: MailQueue;
  /** app.webhooks: `signup.confirmed`, `signup.unsubscribed` and `signup.erased`, queued with the change. */
  webhooks: Pick<WebhookQueue, 'enqueue' | 'forgetEntries'>;
  /** MAIL_WELCOME=on: the welcome e-mail is queued when an entry is confirmed. */
  welcome: boolean;
  /** The clock (tests); now by default. */
  now?: () => Date;
}

export function linkError(code: LinkErrorCode): HttpError {
  const { status, message } = LINK_ERRORS[code];
  return new HttpError(status, code, message);
}

/** What an expired token of each purpose is answered with: the page then says which link to use instead. */
const EXPIRED: Record<LinkPurpose, LinkErrorCode> = { confirm: 'link_expired', manage: 'manage_link_expired', erase: 'erase_link_expired' };

/**
 * The entry a token names and what for, for one of `purposes`, or the refusal: forged, altered or
 * for another purpose (400), expired (410, with the code of its purpose).
 */
export function linkOfToken(deps: Pick<ConsentDeps, 'box' | 'now'>, token: unknown, purposes: readonly LinkPurpose[]): { entryId: string; purpose: LinkPurpose } {
  const now = (deps.now?.() ?? new Date()).getTime() / 1000;
  let expired: LinkPurpose | null = null;
  for (const purpose of purposes) {
    const check = verifyLinkToken(deps.box, token, purpose, now);
    if (check.ok) return { entryId: check.claims.entryId, purpose };
    if (check.reason === 'expired') expired = purpose;
  }
  throw linkError(expired ? EXPIRED[expired] : 'link_invalid');
}

/** The entry a token for `purpose` names, or the refusal (linkOfToken). */
export function entryIdOfToken(deps: Pick<ConsentDeps, 'box' | 'now'>, token: unknown, purpose: LinkPurpose): string {
  return linkOfToken(deps, token, [purpose]).entryId;
}

/**
 * An address as a link's page shows it (security review, finding 6): the first character of the
 * local part, `•••`, then the domain, `a•••@example.com`. The manage link is in every e-mail's
 * headers, seen by mail providers, forwarders and archives: it confirms whose it is, no more.
 */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '•••';
  return `${Array.from(email.slice(0, at))[0]}•••${email.slice(at)}`;
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
      case 'held':
        // Never e-mailed, so no link of its own can lead here: as if it were not on the list.
        throw linkError('entry_gone');
      case 'pending':
      case 'joined': {
        const confirmedAt = nowOf(deps).toISOString();
        await updateEntryConsent(trx, entry.id, { status: 'confirmed', confirmed_at: confirmedAt, confirmed_ip: normalizeIp(ip) });
        if (entry.status === 'pending' && deps.welcome && deps.mail.enabled) await deps.mail.enqueue(trx, welcomeMail(entry));
        await deps.webhooks.enqueue(trx, [webhookEvents.signupConfirmed(entry, confirmedAt)]);
        return 'confirmed';
      }
    }
  });
}

/** Whom a manage or erase link is for (its page shows the address, masked), and which link it is; changes nothing. */
export async function preferencesOf(deps: Pick<ConsentDeps, 'db'>, link: { entryId: string; purpose: LinkPurpose }): Promise<PreferencesView> {
  const entry = await deps.db.selectFrom('waitlist').select(['email', 'status']).where('id', '=', link.entryId).executeTakeFirst();
  if (!entry) throw linkError('entry_gone');
  const view: PreferencesView = { email: maskEmail(entry.email), status: entry.status, link: link.purpose === 'erase' ? 'erase' : 'manage' };
  // Every list the person is on (issue 31), when one is an offering list.
  const lists = await entriesOfAddress(deps.db, entry.email);
  if (lists.some((l) => l.kind !== 'portal')) {
    view.lists = lists.map((l) => ({ name: l.kind === 'portal' ? fill(PORTAL_LIST_NAME) : l.name, status: l.status }));
  }
  return view;
}

/** The name the preferences page gives the portal's own list among the others. */
const PORTAL_LIST_NAME = 'The {productName} waitlist';

/** Every entry of an address, on every list, the portal's first. */
async function entriesOfAddress(db: Kysely<Database>, email: string) {
  return db
    .selectFrom('waitlist')
    .leftJoin('lists', 'lists.id', 'waitlist.list_id')
    .select(['waitlist.id', 'waitlist.email', 'waitlist.status', 'lists.kind', 'lists.name', 'waitlist.list_id'])
    .where(sql`lower(waitlist.email)`, '=', email.toLowerCase())
    .orderBy('waitlist.list_id')
    .execute()
    .then((rows) => rows.map((r) => ({ ...r, kind: r.kind ?? 'portal', name: r.name ?? '' })));
}

/**
 * Leaves every list (issue 31, the preferences page's "leave every list"): each of the address's
 * entries is unsubscribed as unsubscribeEntry does it. Resolves to how many lists it was on.
 */
export async function unsubscribeEverywhere(deps: ConsentDeps, entryId: string): Promise<number> {
  const entry = await deps.db.selectFrom('waitlist').select(['email']).where('id', '=', entryId).executeTakeFirst();
  if (!entry) throw linkError('entry_gone');
  const entries = await entriesOfAddress(deps.db, entry.email);
  for (const other of entries) await unsubscribeEntry(deps, other.id);
  return entries.length;
}

/** An erasure link is e-mailed at most once in this many seconds per address (the one sent a moment ago works). */
export const ERASE_LINK_RESEND_SECONDS = 60;

/**
 * Erasure asks for a fresh link (security review, finding 6): the preferences page's request queues
 * the erasure e-mail (template `erasure`: a link to the erasure page, valid an hour) to the entry's
 * address, whatever its status; the worker signs the link when it sends it. Asked again within
 * ERASE_LINK_RESEND_SECONDS, nothing more is queued. Changes nothing else.
 */
export async function sendErasureLink(deps: ConsentDeps, entryId: string): Promise<EraseLinkSent> {
  if (!deps.mail.enabled) throw linkError('mail_unavailable');
  return deps.db.transaction().execute(async (trx) => {
    const entry = await lockWaitlistEntry(trx, { id: entryId });
    if (!entry) throw linkError('entry_gone');
    const since = new Date(nowOf(deps).getTime() - ERASE_LINK_RESEND_SECONDS * 1000).toISOString();
    const message = erasureMail(entry);
    if (!(await queuedSince(trx, entry.email, message.kind, since))) await deps.mail.enqueue(trx, message);
    return { outcome: 'sent' as const, email: maskEmail(entry.email) };
  });
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
    if (!already) {
      const unsubscribedAt = nowOf(deps).toISOString();
      await updateEntryConsent(trx, entry.id, { status: 'unsubscribed', unsubscribed_at: unsubscribedAt });
      await deps.webhooks.enqueue(trx, [webhookEvents.signupUnsubscribed(entry, unsubscribedAt)]);
    }
    // The messages of the address's entries on other lists stay queued (issue 31): this list only.
    const others = (await trx.selectFrom('waitlist').select('id').where(sql`lower(email)`, '=', entry.email.toLowerCase()).where('id', '<>', entry.id).execute()).map((r) => r.id);
    await cancelQueuedMail(trx, entry.email, erasureMail(entry).kind, others);
    return already ? 'already_unsubscribed' : 'unsubscribed';
  });
}

/**
 * Erasure at the person's request, by the erasure link only (an hour, once: the entry is gone after
 * it): the entry and every outbox message to its address (sent or not:
 * they hold the address) are deleted, and only a keyed hash of the address is kept on the
 * suppression list, so an import or an invite cannot bring it back; the audit log records that an
 * erasure happened, with a keyed hash, never the address or the requester's IP.
 */
export async function eraseEntry(deps: ConsentDeps, entryId: string): Promise<'erased'> {
  return deps.db.transaction().execute(async (trx) => {
    const entry = await lockWaitlistEntry(trx, { id: entryId });
    if (!entry) throw linkError('entry_gone');
    await deleteWaitlistEntry(trx, entry.id);
    // The person's entries on the other lists (issue 31) are theirs too: erased with it.
    const others = await trx.deleteFrom('waitlist').where(sql`lower(email)`, '=', entry.email.toLowerCase()).returning('id').execute();
    if (others.length > 0) await deps.webhooks.forgetEntries(trx, others.map((r) => r.id));
    await deleteMailTo(trx, entry.email);
    // The entry's earlier events held its address: they go too; the erasure event carries only the id.
    await deps.webhooks.forgetEntries(trx, [entry.id]);
    await deps.webhooks.enqueue(trx, [webhookEvents.signupErased(entry.id, nowOf(deps).toISOString(), 'subject')]);
    await addSuppression(trx, deps.box, entry.email, 'erased', nowOf(deps));
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
