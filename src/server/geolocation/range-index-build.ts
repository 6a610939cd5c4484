import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Reader, type Response } from 'maxmind';
import type { GeoLocation } from './location.js';
import {
  BLOCK,
  encodePlace,
  MAGIC,
  MmdbFormatError,
  NO_PLACE,
  PREAMBLE_BYTES,
  REDIRECT,
  wordsToText,
  type IndexHeader,
  type IndexIdentity,
} from './range-index-format.js';

/** Writing a lookup index (the file layout is in range-index-format.ts; range-index.ts reads it). */

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
