import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../db/database.js';
import { findListBySlug, type ListRecord } from '../db/lists.js';
import type { Database } from '../db/schema.js';
import { toWaitlistEntry, WAITLIST_COLUMNS } from '../db/waitlist-entries.js';
import { normalizeIp } from '../geolocation/ip.js';
import { mailClientKey } from '../mail/index.js';
import { confirmationMail, isSuppressed, queueRequired, welcomeMail } from '../consent/index.js';
import { webhookEvents } from '../webhooks/index.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';
import type { Attribution } from '../../shared/waitlist/attribution.js';
import { amountBands, isValidSlug } from '../../shared/lists/contract.js';
import { locate, newEntry, rethrowSignupError, signupError, type SignupDeps, type SignupOutcome } from './service.js';

/** An offering signup's list and its non-binding intended amount (a band key, or null: none given). */
export interface OfferingSignupTarget {
  list: ListRecord;
  intendedAmount: string | null;
}

/**
 * The list a signup names (not the portal's) and its intended amount, checked once for the offering
 * page's form (routes.ts) and the API (POST /api/v1/signups): an open offering list, the amount one
 * of its bands or none (absent or empty). A draft or unknown list (or the portal's slug) is 400
 * `unknown_list`, a closed one 409 `list_closed`, any other amount 400 `amount_invalid`.
 */
export async function offeringSignupTarget(db: Kysely<Database>, slug: unknown, amount: unknown): Promise<OfferingSignupTarget> {
  const list = isValidSlug(slug) ? await findListBySlug(db, slug).catch(rethrowSignupError) : undefined;
  if (!list || list.kind === 'portal' || list.state === 'draft') throw signupError('unknown_list');
  if (list.state === 'closed') throw signupError('list_closed');
  const bands = amountBands(list.bands).map((b) => b.key);
  const intendedAmount = amount === undefined || amount === '' ? null : typeof amount === 'string' && bands.includes(amount) ? amount : undefined;
  if (intendedAmount === undefined) throw signupError('amount_invalid');
  return { list, intendedAmount };
}

/**
 * A signup to an offering list (issue 31, decision 063): the same entry, statuses, consent record
 * and e-mails as the portal's, stored under the list's id with its non-binding intended amount.
 * Written in a transaction of its own (not the portal's group commit: an offering list's signups
 * are few, and the portal's path stays as it was), with its e-mail and its `signup.created` event.
 *
 * - New to this list: `joined`, or `pending` with the confirmation queued (SIGNUP_CONFIRMATION); the
 *   welcome with MAIL_WELCOME=on. The address may be on any other list: each list is its own.
 * - Known on this list: pending gets its confirmation again (at most once per resend interval);
 *   unsubscribed stays unsubscribed (answered as a new signup, nothing sent: it left this list);
 *   any other status is `already_registered`, as on the portal's.
 * - An address its owner erased (the suppression list) is not stored; the answer is a new signup's.
 */
export async function signUpToOffering(
  deps: Omit<SignupDeps, 'batcher'>,
  list: ListRecord,
  email: string,
  ip: string | undefined,
  attribution: Attribution,
  intendedAmount: string | null,
): Promise<SignupOutcome> {
  const ipAddress = normalizeIp(ip);
  const location = await locate(deps.geolocator, ipAddress, deps.log);
  const now = (deps.now ?? (() => new Date()))();
  const at = now.toISOString();
  const confirm = deps.consent.confirmation === 'required';
  const entry = newEntry(deps, { email, ipAddress, location, attribution, now });
  const client = mailClientKey(deps.box, ipAddress);
  const answer = { id: entry.id, status: confirm ? 'pending' : 'joined' } as const;
  try {
    return await deps.db.transaction().execute(async (trx) => {
      if (await isSuppressed(trx, deps.box, email)) return { ...answer, created: false, held: true };
      const inserted = await trx
        .insertInto('waitlist')
        .values({ ...entry, list_id: list.id, intended_amount: intendedAmount })
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) {
        if (confirm) await queueRequired(deps.mail, trx, confirmationMail(entry, client));
        else if (deps.consent.welcome && deps.mail.enabled) await deps.mail.enqueue(trx, welcomeMail(entry));
        // Its `signup.created`, with the list's slug, written with the entry (as the portal's: service.ts).
        await deps.webhooks.enqueue(trx, [webhookEvents.signupCreated(entry, list.slug)]);
        return { ...answer, created: true };
      }
      const known = await lockListEntry(trx, list.id, email);
      if (!known) throw signupError('already_registered');
      if (known.status === 'unsubscribed') return { ...answer, created: false, held: true };
      if (known.status !== 'pending') throw signupError('already_registered');
      const sentAt = known.confirmation_sent_at === null ? 0 : Date.parse(known.confirmation_sent_at);
      if (confirm && now.getTime() - sentAt >= deps.consent.confirmationResendSeconds * 1000) {
        await trx.updateTable('waitlist').set({ confirmation_sent_at: at }).where('id', '=', known.id).execute();
        await queueRequired(deps.mail, trx, confirmationMail(known, client));
      }
      return { id: known.id, status: 'pending', created: false };
    });
  } catch (err) {
    rethrowSignupError(err);
  }
}

/** An offering list's entry by address, locked until the transaction ends on PostgreSQL. */
async function lockListEntry(trx: Kysely<Database>, listId: number, email: string): Promise<WaitlistEntry | undefined> {
  const row = await trx
    .selectFrom('waitlist')
    .select(WAITLIST_COLUMNS)
    .where('list_id', '=', listId)
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .$if(isPostgres(trx), (qb) => qb.forUpdate())
    .executeTakeFirst();
  return row ? toWaitlistEntry(row) : undefined;
}
