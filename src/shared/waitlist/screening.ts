import { z } from 'zod/mini';

/**
 * Why a signup was held or refused (issue 28): declared once here, counted per hour by the signup
 * room (src/server/signup/screening-counter.ts, table signup_screening) and shown by the insight
 * panel with these labels. Admin code and the server import this file; the landing page does not
 * (it holds a schema library).
 *
 * - `disposable`: the address is at a throwaway-mail domain (refused);
 * - `dead-domain`: the domain's DNS says it cannot receive mail, NXDOMAIN or a null MX (refused);
 * - `no-challenge`: no valid proof-of-work solution (held);
 * - `rate-limit`: refused by the per-client signup limit (SIGNUP_RATE_LIMIT_MAX).
 */
export const SCREENING_REASONS = ['disposable', 'dead-domain', 'no-challenge', 'rate-limit'] as const;
export const screeningReasonSchema = z.enum(SCREENING_REASONS);
export type ScreeningReason = z.infer<typeof screeningReasonSchema>;

export const SCREENING_REASON_LABELS: Record<ScreeningReason, string> = {
  disposable: 'Throwaway domain',
  'dead-domain': 'Domain cannot receive mail',
  'no-challenge': 'No proof-of-work',
  'rate-limit': 'Too many signups from one address',
};

/** The insight panel's counts for its period: every reason, in SCREENING_REASONS' order, zeros included. */
export const screeningCountsSchema = z.array(z.object({ reason: screeningReasonSchema, count: z.number() }));
export type ScreeningCounts = z.infer<typeof screeningCountsSchema>;
