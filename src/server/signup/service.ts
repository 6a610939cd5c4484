import type { Kysely } from 'kysely';
import type { ConsentConfig } from '../config.js';
import type { Database } from '../db/schema.js';
import type { Geolocator, GeoLocation, GeoLogger } from '../geolocation/geolocator.js';
import { normalizeIp } from '../geolocation/ip.js';
import { isDatabaseUnavailable } from '../db/database.js';
import { HttpError } from '../http/errors.js';
import { mailClientKey, type TemplatedMessage } from '../mail/index.js';
import { HONEYPOT_FIELD, SIGNUP_ERRORS, type SignupErrorCode } from '../../shared/waitlist/signup-contract.js';
import { entryLocation, NO_CONSENT_RECORD, type HeldReason, type WaitlistEntry } from '../../shared/waitlist/entry.js';
import { heldEntry, holdSignup, NO_CHALLENGE, type ChallengeVerdict, type HoldOutcome, type Solution, type SolutionSpender } from '../challenge/index.js';
import { NO_ATTRIBUTION, type Attribution } from '../../shared/waitlist/attribution.js';
import {
  confirmationMail,
  holdReturningAddress,
  isSuppressed,
  queueRequired,
  suppressionHash,
  welcomeMail,
  type HoldReason,
  type MailQueue,
  type SuppressionBox,
} from '../consent/index.js';
import { lockWaitlistEntry, updateEntryConsent } from '../db/waitlist-entries.js';
import { webhookEvents, type WebhookQueue } from '../webhooks/index.js';
import { insertSignup, type WriteResult } from './repository.js';
import { newEntryId } from './entry-id.js';
import type { SignupBatchItem, SignupBatcher } from './batcher.js';

export function signupError(code: SignupErrorCode): HttpError {
  const { status, message } = SIGNUP_ERRORS[code];
  return new HttpError(status, code, message);
}

export interface SignupDeps {
  db: Kysely<Database>;
  /** The group commit (batcher.ts); without it each signup is written in a transaction of its own. */
  batcher?: SignupBatcher;
  /** Spends a signup's proof-of-work solution in the transaction that stores it (challenge/spent.ts). */
  spender: SolutionSpender;
  geolocator: Geolocator;
  log: GeoLogger & { info(obj: object, msg: string): void };
  /** app.mail: the confirmation (double opt-in) and welcome e-mails are queued with the entry. */
  mail: MailQueue;
  /** app.webhooks: a new entry's `signup.created` event is queued with it. */
  webhooks: Pick<WebhookQueue, 'wants' | 'enqueue'>;
  /** app.secretBox: the address's suppression hash (an erased address is held, see holdAddress). */
  box: SuppressionBox;
  /** app.config.consent: double opt-in, resend interval, welcome e-mail. */
  consent: Pick<ConsentConfig, 'confirmation' | 'confirmationResendSeconds' | 'welcome'>;
  /** The version of the consent text the visitor saw (content.ts `consent.version`), stored with the entry. */
  consentVersion: string;
  /** The kept texts the visitor was given (app.records.consentRecord: page, statement, legends), stored with the entry. */
  consentRecord: string | null;
  /** The clock (tests); now by default. */
  now?: () => Date;
}

/** `joined`, or `pending` when double opt-in is on: what the signup answers (the thanks page's variant). */
export type SignupStatus = 'joined' | 'pending';

/**
 * What a signup did: the entry's id, the answer's status, and whether a new entry was stored
 * (`created`), as opposed to a known address signing up again (a pending one sent its link again,
 * an erased or unsubscribed one held, `held`): live updates announce only new entries as signups.
 */
export interface SignupOutcome {
  id: string;
  status: SignupStatus;
  created: boolean;
  /** An erased or unsubscribed address held (consent/restore.ts): nothing changed, nothing to announce. (Not `heldFor`, a signup held for its proof of work.) */
  held?: true;
  /**
   * Held for its proof of work (SIGNUP_CHALLENGE=proof-of-work: none, invalid, expired, or a solution
   * spent before): stored held or left unchanged (challenge/hold.ts), never announced.
   */
  heldFor?: HeldReason;
}

function isFilled(value: unknown): boolean {
  if (typeof value === 'string') return value.trim() !== '';
  if (Array.isArray(value)) return value.some(isFilled);
  return false;
}

/** True when the hidden honeypot field was filled in: a bot, answered like a success and not stored. */
export function isHoneypotFilled(body: unknown): boolean {
  return typeof body === 'object' && body !== null && isFilled((body as Record<string, unknown>)[HONEYPOT_FIELD]);
}

