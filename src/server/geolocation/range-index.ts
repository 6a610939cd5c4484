import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { BuildResult } from './range-index-build.js';
import type { GeoLocation } from './location.js';
import {
  addressWords,
  decodePlace,
  INDEX_FORMAT,
  MAGIC,
  NO_PLACE,
  PREAMBLE_BYTES,
  REDIRECT,
  type IndexHeader,
  type IndexIdentity,
  type RangeIndex,
} from './range-index-format.js';

/**
 * Reading a lookup index of an MMDB file (the file layout is in range-index-format.ts, the writer
 * in range-index-build.ts), and the cache of index files: one per source, rebuilt when stale.
 */

/** Decoded places kept per index (about 150 bytes each). */
const PLACE_CACHE_SIZE = 4096;

function readExactly(fd: number, buf: Buffer, length: number, position: number): void {
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, buf, done, length - done, position + done);
    if (n === 0) throw new Error('geolocation index: unexpected end of file');
    done += n;
  }
}

/** The header of an index file, or null when the file is missing, foreign or damaged. */
function readHeader(fd: number, fileSize: number): IndexHeader | null {
  if (fileSize < PREAMBLE_BYTES) return null;
  const preamble = Buffer.alloc(PREAMBLE_BYTES);
  readExactly(fd, preamble, PREAMBLE_BYTES, 0);
  if (preamble.toString('latin1', 0, 8) !== MAGIC) return null;
  const headerOffset = preamble.readUInt32BE(8);
  const headerLength = preamble.readUInt32BE(12);
  if (headerOffset + headerLength !== fileSize || headerLength > 1 << 20) return null;
  const raw = Buffer.alloc(headerLength);
  readExactly(fd, raw, headerLength, headerOffset);
  let header: IndexHeader;
  try {
    header = JSON.parse(raw.toString('utf8')) as IndexHeader;
  } catch {
    return null;
  }
  const entryBytes = header.keyBytes + 4;
  const blocks = Math.ceil(header.entryCount / header.blockSize);
  const consistent =
    header.format === INDEX_FORMAT &&
    (header.keyBytes === 4 || header.keyBytes === 16) &&
    header.keyBytes === (header.ipVersion === 4 ? 4 : 16) &&
    header.entryCount > 0 &&
    header.blockSize > 0 &&
    header.entriesOffset === PREAMBLE_BYTES &&
    header.placesOffset === header.entriesOffset + header.entryCount * entryBytes &&
    header.indexOffset === header.placesOffset + header.placesLength &&
    header.indexLength === blocks * header.keyBytes &&
    header.indexOffset + header.indexLength === headerOffset &&
    Number.isInteger(header.placeMaxBytes) &&
    header.placeMaxBytes >= 0 &&
    header.placeMaxBytes <= 3 * (2 + 0x7fff) &&
    Array.isArray(header.redirects);
  return consistent ? header : null;
}

function sameIdentity(a: IndexIdentity, b: IndexIdentity): boolean {
  return a.format === b.format && a.source === b.source && a.size === b.size && a.mtimeMs === b.mtimeMs && a.mapping === b.mapping;
}

/** Opens an index file; null when it is missing, damaged or not built from `identity`. */
export function openRangeIndex(file: string, identity: IndexIdentity): RangeIndex | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const header = readHeader(fd, fs.fstatSync(fd).size);
    if (!header || !sameIdentity(header, identity)) {
      fs.closeSync(fd);
      return null;
    }
    return rangeIndexReader(file, fd, header);
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

