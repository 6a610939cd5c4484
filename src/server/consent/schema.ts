import { z } from 'zod/mini';
import { ENTRY_STATUSES } from '../../shared/waitlist/entry.js';
import { LINK_TOKEN_MAX_LENGTH } from '../../shared/waitlist/consent-contract.js';

/** Request and response schemas of the e-mail link API (consent-contract.ts), for the server and tests. */
export const linkTokenRequestSchema = z.object({
  token: z.string().check(z.minLength(1), z.maxLength(LINK_TOKEN_MAX_LENGTH)),
});
export type LinkTokenRequest = z.infer<typeof linkTokenRequestSchema>;

export const confirmResultSchema = z.object({ outcome: z.enum(['confirmed', 'already_confirmed']) });
export const preferencesViewSchema = z.object({
  email: z.string(),
  status: z.enum(ENTRY_STATUSES),
  link: z.enum(['manage', 'erase']),
  lists: z.optional(z.array(z.object({ name: z.string(), status: z.enum(ENTRY_STATUSES) }))),
});
export const unsubscribeAllResultSchema = z.object({ outcome: z.literal('unsubscribed'), lists: z.number() });
export const unsubscribeResultSchema = z.object({ outcome: z.enum(['unsubscribed', 'already_unsubscribed']) });
export const eraseResultSchema = z.object({ outcome: z.literal('erased') });
export const eraseLinkSentSchema = z.object({ outcome: z.literal('sent'), email: z.string() });
