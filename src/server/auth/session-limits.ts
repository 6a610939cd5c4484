import type { Selectable } from 'kysely';
import type { AdminSessionsTable } from '../db/schema.js';

/** How long a session may live (ASVS 3.3.1/3.3.2): config AUTH_SESSION_MAX_AGE_SECONDS and AUTH_SESSION_INACTIVITY_SECONDS. */
export interface SessionLimits {
  /** Absolute lifetime, counted from the sign-in. */
  maxAgeSeconds: number;
  /** Longest time without real use (`last_active_at`); refreshes do not count as use. */
  inactivitySeconds: number;
}

/**
 * Activity is written at most once per this interval (a tenth of the inactivity limit, at most a
 * minute), so an admin page's API calls cost no write each and a session in use never times out.
 */
export function activityResolutionMs(inactivitySeconds: number): number {
  return Math.min(60_000, inactivitySeconds * 100);
}

/** The limits configured for this app. */
export function sessionLimits(auth: { sessionMaxAgeSeconds: number; sessionInactivitySeconds: number }): SessionLimits {
  return { maxAgeSeconds: auth.sessionMaxAgeSeconds, inactivitySeconds: auth.sessionInactivitySeconds };
}

/** Whether a session is still valid at `nowMs`, or why it has ended (GoTrue's SessionTimedOut and timebox). */
export function sessionState(
  session: Pick<Selectable<AdminSessionsTable>, 'created_at' | 'updated_at' | 'last_active_at'>,
  limits: SessionLimits,
  nowMs: number,
): 'valid' | 'timebox' | 'inactivity' {
  const ms = (value: Date | string) => new Date(value).getTime();
  if (nowMs - ms(session.created_at) > limits.maxAgeSeconds * 1000) return 'timebox';
  if (nowMs - ms(session.last_active_at ?? session.updated_at) > limits.inactivitySeconds * 1000) return 'inactivity';
  return 'valid';
}