export async function locate(geolocator: Geolocator, ip: string | null, log: GeoLogger): Promise<GeoLocation | null> {
  if (!ip) return null;
  try {
    return await geolocator.lookup(ip);
  } catch (err) {
    log.warn({ err }, 'waitlist signup: geolocation failed; storing the entry without a location');
    return null;
  }
}

/** A signup the database could not take (unreachable, overloaded, out of space): 503, try again later. */
export const SIGNUP_UNAVAILABLE = {
  status: 503,
  code: 'unavailable',
  message: 'The waitlist cannot take signups at the moment. Please try again in a minute.',
} as const;

export function signupUnavailable(): HttpError {
  return new HttpError(SIGNUP_UNAVAILABLE.status, SIGNUP_UNAVAILABLE.code, SIGNUP_UNAVAILABLE.message);
}

/** Throws `err` again, a database outage as signupUnavailable() (503): how every signup path fails on one. */
export function rethrowSignupError(err: unknown): never {
  if (isDatabaseUnavailable(err)) throw signupUnavailable();
  throw err;
}

/**
 * Adds an address (already validated and normalized by the signup schema) to the waitlist, with its
 * consent record. Resolves only after everything has committed, so whatever the caller acknowledges
 * is stored, and any e-mail it causes is in the outbox in the same transaction.
 *
 * - New address: `joined` (confirmation off) or `pending` with the confirmation e-mail queued
 *   (SIGNUP_CONFIRMATION=required); the welcome e-mail too when MAIL_WELCOME=on and it joined.
 * - Known address (see rejoin): pending gets the confirmation again (at most once per resend
 *   interval) and answers like a new signup; anything else is the spec's `already_registered`.
 * - An address its owner erased or unsubscribed is held (holdAddress): it stays so, a "confirm it's
 *   you" e-mail is queued, and the answer is a new signup's.
 * - `held` (a HeldReason: SIGNUP_CHALLENGE=proof-of-work and no valid solution): see holdSignup;
 *   answered like a new signup, `created` only when a held entry was stored.
 *
 * With `deps.batcher` (the server), a new address is written by the group commit together with the
 * signups that arrived with it; a known one (or one repeated in the batch) is then handled here on
 * its own, and a batch that failed as a whole is retried here one signup at a time, so one row that
 * cannot be written fails only its own request. A database outage rejects with a 503 HttpError.
 *
 * IP and location come from the server only (`ip` is `request.ip`, which honours TRUST_PROXY).
 * `attribution` (already cleaned, see attribution.ts) is stored with a new entry only: a known
 * address signing up again keeps the attribution of its first signup (first touch).
 */
/**
 * A new entry as a signup stores it (the portal's and an offering list's): a time-ordered id
 * (decision 068), `pending` with its confirmation due under double opt-in, else `joined`.
 */
export function newEntry(
  deps: Pick<SignupDeps, 'consent' | 'consentVersion' | 'consentRecord' | 'mail'>,
  signup: { email: string; ipAddress: string | null; location: GeoLocation | null; attribution: Attribution; now: Date },
): WaitlistEntry {
  const confirm = deps.consent.confirmation === 'required';
  if (confirm && !deps.mail.enabled) throw new Error('e-mail is off (no SMTP_URL): cannot queue the confirmation e-mail');
  const at = signup.now.toISOString();
  return {
    id: newEntryId(signup.now.getTime()),
    email: signup.email,
    created_at: at,
    ip_address: signup.ipAddress,
    ...entryLocation(signup.location),
    ...NO_CONSENT_RECORD,
    ...signup.attribution,
    status: confirm ? 'pending' : 'joined',
    consent_version: deps.consentVersion,
    consent_record: deps.consentRecord,
    confirmation_sent_at: confirm ? at : null,
  };
}

/** The group commit's answer for one signup, or null when its batch failed (logged by the batcher; an outage fails this signup too, anything else is retried alone). */
async function submitted(batcher: SignupBatcher, item: SignupBatchItem): Promise<WriteResult | null> {
  try {
    return await batcher.submit(item);
  } catch (err) {
    if (isDatabaseUnavailable(err)) throw err;
    return null;
  }
}

