import { ipv4Value, ipv6Words } from './ip.js';
import type { GeoLocation } from './location.js';

/*
 * A lookup index derived from an MMDB file, kept on disk and read with pread.
 *
 * maxmind keeps a whole MMDB in a Buffer (the bundled DB-IP pair is 135 MB of RSS in every server
 * process). The index holds the same answers as a sorted table of address ranges, each with the
 * place it resolves to (the output of locationFromRecord, interned), adjacent ranges with the same
 * place merged. Only a sparse table of every BLOCK-th range start stays in memory (a few hundred KB);
 * a lookup is a binary search in it, one read of a block of ranges and one read of the place. Those
 * reads come from the page cache, which does not count in the process's RSS and is shared.
 *
 * File layout (big-endian):
 *   0   'WLGEOIX1', u32 header offset, u32 header length
 *   16  entries: key (4 bytes for an IPv4 tree, 16 for IPv6) + u32 value, sorted by key
 *   ... places: a zero byte, then per place three strings (country, city, region), each a u16
 *       length (0: null; high bit: UTF-16LE, used only for text that is not well-formed UTF-16),
 *       then the bytes
 *   ... sparse index: the key of every BLOCK-th entry
 *   ... header: JSON (IndexHeader)
 * A value is 0 (no place), a byte offset into the places section, or REDIRECT | n: the range is an
 * alias of another subtree (MaxMind maps ::ffff:0:0/96 and 2002::/16 onto the IPv4 tree), looked up
 * again with its leading bits replaced by redirects[n].
 */

export const MAGIC = 'WLGEOIX1';
export const PREAMBLE_BYTES = 16;
/** Bump when the file layout or the way it is derived changes: older files are then rebuilt. */
export const INDEX_FORMAT = 1;
export const BLOCK = 128;
export const NO_PLACE = 0;
export const REDIRECT = 0x80000000;
export const UTF16_FLAG = 0x8000;

/** What an index was built from; a mismatch with the source file means it must be rebuilt. */
export interface IndexIdentity {
  format: number;
  /** Real path, size and modification time of the MMDB file. */
  source: string;
  size: number;
  mtimeMs: number;
  /** Fingerprint of the record -> place mapping (mmdb-record.ts): a change of it or of ICU's names rebuilds. */
  mapping: string;
}

export interface IndexHeader extends IndexIdentity {
  /** IP version of the MMDB's search tree. */
  ipVersion: 4 | 6;
  databaseType: string;
  buildEpoch: number;
  entryCount: number;
  keyBytes: 4 | 16;
  blockSize: number;
  entriesOffset: number;
  placesOffset: number;
  placesLength: number;
  /** Longest encoded place, so one read always holds a whole place. */
  placeMaxBytes: number;
  indexOffset: number;
  indexLength: number;
  /** Targets of alias ranges: the first address of the subtree (hex, keyBytes long) and its depth. */
  redirects: { prefix: string; depth: number }[];
}

export class MmdbFormatError extends Error {
  override name = 'MmdbFormatError';
}

/** An opened index: lookups read the file; close() releases its descriptor. */
export interface RangeIndex {
  readonly file: string;
  readonly source: string;
  /** IP version of the source MMDB's tree (4: only IPv4 addresses may be asked). */
  readonly ipVersion: 4 | 6;
  /** ip must be a valid, normalised IPv4 or IPv6 address (IPv6 only for an IPv6 tree). */
  lookup(ip: string): GeoLocation | null;
  close(): void;
}

// ---------------------------------------------------------------------------------------------
// Addresses as 32-bit words

/** The address a search tree of `bits` bits walks: IPv4 in an IPv6 tree is ::a.b.c.d, as maxmind does it. */
export function addressWords(ip: string, treeWords: 1 | 4, out: Uint32Array): boolean {
  if (ip.includes(':')) return treeWords === 4 && ipv6Words(ip, out);
  const v4 = ipv4Value(ip);
  if (v4 < 0) return false;
  if (treeWords === 1) out[0] = v4;
  else {
    out[0] = 0;
    out[1] = 0;
    out[2] = 0;
    out[3] = v4;
  }
  return true;
}

export function wordsToText(words: Uint32Array, treeWords: 1 | 4): string {
  if (treeWords === 1) {
    const v = words[0]!;
    return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
  }
  const groups: string[] = [];
  for (let w = 0; w < 4; w++) groups.push((words[w]! >>> 16).toString(16), (words[w]! & 0xffff).toString(16));
  return groups.join(':');
}

// ---------------------------------------------------------------------------------------------
// Places

function encodeString(value: string | null): Buffer {
  const head = Buffer.alloc(2);
  if (value === null) return head;
  // A place name cut at 200 UTF-16 units may end in half a surrogate pair, which UTF-8 cannot hold.
  const utf8 = Buffer.from(value, 'utf8');
  const body = utf8.toString('utf8') === value ? utf8 : Buffer.from(value, 'utf16le');
  if (body.length === 0 || body.length > 0x7fff) throw new Error(`place name of ${body.length} bytes cannot be indexed`);
  head.writeUInt16BE(body.length | (body === utf8 ? 0 : UTF16_FLAG));
  return Buffer.concat([head, body]);
}

export function encodePlace(place: GeoLocation): Buffer {
  return Buffer.concat([encodeString(place.country), encodeString(place.city), encodeString(place.region)]);
}

export function decodePlace(buf: Buffer, length: number): GeoLocation {
  let at = 0;
  const next = (): string | null => {
    if (at + 2 > length) throw new Error('geolocation index: truncated place');
    const head = buf.readUInt16BE(at);
    at += 2;
    if (head === 0) return null;
    const bytes = head & ~UTF16_FLAG;
    if (at + bytes > length) throw new Error('geolocation index: truncated place');
    const text = buf.toString(head & UTF16_FLAG ? 'utf16le' : 'utf8', at, at + bytes);
    at += bytes;
    return text;
  };
  const country = next();
  const city = next();
  const region = next();
  return { country, city, region };
}
