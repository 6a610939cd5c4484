import { z } from 'zod/mini';

/**
 * Where an entry stands for e-mail:
 * - `pending`: joined with double opt-in on (SIGNUP_CONFIRMATION=required), link not used yet;
 * - `joined`: joined without a confirmation step (confirmation off, or imported);
 * - `confirmed`: used the confirmation link;
 * - `invited`: sent the launch invite;
 * - `unsubscribed`: asked for no more e-mail; never mailed again;
 * - `held`: signed up without a valid proof-of-work solution (SIGNUP_CHALLENGE=proof-of-work):
 *   stored, never mailed, until an admin approves it (it then joins as any signup) or rejects it
 *   (deleted). `held_reason` says why (HELD_REASONS).
 */
export const ENTRY_STATUSES = ['pending', 'joined', 'confirmed', 'invited', 'unsubscribed', 'held'] as const;
export type EntryStatus = (typeof ENTRY_STATUSES)[number];

/**
 * Why a signup was held: no solution sent (a script, or the form without JavaScript), one that
 * does not verify (wrong number, forged or altered challenge), one whose challenge had expired, or
 * one already used by an earlier signup.
 */
export const HELD_REASONS = ['challenge_missing', 'challenge_invalid', 'challenge_expired', 'challenge_replayed'] as const;
export type HeldReason = (typeof HELD_REASONS)[number];

/**
 * A waitlist entry as the API sends it: the one declaration of its fields besides the table type
 * (src/server/db/schema.ts) and the migration. `created_at` is an ISO-8601 UTC timestamp.
 */
export const waitlistEntrySchema = z.object({
  id: z.string(),
  email: z.string(),
  created_at: z.string(),
  ip_address: z.nullable(z.string()),
  country: z.nullable(z.string()),
  city: z.nullable(z.string()),
  region: z.nullable(z.string()),
  status: z.enum(ENTRY_STATUSES),
  /** The consent record: the version of the consent text shown when the person joined. */
  consent_version: z.nullable(z.string()),
  confirmation_sent_at: z.nullable(z.string()),
  confirmed_at: z.nullable(z.string()),
  confirmed_ip: z.nullable(z.string()),
  invited_at: z.nullable(z.string()),
  unsubscribed_at: z.nullable(z.string()),
  /** Where the signup came from (src/shared/waitlist/attribution.ts): UTM parameters, referring origin, landing path. */
  utm_source: z.nullable(z.string()),
  utm_medium: z.nullable(z.string()),
  utm_campaign: z.nullable(z.string()),
  utm_term: z.nullable(z.string()),
  utm_content: z.nullable(z.string()),
  referrer: z.nullable(z.string()),
  landing_path: z.nullable(z.string()),
  /** Derived at signup: utm_source lower-cased, else the referrer's host, else null ("Direct"). */
  source: z.nullable(z.string()),
  /** The record of the texts shown when the person joined (page, consent statement, legends; src/server/records), or null. */
  consent_record: z.nullable(z.string()),
  /** Why a `held` entry was held (HELD_REASONS); null for every other status. */
  held_reason: z.nullable(z.string()),
});

export type WaitlistEntry = z.infer<typeof waitlistEntrySchema>;

/** The consent and e-mail fields of an entry that joined without a confirmation step (imports, fixtures), not held. */
export const NO_CONSENT_RECORD = {
  status: 'joined',
  consent_version: null,
  consent_record: null,
  confirmation_sent_at: null,
  confirmed_at: null,
  confirmed_ip: null,
  invited_at: null,
  unsubscribed_at: null,
  held_reason: null,
} as const satisfies Partial<WaitlistEntry>;

/** The entry's fields in declaration order (the columns a query selects). */
export const WAITLIST_ENTRY_FIELDS = Object.keys(waitlistEntrySchema.shape) as ReadonlyArray<keyof WaitlistEntry>;

/** Where a person is: the part of an entry the location column shows. */
export type EntryLocation = Pick<WaitlistEntry, 'city' | 'region' | 'country'>;

/** The location fields of an entry from a place (a geolocation answer), each null when unknown or when there is no place. */
export function entryLocation(place: Partial<EntryLocation> | null | undefined): EntryLocation {
  return { country: place?.country ?? null, city: place?.city ?? null, region: place?.region ?? null };
}
