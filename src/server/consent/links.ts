import { timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../crypto/secret-box.js';
import { LINK_PURPOSES, LINK_TOKEN_PARAM, type LinkPurpose } from '../../shared/waitlist/consent-contract.js';

/**
 * The signed tokens in e-mail links (src/shared/waitlist/consent-contract.ts): which entry, what
 * for, until when, under an HMAC whose key is derived from the server's secret key (never in the
 * database), so a token cannot be forged, altered or moved to another purpose.
 *
 * Format: base64url(payload) "." first 128 bits of HMAC-SHA256(payload) as hex, where payload is
 * version (1 byte) | purpose (1 byte) | expiry in Unix seconds (4 bytes) | entry id (16 bytes).
 * Single use is a matter of state, not of the token: confirming a confirmed entry changes nothing.
 */
/** The keyed hash of app.secretBox. */
type LinkBox = Pick<SecretBox, 'hmac'>;

const VERSION = 1;
const MAC_HEX_LENGTH = 32;
const PAYLOAD_BYTES = 1 + 1 + 4 + 16;
const HMAC_CONTEXT = 'waitlist link v1';
const ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface LinkClaims {
  entryId: string;
  purpose: LinkPurpose;
  /** Unix seconds. */
  expiresAt: number;
}

export type LinkCheck = { ok: true; claims: LinkClaims } | { ok: false; reason: 'invalid' | 'expired' };

function idToBytes(id: string): Buffer {
  if (!ID_PATTERN.test(id)) throw new Error('link tokens name entries by their 8-4-4-4-12 hex id');
  return Buffer.from(id.replace(/-/g, ''), 'hex');
}

function bytesToId(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function createLinkToken(box: LinkBox, claims: LinkClaims): string {
  const payload = Buffer.alloc(PAYLOAD_BYTES);
  payload.writeUInt8(VERSION, 0);
  payload.writeUInt8(LINK_PURPOSES.indexOf(claims.purpose), 1);
  payload.writeUInt32BE(Math.floor(claims.expiresAt), 2);
  idToBytes(claims.entryId).copy(payload, 6);
  const body = payload.toString('base64url');
  return `${body}.${box.hmac(body, HMAC_CONTEXT).slice(0, MAC_HEX_LENGTH)}`;
}

/** Checks a token for `purpose`; `nowSeconds` is Unix seconds. Never throws on bad input. */
export function verifyLinkToken(box: LinkBox, token: unknown, purpose: LinkPurpose, nowSeconds = Date.now() / 1000): LinkCheck {
  if (typeof token !== 'string' || token.length > 200) return { ok: false, reason: 'invalid' };
  const [body, mac, extra] = token.split('.');
  if (!body || !mac || extra !== undefined || !/^[A-Za-z0-9_-]+$/.test(body) || !/^[0-9a-f]+$/.test(mac)) return { ok: false, reason: 'invalid' };
  const expected = Buffer.from(box.hmac(body, HMAC_CONTEXT).slice(0, MAC_HEX_LENGTH), 'utf8');
  const given = Buffer.from(mac, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'invalid' };
  const payload = Buffer.from(body, 'base64url');
  if (payload.length !== PAYLOAD_BYTES || payload.readUInt8(0) !== VERSION) return { ok: false, reason: 'invalid' };
  if (LINK_PURPOSES[payload.readUInt8(1)] !== purpose) return { ok: false, reason: 'invalid' };
  const expiresAt = payload.readUInt32BE(2);
  if (expiresAt <= nowSeconds) return { ok: false, reason: 'expired' };
  return { ok: true, claims: { entryId: bytesToId(payload.subarray(6)), purpose, expiresAt } };
}

/** A link on the site's public address (PUBLIC_URL), never on a request's Host header. */
export function linkUrl(publicUrl: string, path: string, token: string): string {
  const url = new URL(path, publicUrl);
  url.searchParams.set(LINK_TOKEN_PARAM, token);
  return url.toString();
}
