import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Reader, type Response } from 'maxmind';
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

const MAGIC = 'WLGEOIX1';
const PREAMBLE_BYTES = 16;
/** Bump when the file layout or the way it is derived changes: older files are then rebuilt. */
export const INDEX_FORMAT = 1;
const BLOCK = 128;
const NO_PLACE = 0;
const REDIRECT = 0x80000000;
const UTF16_FLAG = 0x8000;

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

interface IndexHeader extends IndexIdentity {
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
function addressWords(ip: string, treeWords: 1 | 4, out: Uint32Array): boolean {
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

function wordsToText(words: Uint32Array, treeWords: 1 | 4): string {
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

function encodePlace(place: GeoLocation): Buffer {
  return Buffer.concat([encodeString(place.country), encodeString(place.city), encodeString(place.region)]);
}

function decodePlace(buf: Buffer, length: number): GeoLocation {
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

// ---------------------------------------------------------------------------------------------
// Building

/** Node record readers for the three MMDB record sizes (as mmdb-lib's walker reads them). */
function nodeReaders(db: Buffer, recordSize: number, nodeByteSize: number): [(n: number) => number, (n: number) => number] {
  switch (recordSize) {
    case 24:
      return [
        (n) => {
          const o = n * nodeByteSize;
          return (db[o]! << 16) | (db[o + 1]! << 8) | db[o + 2]!;
        },
        (n) => {
          const o = n * nodeByteSize + 3;
          return (db[o]! << 16) | (db[o + 1]! << 8) | db[o + 2]!;
        },
      ];
    case 28:
      return [
        (n) => {
          const o = n * nodeByteSize;
          return ((db[o + 3]! & 0xf0) << 20) | (db[o]! << 16) | (db[o + 1]! << 8) | db[o + 2]!;
        },
        (n) => {
          const o = n * nodeByteSize;
          return ((db[o + 3]! & 0x0f) << 24) | (db[o + 4]! << 16) | (db[o + 5]! << 8) | db[o + 6]!;
        },
      ];
    case 32:
      return [(n) => db.readUInt32BE(n * nodeByteSize), (n) => db.readUInt32BE(n * nodeByteSize + 4)];
    default:
      throw new MmdbFormatError(`unsupported MMDB record size ${recordSize}`);
  }
}

/** Appends fixed-size records to a file through a 1 MB buffer. */
class FileWriter {
  private readonly chunk = Buffer.alloc(1 << 20);
  private used = 0;
  position: number;
  constructor(
    private readonly fd: number,
    start: number,
  ) {
    this.position = start;
  }
  reserve(bytes: number): { buf: Buffer; at: number } {
    if (this.used + bytes > this.chunk.length) this.flush();
    const at = this.used;
    this.used += bytes;
    return { buf: this.chunk, at };
  }
  write(data: Buffer): void {
    this.flush();
    fs.writeSync(this.fd, data, 0, data.length, this.position);
    this.position += data.length;
  }
  flush(): void {
    if (this.used === 0) return;
    fs.writeSync(this.fd, this.chunk, 0, this.used, this.position);
    this.position += this.used;
    this.used = 0;
  }
}

function mmdbReader(db: Buffer): Reader<Response> {
  try {
    return new Reader<Response>(db);
  } catch (err) {
    throw new MmdbFormatError(`not a MaxMind DB file: ${err instanceof Error ? err.message : String(err)}`);
  }
}

export interface BuildResult {
  entries: number;
  places: number;
  /** Alias ranges that point at a subtree written elsewhere. */
  redirects: number;
  bytes: number;
  milliseconds: number;
}

/**
 * Walks the MMDB's search tree in address order and writes the index to `outFile`. Each distinct
 * data record is read once through maxmind's own Reader (at the first address of its first network)
 * and turned into a place by `toPlace`, so every range answers exactly what maxmind + toPlace do.
 */
export function buildRangeIndex(
  db: Buffer,
  identity: IndexIdentity,
  outFile: string,
  toPlace: (record: unknown) => GeoLocation | null,
): BuildResult {
  const started = performance.now();
  const reader = mmdbReader(db);
  const { nodeCount, recordSize, nodeByteSize, ipVersion, searchTreeSize } = reader.metadata;
  if (ipVersion !== 4 && ipVersion !== 6) throw new MmdbFormatError(`unsupported MMDB ip_version ${ipVersion}`);
  if (nodeCount * nodeByteSize !== searchTreeSize || searchTreeSize > db.length) throw new MmdbFormatError('MMDB search tree does not fit the file');
  const [left, right] = nodeReaders(db, recordSize, nodeByteSize);
  const bits = ipVersion === 4 ? 32 : 128;
  const treeWords: 1 | 4 = ipVersion === 4 ? 1 : 4;
  const keyBytes: 4 | 16 = treeWords === 1 ? 4 : 16;
  const entryBytes = keyBytes + 4;

  // Nodes with more than one parent (aliases): their subtree is written once, at its first
  // address; later paths to it become redirect ranges.
  const parents = new Uint8Array(nodeCount);
  for (let n = 0; n < nodeCount; n++) {
    const l = left(n);
    const r = right(n);
    if (l < nodeCount && parents[l]! < 2) parents[l]!++;
    if (r < nodeCount && parents[r]! < 2) parents[r]!++;
  }
  const firstVisit = new Map<number, { words: Uint32Array; depth: number; redirect: number }>();
  const redirects: { words: Uint32Array; depth: number }[] = [];

  const fd = fs.openSync(outFile, 'wx', 0o644);
  try {
    const out = new FileWriter(fd, PREAMBLE_BYTES);
    const entriesOffset = PREAMBLE_BYTES;
    const sparse: number[] = [];
    let entryCount = 0;
    let lastValue = -1;

    const placeChunks: Buffer[] = [Buffer.alloc(1)]; // offset 0 means "no place"
    let placesLength = 1;
    let placeMaxBytes = 0;
    const placeOffsets = new Map<string, number>();
    const pointerValues = new Map<number, number>();

    const cur = new Uint32Array(4);
    // Bit operators give signed 32-bit results; a Uint32Array stores them back as unsigned.
    const setBit = (depth: number, one: boolean) => {
      const w = depth >>> 5;
      const bit = 1 << (31 - (depth & 31));
      cur[w] = one ? cur[w]! | bit : cur[w]! & ~bit;
    };

    const emit = (value: number) => {
      if (value === lastValue) return; // same answer as the range before: merge
      lastValue = value;
      if (entryCount % BLOCK === 0) for (let w = 0; w < treeWords; w++) sparse.push(cur[w]!);
      const { buf, at } = out.reserve(entryBytes);
      for (let w = 0; w < treeWords; w++) buf.writeUInt32BE(cur[w]!, at + 4 * w);
      buf.writeUInt32BE(value, at + keyBytes);
      entryCount++;
    };

    const placeValue = (pointer: number): number => {
      const known = pointerValues.get(pointer);
      if (known !== undefined) return known;
      const place = toPlace(reader.get(wordsToText(cur, treeWords)));
      let value = NO_PLACE;
      if (place) {
        const key = JSON.stringify([place.country, place.city, place.region]);
        const offset = placeOffsets.get(key);
        if (offset !== undefined) value = offset;
        else {
          const encoded = encodePlace(place);
          if (placesLength + encoded.length >= REDIRECT) throw new Error('geolocation index: too many places');
          value = placesLength;
          placeOffsets.set(key, value);
          placeChunks.push(encoded);
          placesLength += encoded.length;
          placeMaxBytes = Math.max(placeMaxBytes, encoded.length);
        }
      }
      pointerValues.set(pointer, value);
      return value;
    };

    // Iterative depth-first walk, left before right, so ranges come out sorted.
    const nodes = new Float64Array(bits + 1);
    const sides = new Uint8Array(bits + 1);
    let depth = 0;
    nodes[0] = 0;
    sides[0] = 0;
    while (depth >= 0) {
      const side = sides[depth]!;
      if (side === 2) {
        setBit(depth, false);
        depth--;
        continue;
      }
      sides[depth] = side + 1;
      setBit(depth, side === 1);
      const node = nodes[depth]!;
      const child = side === 1 ? right(node) : left(node);
      if (child > nodeCount) emit(placeValue(child));
      else if (child === nodeCount || depth + 1 >= bits) emit(NO_PLACE); // empty, or a tree deeper than the address
      else {
        if (parents[child]! > 1) {
          const first = firstVisit.get(child);
          if (first && first.depth === depth + 1) {
            if (first.redirect < 0) {
              first.redirect = redirects.length;
              redirects.push({ words: first.words, depth: depth + 1 });
            }
            emit((REDIRECT | first.redirect) >>> 0);
            continue;
          }
          if (!first) firstVisit.set(child, { words: Uint32Array.from(cur), depth: depth + 1, redirect: -1 });
        }
        depth++;
        nodes[depth] = child;
        sides[depth] = 0;
      }
    }
    out.flush();

    const placesOffset = out.position;
    for (const chunk of placeChunks) out.write(chunk);
    const indexOffset = out.position;
    const index = Buffer.alloc(sparse.length * 4);
    sparse.forEach((word, i) => index.writeUInt32BE(word, i * 4));
    out.write(index);
    const headerOffset = out.position;
    const header: IndexHeader = {
      ...identity,
      ipVersion,
      databaseType: reader.metadata.databaseType,
      buildEpoch: reader.metadata.buildEpoch.getTime(),
      entryCount,
      keyBytes,
      blockSize: BLOCK,
      entriesOffset,
      placesOffset,
      placesLength,
      placeMaxBytes,
      indexOffset,
      indexLength: index.length,
      redirects: redirects.map(({ words, depth }) => {
        const prefix = Buffer.alloc(keyBytes);
        for (let w = 0; w < treeWords; w++) prefix.writeUInt32BE(words[w]!, 4 * w);
        return { prefix: prefix.toString('hex'), depth };
      }),
    };
    const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
    out.write(headerBytes);
    const preamble = Buffer.alloc(PREAMBLE_BYTES);
    preamble.write(MAGIC, 0, 'latin1');
    preamble.writeUInt32BE(headerOffset, 8);
    preamble.writeUInt32BE(headerBytes.length, 12);
    fs.writeSync(fd, preamble, 0, PREAMBLE_BYTES, 0);
    fs.fsyncSync(fd);
    return {
      entries: entryCount,
      places: placeOffsets.size,
      redirects: redirects.length,
      bytes: out.position,
      milliseconds: Math.round(performance.now() - started),
    };
  } finally {
    fs.closeSync(fd);
  }
}

// ---------------------------------------------------------------------------------------------
// Reading

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
      const length = Math.min(header.placeMaxBytes, header.placesLength - value);
      readExactly(fd, place, length, header.placesOffset + value);
      return decodePlace(place, length);
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

/**
 * Reads the MMDB file and writes its index to `file`: into a temporary file renamed into place, so
 * concurrent starts never see half a file. `onStart` is called once the file is known to be an MMDB.
 * Throws MmdbFormatError when it is not a usable one; an error with a `syscall` when the index
 * cannot be written.
 */
export function writeRangeIndex(
  identity: IndexIdentity,
  file: string,
  toPlace: (record: unknown) => GeoLocation | null,
  onStart?: () => void,
): BuildResult {
  const db = fs.readFileSync(identity.source);
  mmdbReader(db); // not an MMDB: fail before announcing a build
  onStart?.();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  removeStaleTemporaries(file);
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  try {
    const built = buildRangeIndex(db, identity, tmp, toPlace);
    fs.renameSync(tmp, file);
    return built;
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    // A failed system call (no space, no permission) is the index's problem; anything else is the file's.
    if (err instanceof MmdbFormatError || (err instanceof Error && 'syscall' in err)) throw err;
    throw new MmdbFormatError(`MMDB file could not be read: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** Temporary files of builds that died (older than an hour), beside `file`. */
function removeStaleTemporaries(file: string): void {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.`;
  for (const name of fs.readdirSync(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const full = path.join(dir, name);
    try {
      if (Date.now() - fs.statSync(full).mtimeMs > 3_600_000) fs.rmSync(full, { force: true });
    } catch {
      // Another process removed or renamed it meanwhile.
    }
  }
}
