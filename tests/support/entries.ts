import { randomUUID } from 'node:crypto';
import { NO_ATTRIBUTION } from '../../src/shared/waitlist/attribution.js';
import { NO_CONSENT_RECORD, type WaitlistEntry } from '../../src/shared/waitlist/entry.js';

/**
 * A complete waitlist entry for a test: a new id, no IP or location, joined without a consent
 * record or attribution; `fields` gives the address, the time and anything else.
 */
export function waitlistEntry(fields: Pick<WaitlistEntry, 'email' | 'created_at'> & Partial<WaitlistEntry>): WaitlistEntry {
  return {
    id: randomUUID(),
    ip_address: null,
    country: null,
    city: null,
    region: null,
    ...NO_CONSENT_RECORD,
    ...NO_ATTRIBUTION,
    ...fields,
  };
}