function rangeIndexReader(file: string, fd: number, header: IndexHeader): RangeIndex {
  const treeWords: 1 | 4 = header.keyBytes === 4 ? 1 : 4;
  const entryBytes = header.keyBytes + 4;
  const raw = Buffer.alloc(header.indexLength);
  readExactly(fd, raw, header.indexLength, header.indexOffset);
  const sparse = new Uint32Array(header.indexLength / 4);
  for (let i = 0; i < sparse.length; i++) sparse[i] = raw.readUInt32BE(i * 4);
  const blocks = sparse.length / treeWords;
  const redirects = header.redirects.map((r) => {
    const prefix = Buffer.from(r.prefix, 'hex');
    const words = new Uint32Array(treeWords);
    for (let w = 0; w < treeWords; w++) words[w] = prefix.readUInt32BE(4 * w);
    return { words, depth: r.depth };
  });

  const block = Buffer.alloc(header.blockSize * entryBytes);
  const place = Buffer.alloc(header.placeMaxBytes);
  // The places last read, by their offset: a few places (a country's capital, a large provider's
  // city) hold most addresses, and each saves a read and a decode (issue 33). Emptied when full.
  const places = new Map<number, GeoLocation>();
  const address = new Uint32Array(4);
  let closed = false;

  /** -1, 0, 1: the key of entry i in `block` against `address`. */
  const compareEntry = (i: number): number => {
    const at = i * entryBytes;
    for (let w = 0; w < treeWords; w++) {
      const k = block.readUInt32BE(at + 4 * w);
      const a = address[w]!;
      if (k !== a) return k < a ? -1 : 1;
    }
    return 0;
  };
  const compareSparse = (b: number): number => {
    for (let w = 0; w < treeWords; w++) {
      const k = sparse[b * treeWords + w]!;
      const a = address[w]!;
      if (k !== a) return k < a ? -1 : 1;
    }
    return 0;
  };

  /** The value of the range holding `address`. */
  const valueAt = (): number => {
    // Last block whose first key <= address (block 0 starts at address 0).
    let lo = 0;
    let hi = blocks - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (compareSparse(mid) <= 0) lo = mid;
      else hi = mid - 1;
    }
    const first = lo * header.blockSize;
    const count = Math.min(header.blockSize, header.entryCount - first);
    readExactly(fd, block, count * entryBytes, header.entriesOffset + first * entryBytes);
    let a = 0;
    let b = count - 1;
    while (a < b) {
      const mid = (a + b + 1) >>> 1;
      if (compareEntry(mid) <= 0) a = mid;
      else b = mid - 1;
    }
    return block.readUInt32BE(a * entryBytes + header.keyBytes);
  };

  /** Replaces the leading `depth` bits of `address` with those of `prefix`. */
  const redirectTo = (prefix: Uint32Array, depth: number) => {
    for (let w = 0; w < treeWords; w++) {
      const lead = Math.max(0, Math.min(32, depth - 32 * w));
      if (lead === 0) break;
      const keep = lead === 32 ? 0 : 0xffffffff >>> lead; // the address's own low bits
      address[w] = (prefix[w]! & ~keep) | (address[w]! & keep);
    }
  };

  return {
    file,
    source: header.source,
    ipVersion: header.ipVersion,
    lookup(ip) {
      if (closed) throw new Error('geolocation index is closed');
      if (!addressWords(ip, treeWords, address)) return null;
      let value = valueAt();
      // Each redirect leads to an earlier, fully written subtree; the bound only guards a damaged file.
      for (let hops = 0; value >= REDIRECT && hops < 130; hops++) {
        const target = redirects[value - REDIRECT];
        if (!target) throw new Error('geolocation index: bad redirect');
        redirectTo(target.words, target.depth);
        value = valueAt();
      }
      if (value >= REDIRECT) throw new Error('geolocation index: redirect loop');
      if (value === NO_PLACE) return null;
      const known = places.get(value);
      if (known) return { ...known };
      const length = Math.min(header.placeMaxBytes, header.placesLength - value);
      readExactly(fd, place, length, header.placesOffset + value);
      const decoded = decodePlace(place, length);
      if (places.size >= PLACE_CACHE_SIZE) places.clear();
      places.set(value, decoded);
      return { ...decoded };
    },
    close() {
      if (closed) return;
      closed = true;
      fs.closeSync(fd);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Cache files

/** The identity an index of `source` must carry; throws when the file cannot be read. */
export function indexIdentity(source: string, mapping: string): IndexIdentity {
  const real = fs.realpathSync(source);
  const stat = fs.statSync(real);
  return { format: INDEX_FORMAT, source: real, size: stat.size, mtimeMs: stat.mtimeMs, mapping };
}

/** Where the index of a source file lives in `dir`: one file per source path. */
export function indexFileFor(dir: string, identity: IndexIdentity): string {
  const pathHash = crypto.createHash('sha256').update(identity.source).digest('hex').slice(0, 12);
  return path.join(dir, `${path.basename(identity.source)}.${pathHash}.geoidx`);
}

export interface EnsureResult {
  index: RangeIndex;
  /** Set when the index had to be built now. */
  built: BuildResult | null;
}

/** Builds the index of `identity.source` into `file` (writeRangeIndex, here or in another thread). */
export type IndexBuild = (identity: IndexIdentity, file: string) => Promise<BuildResult>;

/**
 * Opens the index of `source` in `dir`, building it first with `build` when it is missing or
 * stale. Throws what `build` throws (MmdbFormatError when the source is not a usable MMDB).
 */
export async function ensureRangeIndex(source: string, dir: string, mapping: string, build: IndexBuild): Promise<EnsureResult> {
  const identity = indexIdentity(source, mapping);
  const file = indexFileFor(dir, identity);
  const existing = openRangeIndex(file, identity);
  if (existing) return { index: existing, built: null };
  const built = await build(identity, file);
  const index = openRangeIndex(file, identity);
  if (!index) throw new Error(`geolocation index ${file} could not be read back`);
  return { index, built };
}