export async function signUp(
  deps: SignupDeps,
  email: string,
  ip: string | undefined,
  attribution: Attribution = NO_ATTRIBUTION,
  verdict: ChallengeVerdict = NO_CHALLENGE,
): Promise<SignupOutcome> {
  // The spec says "on failure all four are null", but that described a browser asking a third
  // party for its own address. Here the server always knows the address it saw, so ip_address is
  // stored even when the location lookup fails; only the location's fields become null.
  const ipAddress = normalizeIp(ip);
  const location = await locate(deps.geolocator, ipAddress, deps.log);

  const now = (deps.now ?? (() => new Date()))();
  const confirm = deps.consent.confirmation === 'required';
  const entry = newEntry(deps, { email, ipAddress, location, attribution, now });
  // Computed once, and only when needed: the batch skips it while no address is suppressed (SQLite).
  let hashed: string | undefined;
  const hash = () => (hashed ??= suppressionHash(deps.box, email));
  const joined = { id: entry.id, status: confirm ? 'pending' : 'joined', created: true } as const;

  try {
    // No valid proof-of-work solution (SIGNUP_CHALLENGE=proof-of-work): stored held, no e-mail, the
    // same answer as a signup (challenge/hold.ts); only a known, joined address is a duplicate as ever.
    if (verdict.held) {
      const held = verdict.held;
      // A new address takes the group commit, as a proven signup does: a flood of unproven ones (a
      // script's) must not each wait on a commit of its own. One the batch did not insert (known,
      // suppressed) is handled alone below.
      if (deps.batcher && (await submitted(deps.batcher, { entry: heldEntry(entry, held), suppressionHash: hash, mail: null }))?.inserted) return heldOutcome(joined, held, 'held');
      return heldOutcome(joined, held, await holdSignup(deps.db, deps.box, entry, held));
    }
    const { solution } = verdict;
    if (deps.batcher) {
      const result = await submitted(deps.batcher, { entry, suppressionHash: hash, mail: joinMail(deps, entry), solution });
      // Its solution spent before: stored held by the batch, or (a known address) handled as a held signup.
      if (result?.replayed) return heldOutcome(joined, 'challenge_replayed', result.inserted ? 'held' : await holdSignup(deps.db, deps.box, entry, 'challenge_replayed'));
      if (result?.inserted) return joined;
      if (result) return await deps.db.transaction().execute((trx) => rejoinOrInsert(trx, deps, entry, hash, now));
    }
    return await signUpAlone(deps, entry, hash, now, solution);
  } catch (err) {
    rethrowSignupError(err);
  }
}

/** A held signup's outcome (holdSignup): answered as a new signup, `created` when stored held; an address joined already is the duplicate it always was. */
function heldOutcome(joined: SignupOutcome, reason: HeldReason, outcome: HoldOutcome): SignupOutcome {
  if (outcome === 'registered') throw signupError('already_registered');
  return { ...joined, created: outcome === 'held', heldFor: reason };
}

/** One signup in its own transaction: the path of a signup whose batch failed (and of callers without a batcher). */
async function signUpAlone(deps: SignupDeps, entry: WaitlistEntry, hash: () => string, now: Date, solution: Solution | null): Promise<SignupOutcome> {
  const joined = { id: entry.id, status: entry.status === 'pending' ? 'pending' : 'joined', created: true } as const;
  if (solution) {
    // Its solution is spent in the transaction that stores it; one spent before makes it a held signup.
    const outcome = await deps.db.transaction().execute(async (trx) => {
      if (!(await deps.spender.spend(trx, [solution]))[0]) return holdSignup(trx, deps.box, entry, 'challenge_replayed');
      if (!(await insertSignup(trx, entry, hash()))) return rejoinOrInsert(trx, deps, entry, hash, now);
      await queueInserted(trx, deps, entry);
      return joined;
    });
    return typeof outcome === 'string' ? heldOutcome(joined, 'challenge_replayed', outcome) : outcome;
  }
  if (!joinMail(deps, entry) && !deps.webhooks.wants('signup.created')) {
    // The spec's flow: one statement for a new address (see insertSignup), no e-mail, no webhook.
    if (await insertSignup(deps.db, entry, hash())) return joined;
    return deps.db.transaction().execute((trx) => rejoinOrInsert(trx, deps, entry, hash, now));
  }
  return deps.db.transaction().execute(async (trx) => {
    if (await insertSignup(trx, entry, hash())) {
      await queueInserted(trx, deps, entry);
      return joined;
    }
    return rejoinOrInsert(trx, deps, entry, hash, now);
  });
}

/** The keyed hash of the signup's client address, which the confirmation's per-client cap counts (mail/caps.ts). */
const mailClient = (deps: SignupDeps, entry: Pick<WaitlistEntry, 'ip_address'>) => mailClientKey(deps.box, entry.ip_address);

/** The e-mail a fresh `pending` (confirmation) or `joined` (welcome, MAIL_WELCOME=on) entry gets, if any. */
function joinMail(deps: SignupDeps, entry: Pick<WaitlistEntry, 'id' | 'email' | 'status' | 'ip_address'>): TemplatedMessage | null {
  if (entry.status === 'pending') return confirmationMail(entry, mailClient(deps, entry));
  if (deps.consent.welcome && deps.mail.enabled) return welcomeMail(entry);
  return null;
}

