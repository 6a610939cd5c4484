import { z } from 'zod/mini';

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
});

export type WaitlistEntry = z.infer<typeof waitlistEntrySchema>;

/** The entry's fields in declaration order (the columns a query selects). */
export const WAITLIST_ENTRY_FIELDS = Object.keys(waitlistEntrySchema.shape) as ReadonlyArray<keyof WaitlistEntry>;

/** Where a person is: the part of an entry the location column shows. */
export type EntryLocation = Pick<WaitlistEntry, 'city' | 'region' | 'country'>;
