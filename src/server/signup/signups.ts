import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Geolocator } from '../geolocation/geolocator.js';
import type { Attribution } from '../../shared/waitlist/attribution.js';
import { createSignupBatcher, type SignupBatchHooks } from './batcher.js';
import { rethrowSignupError, signUp, type SignupOutcome } from './service.js';
import { solutionSpender, type ChallengeVerdict } from '../challenge/index.js';
import type { ListRecord } from '../db/lists.js';
import { signUpToOffering } from './offering.js';

/**
 * Adding a signup, as the public form and the API (src/server/api) both do: one group commit
 * (batcher.ts) for the app, the entry stored with its consent record and e-mails (service.ts), and
 * open admin pages told once it has committed.
 */
export interface Signups {
  /**
   * Stores an address (already checked by the shared e-mail rule) signing up from `ip` (null: no
   * address known, no location), with its cleaned attribution. Resolves after the commit; rejects
   * with the signup's HttpError (409 already_registered, 503 unavailable). `verdict`: the proof of
   * work's (SIGNUP_CHALLENGE; challenge/verify.ts): a solution to spend with the entry, or held (no
   * valid solution; challenge/hold.ts): stored as such, never announced (the outcome's `heldFor`).
   */
  create(log: FastifyBaseLogger, email: string, ip: string | null | undefined, attribution: Attribution, verdict?: ChallengeVerdict): Promise<SignupOutcome>;
  /** The same for an open offering list (offering.ts), with its non-binding intended amount (a band key) or null. */
  createOffering(log: FastifyBaseLogger, list: ListRecord, email: string, ip: string | null | undefined, attribution: Attribution, intendedAmount: string | null): Promise<SignupOutcome>;
}

export interface SignupsOptions {
  geolocator: Geolocator;
  /** The version of the consent text the visitor saw (content.ts `consent.version`). */
  consentVersion: string;
  /** Test hooks of the group commit (batcher.ts). */
  signupBatch?: SignupBatchHooks | undefined;
}

export function createSignups(app: FastifyInstance, { geolocator, consentVersion, signupBatch }: SignupsOptions): Signups {
  const spender = solutionSpender(app.database.db);
  const batcher = createSignupBatcher({ db: app.database.db, mail: app.mail, webhooks: app.webhooks, spender, log: app.log, hooks: signupBatch });
  // What both kinds of signup take from the app (each call adds its request's logger).
  const shared = {
    db: app.database.db,
    spender,
    geolocator,
    mail: app.mail,
    webhooks: app.webhooks,
    box: app.secretBox,
    consent: app.config.consent,
    consentVersion,
  };
  return {
    async createOffering(log, list, email, ip, attribution, intendedAmount) {
      // The texts of this list's page (records: its page version, its statements, the legends).
      const deps = { ...shared, log, consentRecord: await app.records.listConsentRecord(list).catch(rethrowSignupError) };
      const outcome = await signUpToOffering(deps, list, email, ip ?? undefined, attribution, intendedAmount);
      if (outcome.created) app.liveWaitlist.signedUp(outcome.id);
      else if (!outcome.held) app.liveWaitlist.changed('rejoined');
      return outcome;
    },
    async create(log, email, ip, attribution, verdict) {
      const deps = { ...shared, batcher, log, consentRecord: app.records.consentRecord };
      const outcome = await signUp(deps, email, ip ?? undefined, attribution, verdict);
      if (outcome.heldFor) return outcome;
      // Committed: open admin pages get a new entry (an array push; sent in batches); a known
      // address signing up again changed an entry they may show (a held one changed nothing).
      if (outcome.created) app.liveWaitlist.signedUp(outcome.id);
      else if (!outcome.held) app.liveWaitlist.changed('rejoined');
      return outcome;
    },
  };
}