/** The e-mail a fresh `joined`/`pending` entry gets: the confirmation, or the welcome (MAIL_WELCOME=on). */
async function queueJoinMail(trx: Kysely<Database>, deps: SignupDeps, entry: Pick<WaitlistEntry, 'id' | 'email' | 'status' | 'ip_address'>): Promise<void> {
  if (entry.status === 'pending') await queueRequired(deps.mail, trx, confirmationMail(entry, mailClient(deps, entry)));
  else if (deps.consent.welcome && deps.mail.enabled) await deps.mail.enqueue(trx, welcomeMail(entry));
}

/** What a new entry causes, in its transaction: its e-mail (queueJoinMail) and its `signup.created` event. */
async function queueInserted(trx: Kysely<Database>, deps: SignupDeps, entry: WaitlistEntry): Promise<void> {
  await queueJoinMail(trx, deps, entry);
  await deps.webhooks.enqueue(trx, [webhookEvents.signupCreated(entry)]);
}

/** A known address signing up again (inside a transaction); inserts after all when it was erased meanwhile. */
async function rejoinOrInsert(
  trx: Kysely<Database>,
  deps: SignupDeps,
  entry: WaitlistEntry,
  hash: () => string,
  now: Date,
): Promise<SignupOutcome> {
  const known = await lockWaitlistEntry(trx, { email: entry.email });
  if (!known) {
    // Erased by its owner: held (issue 28); the answer is a new signup's.
    if (await isSuppressed(trx, deps.box, entry.email)) return holdAddress(trx, deps, entry, 'erased', now);
    // Erased between the insert and this read: it is a new address after all.
    if (!(await insertSignup(trx, entry, hash()))) throw signupError('already_registered');
    await queueInserted(trx, deps, entry);
    return { id: entry.id, status: entry.status === 'pending' ? 'pending' : 'joined', created: true };
  }
  const confirm = deps.consent.confirmation === 'required';
  const at = now.toISOString();
  switch (known.status) {
    case 'pending': {
      if (!confirm) {
        // Double opt-in was turned off since: under the spec's flow, signing up is joining.
        await updateEntryConsent(trx, known.id, { status: 'joined', consent_version: deps.consentVersion, consent_record: deps.consentRecord });
        await queueJoinMail(trx, deps, { ...known, status: 'joined' });
        return { id: known.id, status: 'joined', created: false };
      }
      // Never a dead end, and the answer never tells whether the address was known; the e-mail is
      // sent again at most once per resend interval, so the form cannot be used to flood a mailbox.
      const sentAt = known.confirmation_sent_at === null ? 0 : Date.parse(known.confirmation_sent_at);
      if (now.getTime() - sentAt >= deps.consent.confirmationResendSeconds * 1000) {
        await updateEntryConsent(trx, known.id, { confirmation_sent_at: at, consent_version: deps.consentVersion, consent_record: deps.consentRecord });
        await queueRequired(deps.mail, trx, confirmationMail(known, mailClient(deps, entry)));
        deps.log.info({ entryId: known.id }, 'waitlist signup: confirmation sent again');
      }
      return { id: known.id, status: 'pending', created: false };
    }
    case 'unsubscribed':
      // Unsubscribed by its owner: held (issue 28); the answer is a new signup's.
      return holdAddress(trx, deps, entry, 'unsubscribed', now);
    case 'held': {
      // Held before (no valid proof of work; challenge/hold.ts), now a signup that passed: it joins
      // as a new signup would, its place on the list kept.
      const status = confirm ? 'pending' : 'joined';
      await updateEntryConsent(trx, known.id, { status, held_reason: null, consent_version: deps.consentVersion, consent_record: deps.consentRecord, confirmation_sent_at: confirm ? at : null });
      await queueJoinMail(trx, deps, { ...known, status });
      return { id: known.id, status, created: false };
    }
    default:
      throw signupError('already_registered');
  }
}

/**
 * An address its owner erased or unsubscribed, signing up again: it stays as it is, and only a
 * "confirm it's you" e-mail is queued (consent/restore.ts); answered exactly as a new signup.
 */
async function holdAddress(trx: Kysely<Database>, deps: SignupDeps, entry: WaitlistEntry, reason: HoldReason, now: Date): Promise<SignupOutcome> {
  const hold = { mail: deps.mail, box: deps.box, log: deps.log, resendSeconds: deps.consent.confirmationResendSeconds, now };
  await holdReturningAddress(trx, hold, entry.email, reason, mailClient(deps, entry));
  return { id: entry.id, status: entry.status === 'pending' ? 'pending' : 'joined', created: false, held: true };
}
