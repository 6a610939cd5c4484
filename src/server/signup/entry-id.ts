import { randomUUID } from 'node:crypto';

/**
 * A new entry's id: a UUID of version 7 (RFC 9562), its first 48 bits the time in milliseconds and
 * the other 74 random (taken from a version-4 UUID, whose generator keeps a pool of random bytes).
 * Ids made close in time sort together, so the primary-key index of every new entry is written in
 * the same few pages instead of a random page each: on SQLite a random page per signup was a 4 kB
 * page of WAL (and of checkpoint) per signup, on PostgreSQL a random leaf of the index (decision 068).
 * The id is no secret: e-mail links name the entry under an HMAC (consent/links.ts), and the time
 * it gives away is the entry's created_at, which the admin sees anyway.
 */
export function newEntryId(now: number = Date.now()): string {
  const time = now.toString(16).padStart(12, '0');
  // randomUUID(): xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx (V: the variant); from the version digit on, its version becomes 7.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}
