import { UUID_PATTERN } from '../../shared/admin/waitlist-api.js';

/**
 * The opaque cursor of the admin's newest-first lists (the waitlist, the outbox): the created_at
 * and id of the last row seen, as base64url JSON. Decoding never throws: anything this server did
 * not issue is null (a 400, never a query error).
 */
export interface KeysetCursor {
  createdAt: string;
  id: string;
}

const UUID_RE = new RegExp(UUID_PATTERN);

export function encodeKeysetCursor(cursor: KeysetCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.id]), 'utf8').toString('base64url');
}

/** `isValidTime` says which created_at values the list's query accepts. */
export function decodeKeysetCursor(value: string, isValidTime: (createdAt: string) => boolean): KeysetCursor | null {
  if (value.length === 0 || value.length > 200 || !/^[A-Za-z0-9_-]+$/.test(value)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) return null;
  const [createdAt, id] = parsed as unknown[];
  if (typeof createdAt !== 'string' || typeof id !== 'string') return null;
  if (!isValidTime(createdAt) || !UUID_RE.test(id)) return null;
  return { createdAt, id };
}
