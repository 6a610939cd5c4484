import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import maxmind, { type Reader, type Response } from 'maxmind';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/server/config.js';
import { createGeolocator, type GeoLogger } from '../../../src/server/geolocation/geolocator.js';
import { locationFromRecord, openMmdbSource, placeMappingFingerprint, type MmdbSource } from '../../../src/server/geolocation/mmdb.js';
import { ensureRangeIndex, indexFileFor, indexIdentity } from '../../../src/server/geolocation/range-index.js';
import { writeRangeIndex } from '../../../src/server/geolocation/range-index-build.js';

// The lookup index (src/server/geolocation/range-index.ts) must answer exactly what maxmind does
// with the same MMDB files: these tests ask both the same addresses.

function recordingLogger(): GeoLogger & { warnings: string[]; infos: string[]; debugs: string[] } {
  const warnings: string[] = [];
  const infos: string[] = [];
  const debugs: string[] = [];
  return {
    warnings,
    infos,
    debugs,
    warn: (_obj, msg) => void warnings.push(msg ?? ''),
    info: (_obj, msg) => void infos.push(msg ?? ''),
    debug: (_obj, msg) => void debugs.push(msg ?? ''),
  };
}

const tmpDirs: string[] = [];
function tmpDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geo-index-'));
  tmpDirs.push(dir);
  return dir;
}
afterAll(() => tmpDirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

// --- addresses --------------------------------------------------------------------------------

function v4Text(n: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 255n)).join('.');
}
function v6Text(n: bigint): string {
  const groups: string[] = [];
  for (let i = 7; i >= 0; i--) groups.push(((n >> BigInt(16 * i)) & 0xffffn).toString(16));
  return groups.join(':');
}
function randomBig(bytes: number): bigint {
  return BigInt(`0x${crypto.randomBytes(bytes).toString('hex')}`);
}
function parseBig(ip: string): { value: bigint; bits: 32 | 128 } {
  if (!ip.includes(':')) return { value: ip.split('.').reduce((n, o) => n * 256n + BigInt(o), 0n), bits: 32 };
  const [head = '', tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = ip.includes('::') && tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  return { value: groups.reduce((n, g) => n * 65536n + BigInt(parseInt(g, 16)), 0n), bits: 128 };
}

/** The addresses either side of each edge of the network holding `ip` (of the tree's own version). */
function edgesAround(reader: Reader<Response>, ip: string): string[] {
  const [, prefix] = reader.getWithPrefixLength(ip);
  const { value, bits } = parseBig(ip);
  const size = 1n << BigInt(bits - prefix);
  const start = (value / size) * size;
  const end = start + size - 1n;
  const max = (1n << BigInt(bits)) - 1n;
  const text = bits === 32 ? v4Text : v6Text;
  return [start - 1n, start, start + 1n, end - 1n, end, end + 1n].filter((n) => n >= 0n && n <= max).map(text);
}

function expectSameAnswers(indexed: MmdbSource, inMemory: MmdbSource, ips: readonly string[]): void {
  const differences: string[] = [];
  for (const ip of ips) {
    const got = indexed.lookup(ip);
    const want = inMemory.lookup(ip);
    if (JSON.stringify(got) !== JSON.stringify(want)) differences.push(`${ip}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`);
  }
  expect(differences.slice(0, 10)).toEqual([]);
}

// --- the bundled DB-IP files --------------------------------------------------------------------

describe('lookup index of the bundled DB-IP Lite files', () => {
  const paths = loadConfig({}).geolocation.mmdbPaths;
  let indexed: MmdbSource;
  let inMemory: MmdbSource;
  let readers: Reader<Response>[];
  let indexDir: string;
  const log = recordingLogger();

  beforeAll(async () => {
    // A fresh build, so this tests the builder of this checkout, not a cached index.
    indexDir = tmpDir();
    indexed = (await openMmdbSource(paths, log, { indexDir }))!;
    inMemory = (await openMmdbSource(paths, recordingLogger(), { indexDir: null }))!;
    readers = await Promise.all(paths.map((p) => maxmind.open<Response>(p)));
  }, 300_000);

  afterAll(() => indexed?.close());

  it('builds the indexes in a worker thread without warnings', () => {
    expect(log.warnings).toEqual([]);
    expect(log.debugs).toEqual([]); // not 'no worker thread for the index build'
    expect(log.infos.filter((m) => /lookup index built/.test(m))).toHaveLength(2);
    expect(indexed.files).toEqual(paths);
  });

  it('answers the known addresses as maxmind does', () => {
    const known = ['8.8.8.8', '81.2.69.160', '1.1.1.1', '2001:4860:4860::8888', '2a00:1450:4001:82a::200e', '2606:4700:4700::1111'];
    expectSameAnswers(indexed, inMemory, known);
    expect(indexed.lookup('8.8.8.8')?.country).toBe('United States');
    expect(indexed.lookup('2001:4860:4860::8888')).not.toBeNull();
  });

  it('answers 100,000 random IPv4 addresses as maxmind does', () => {
    const ips = Array.from({ length: 100_000 }, () => v4Text(randomBig(4)));
    expectSameAnswers(indexed, inMemory, ips);
  });

  it('answers 100,000 random IPv6 addresses as maxmind does (global unicast, anywhere, IPv4-compatible)', () => {
    const ips = Array.from({ length: 100_000 }, (_, i) => {
      if (i % 4 === 0) return v6Text(randomBig(16)); // anywhere
      if (i % 4 === 1) return v6Text(randomBig(4)); // ::a.b.c.d
      return v6Text((1n << 125n) | (randomBig(16) & ((1n << 125n) - 1n))); // 2000::/3
    });
    expectSameAnswers(indexed, inMemory, ips);
  });

  it('agrees on both sides of the edges of 20,000 networks', () => {
    const ips: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      ips.push(...edgesAround(readers[0]!, v4Text(randomBig(4))));
      ips.push(...edgesAround(readers[1]!, v6Text((1n << 125n) | (randomBig(16) & ((1n << 125n) - 1n)))));
    }
    expectSameAnswers(indexed, inMemory, ips);
  });

  it('places an address through the geolocator as the in-memory geolocator does, reusing the index', async () => {
    const config = { mmdbPaths: paths, httpUrl: null, httpTimeoutMs: 100 };
    const reuse = recordingLogger();
    const fromIndex = await createGeolocator(config, reuse, { indexDir });
    const fromMemory = await createGeolocator(config, recordingLogger(), { indexDir: null });
    expect(reuse.infos).toEqual([]); // opened, not rebuilt
    for (const ip of ['8.8.8.8', '::ffff:8.8.8.8', '::FFFF:0808:0808', '[2001:4860:4860::8888]', '2001:4860:4860::8888', '127.0.0.1', '10.0.0.1', '::1', 'garbage', '']) {
      expect(await fromIndex.lookup(ip)).toEqual(await fromMemory.lookup(ip));
    }
    expect(fs.readdirSync(indexDir).sort()).toEqual(paths.map((p) => path.basename(indexFileFor(indexDir, indexIdentity(p, placeMappingFingerprint())))).sort());
  });
});

// --- MMDB files written here: MaxMind City layout with aliases, DB-IP layout, every record size ---

type Bit = 0 | 1;
interface TreeNode {
  kids: [Child, Child];
}
type Child = TreeNode | { data: number } | null;

function ctrl(type: number, size: number): Buffer {
  const head: number[] = [];
  let sizeBits: number;
  const ext: number[] = [];
  if (size < 29) sizeBits = size;
  else if (size < 285) {
    sizeBits = 29;
    ext.push(size - 29);
  } else {
    sizeBits = 30;
    ext.push((size - 285) >> 8, (size - 285) & 255);
  }
  if (type <= 7) head.push((type << 5) | sizeBits);
  else head.push(sizeBits, type - 7);
  return Buffer.from([...head, ...ext]);
}

/** MaxMind DB data section encoding of the value types these files use. */
function encode(value: unknown): Buffer {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([ctrl(2, bytes.length), bytes]);
  }
  if (typeof value === 'bigint') {
    const bytes = Buffer.alloc(8);
    bytes.writeBigUInt64BE(value);
    return Buffer.concat([ctrl(9, 8), bytes]);
  }
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < 2 ** 32) {
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32BE(value);
    let skip = 0;
    while (skip < 4 && bytes[skip] === 0) skip++;
    return Buffer.concat([ctrl(6, 4 - skip), bytes.subarray(skip)]);
  }
  if (typeof value === 'number') {
    const bytes = Buffer.alloc(8);
    bytes.writeDoubleBE(value);
    return Buffer.concat([ctrl(3, 8), bytes]);
  }
  if (typeof value === 'boolean') return ctrl(14, value ? 1 : 0);
  if (Array.isArray(value)) return Buffer.concat([ctrl(11, value.length), ...value.map(encode)]);
  const entries = Object.entries(value as Record<string, unknown>);
  return Buffer.concat([ctrl(7, entries.length), ...entries.flatMap(([k, v]) => [encode(k), encode(v)])]);
}

function bitsOf(ip: string, prefix: number, ipVersion: 4 | 6): Bit[] {
  const { value, bits } = parseBig(ip);
  const total = ipVersion === 4 ? 32 : 128;
  // An IPv4 network in an IPv6 tree is ::a.b.c.d/(96 + prefix).
  const length = bits === 32 && ipVersion === 6 ? prefix + 96 : prefix;
  return Array.from({ length }, (_, i) => Number((value >> BigInt(total - 1 - i)) & 1n) as Bit);
}

/**
 * Writes an MMDB file: networks are inserted least specific first (a later, longer prefix splits
 * the earlier one), aliases make the node at one path the node at another (as MaxMind's writer
 * maps ::ffff:0:0/96 and 2002::/16 onto the IPv4 tree).
 */
function writeMmdb(
  file: string,
  options: { ipVersion: 4 | 6; recordSize: 24 | 28 | 32; databaseType: string },
  networks: [string, number, Record<string, unknown>][],
  aliases: [Bit[], Bit[]][] = [],
): void {
  const data: Buffer[] = [];
  let dataLength = 0;
  const offsets = new Map<string, number>();
  const root: TreeNode = { kids: [null, null] };
  const nodeAt = (bits: Bit[]): TreeNode => {
    let node = root;
    for (const bit of bits) {
      const kid = node.kids[bit];
      if (kid && 'kids' in kid) node = kid;
      else node = node.kids[bit] = { kids: [kid, kid] };
    }
    return node;
  };
  for (const [ip, prefix, record] of networks) {
    const key = JSON.stringify(record);
    let offset = offsets.get(key);
    if (offset === undefined) {
      const encoded = encode(record);
      offset = dataLength;
      offsets.set(key, offset);
      data.push(encoded);
      dataLength += encoded.length;
    }
    const bits = bitsOf(ip, prefix, options.ipVersion);
    nodeAt(bits.slice(0, -1)).kids[bits[bits.length - 1]!] = { data: offset };
  }
  for (const [from, to] of aliases) nodeAt(from.slice(0, -1)).kids[from[from.length - 1]!] = nodeAt(to);

  const numbers = new Map<TreeNode, number>();
  const order: TreeNode[] = [];
  const queue: TreeNode[] = [root];
  while (queue.length > 0) {
    const node = queue.shift()!;
    if (numbers.has(node)) continue;
    numbers.set(node, order.length);
    order.push(node);
    for (const kid of node.kids) if (kid && 'kids' in kid) queue.push(kid);
  }
  const nodeCount = order.length;
  const recordValue = (kid: Child) => (kid === null ? nodeCount : 'kids' in kid ? numbers.get(kid)! : nodeCount + 16 + kid.data);
  const nodeBytes = options.recordSize / 4;
  const tree = Buffer.alloc(nodeCount * nodeBytes);
  order.forEach((node, n) => {
    const [l, r] = node.kids.map(recordValue) as [number, number];
    const o = n * nodeBytes;
    if (options.recordSize === 24) {
      tree.writeUIntBE(l, o, 3);
      tree.writeUIntBE(r, o + 3, 3);
    } else if (options.recordSize === 28) {
      tree.writeUIntBE(l & 0xffffff, o, 3);
      tree[o + 3] = ((l >>> 24) << 4) | (r >>> 24);
      tree.writeUIntBE(r & 0xffffff, o + 4, 3);
    } else {
      tree.writeUInt32BE(l, o);
      tree.writeUInt32BE(r, o + 4);
    }
  });
  const metadata = encode({
    node_count: nodeCount,
    record_size: options.recordSize,
    ip_version: options.ipVersion,
    database_type: options.databaseType,
    languages: ['en'],
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: 1_700_000_000n,
    description: { en: 'test' },
  });
  const marker = Buffer.from('ABCDEF4D61784D696E642E636F6D', 'hex');
  fs.writeFileSync(file, Buffer.concat([tree, Buffer.alloc(16), ...data, marker, metadata]));
}

const names = (en: string) => ({ names: { en, de: `${en} (de)` } });
const v4Root: Bit[] = Array<Bit>(96).fill(0);
const v4Aliases: [Bit[], Bit[]][] = [
  [[...Array<Bit>(80).fill(0), ...Array<Bit>(16).fill(1)], v4Root], // ::ffff:0:0/96
  [bitsOf('2002::', 16, 6), v4Root], // 2002::/16 (6to4)
];

/** A MaxMind GeoIP2-City-like file: names in English, subdivisions, registered country only... */
const maxMindNetworks: [string, number, Record<string, unknown>][] = [
  ['1.0.0.0', 8, { country: { iso_code: 'AU', ...names('Australia') }, location: { latitude: -27.5, longitude: 153 } }],
  ['1.2.0.0', 16, { city: names('Brisbane'), country: { iso_code: 'AU', ...names('Australia') }, subdivisions: [{ iso_code: 'QLD', ...names('Queensland') }] }],
  ['1.2.3.4', 32, { registered_country: { iso_code: 'JP', ...names('Japan') } }],
  ['1.2.3.6', 31, { registered_country: { iso_code: 'DE' } }],
  ['81.2.69.0', 24, { city: names('London'), country: { iso_code: 'GB', ...names('United Kingdom') }, subdivisions: [names('England'), names('Greater London')] }],
  ['81.2.69.128', 25, { city: names(' Lon\u0000don\u2028 '), country: { iso_code: 'GB' }, subdivisions: [] }],
  ['89.160.20.112', 28, { city: names('Linköping'), country: { iso_code: 'SE', ...names('Sweden') }, subdivisions: [{ iso_code: 'E', ...names('Östergötland County') }] }],
  ['175.16.199.0', 24, { city: names('Changchun'), country: names('China'), subdivisions: [names('Jilin Sheng')] }],
  ['216.160.83.56', 29, { city: names('Milton'), country: { iso_code: 'US', names: {} }, subdivisions: [names('Washington')] }],
  ['2a02:cf40::', 29, { country: { iso_code: 'NO', ...names('Norway') } }],
  ['2a02:cf40:8000::', 33, { city: names('Oslo'), country: { iso_code: 'NO', ...names('Norway') }, subdivisions: [names('Oslo County')] }],
  ['2600::', 12, { country: { iso_code: 'US' } }],
  ['2c0f:ff00::', 120, { city: names(`${'Ŵ'.repeat(199)}😀`), country: { iso_code: 'ZA', ...names('South Africa') } }],
  ['2c0f:ff00::80', 121, { city: { names: {} }, country: { iso_code: 'ZZ' } }],
  ['2001:218::', 32, { continent: { code: 'AS' }, is_anycast: true }],
];

/** A DB-IP Lite-like IPv4 file. */
const dbipNetworks: [string, number, Record<string, unknown>][] = [
  ['0.0.0.0', 1, { city: '', country_code: 'ZZ', state1: '', state2: '' }],
  ['8.0.0.0', 8, { city: '', country_code: 'US', state1: '', latitude: 37.751, longitude: -97.822 }],
  ['8.8.8.0', 24, { city: 'Mountain View', country_code: 'US', state1: 'California', state2: '', latitude: 37.4, longitude: -122.1 }],
  ['8.8.8.8', 32, { city: 'Mountain View', country_code: 'US', state1: 'California', state2: '', latitude: 37.40599, longitude: -122.078514 }],
  ['128.0.0.0', 2, { city: 'Paris', country_code: 'FR', state1: 'Île-de-France', state2: 'Paris' }],
  ['200.0.0.0', 5, { city: 'São Paulo', country_code: 'br', state1: ' São Paulo ', state2: '' }],
  ['255.255.255.255', 32, { city: 'x'.repeat(300), country_code: 'QQ', state1: 42 }],
];

/** Addresses at and around every network of a file, a few inside each, the alias forms, random ones. */
function probeAddresses(networks: [string, number, unknown][], ipVersion: 4 | 6): string[] {
  const ips: string[] = [];
  for (const [ip, prefix] of networks) {
    const { value, bits } = parseBig(ip);
    const size = 1n << BigInt(bits - prefix);
    const text = bits === 32 ? v4Text : v6Text;
    const max = (1n << BigInt(bits)) - 1n;
    for (const n of [value - 1n, value, value + 1n, value + size / 2n, value + size - 1n, value + size, value + (randomBig(16) % size)]) {
      if (n < 0n || n > max) continue;
      ips.push(text(n));
      if (bits === 32 && ipVersion === 6) ips.push(`::ffff:${text(n)}`, v6Text((0x2002n << 112n) | (n << 80n) | randomBig(10)), v6Text(n));
    }
  }
  for (let i = 0; i < 5000; i++) {
    ips.push(v4Text(randomBig(4)));
    if (ipVersion === 6) ips.push(v6Text(randomBig(16)), v6Text((0x2002n << 112n) | randomBig(14)));
  }
  return ips;
}

describe.each([24, 28, 32] as const)('lookup index of a MaxMind City layout file, %i-bit records', (recordSize) => {
  let file: string;
  let indexed: MmdbSource;
  let inMemory: MmdbSource;
  const log = recordingLogger();

  beforeAll(async () => {
    file = path.join(tmpDir(), `city-${recordSize}.mmdb`);
    writeMmdb(file, { ipVersion: 6, recordSize, databaseType: 'GeoIP2-City' }, maxMindNetworks, v4Aliases);
    indexed = (await openMmdbSource([file], log, { indexDir: tmpDir() }))!;
    inMemory = (await openMmdbSource([file], recordingLogger(), { indexDir: null }))!;
  });

  it('answers every probe as maxmind does', () => {
    expect(log.warnings).toEqual([]);
    expectSameAnswers(indexed, inMemory, probeAddresses(maxMindNetworks, 6));
  });

  it('reads places in English, first subdivision, code fallback', () => {
    expect(indexed.lookup('1.2.9.9')).toEqual({ country: 'Australia', city: 'Brisbane', region: 'Queensland' });
    expect(indexed.lookup('1.2.3.4')).toEqual({ country: 'Japan', city: null, region: null });
    expect(indexed.lookup('1.2.3.7')).toEqual({ country: 'Germany', city: null, region: null });
    expect(indexed.lookup('81.2.69.160')).toEqual({ country: 'United Kingdom', city: 'London', region: null });
    expect(indexed.lookup('216.160.83.60')).toEqual({ country: 'United States', city: 'Milton', region: 'Washington' });
    expect(indexed.lookup('2c0f:ff00::1')?.city).toBe(locationFromRecord({ city: names(`${'Ŵ'.repeat(199)}😀`) })?.city);
    expect(indexed.lookup('2c0f:ff00::81')).toBeNull();
    expect(indexed.lookup('2001:218::1')).toBeNull();
  });

  it('follows the IPv4 aliases (::ffff:0:0/96, 2002::/16) to the same places', () => {
    for (const ip of ['1.2.3.4', '81.2.69.160', '89.160.20.115', '1.9.9.9']) {
      const place = indexed.lookup(ip);
      expect(place).not.toBeNull();
      const { value } = parseBig(ip);
      expect(indexed.lookup(`::ffff:${ip}`)).toEqual(place);
      expect(indexed.lookup(v6Text((0x2002n << 112n) | (value << 80n) | 0x1234n))).toEqual(place);
    }
  });

  it('writes an aliased subtree once and redirects the alias at the same depth to it', async () => {
    const dir = tmpDir();
    const { built, index } = await ensureRangeIndex(file, dir, placeMappingFingerprint(), async (identity, indexFile) =>
      writeRangeIndex(identity, indexFile, locationFromRecord),
    );
    index.close();
    expect(built?.redirects).toBe(1); // ::ffff:0:0/96; 2002::/16 reaches the subtree at another depth
  });
});

describe('lookup index of a DB-IP layout IPv4 file', () => {
  it('answers every probe as maxmind does, IPv4 files before IPv6 files', async () => {
    const dir = tmpDir();
    const v4 = path.join(dir, 'dbip-v4.mmdb');
    const v6 = path.join(dir, 'city-v6.mmdb');
    writeMmdb(v4, { ipVersion: 4, recordSize: 24, databaseType: 'DBIP-City-Lite' }, dbipNetworks);
    writeMmdb(v6, { ipVersion: 6, recordSize: 28, databaseType: 'GeoIP2-City' }, maxMindNetworks, v4Aliases);
    const indexed = (await openMmdbSource([v4, v6], recordingLogger(), { indexDir: tmpDir() }))!;
    const inMemory = (await openMmdbSource([v4, v6], recordingLogger(), { indexDir: null }))!;
    expectSameAnswers(indexed, inMemory, [...probeAddresses(dbipNetworks, 4), ...probeAddresses(maxMindNetworks, 6)]);
    expect(indexed.lookup('8.8.8.8')).toEqual({ country: 'United States', city: 'Mountain View', region: 'California' });
    expect(indexed.lookup('200.1.1.1')).toEqual({ country: 'Brazil', city: 'São Paulo', region: 'São Paulo' });
    // No place in the DB-IP file ('ZZ'): the IPv6 file's IPv4 tree answers.
    expect(indexed.lookup('1.2.3.4')).toEqual({ country: 'Japan', city: null, region: null });
  });
});

describe('index files', () => {
  function dbipFile(): string {
    const file = path.join(tmpDir(), 'dbip.mmdb');
    writeMmdb(file, { ipVersion: 4, recordSize: 24, databaseType: 'DBIP-City-Lite' }, dbipNetworks);
    return file;
  }

  it('is built once and reused while the MMDB file is unchanged', async () => {
    const file = dbipFile();
    const dir = tmpDir();
    const first = recordingLogger();
    (await openMmdbSource([file], first, { indexDir: dir }))!.close();
    expect(first.infos.filter((m) => /lookup index built/.test(m))).toHaveLength(1);
    const second = recordingLogger();
    const source = (await openMmdbSource([file], second, { indexDir: dir }))!;
    expect(second.infos).toEqual([]);
    expect(source.lookup('8.8.8.8')?.city).toBe('Mountain View');
    source.close();
    expect(fs.readdirSync(dir)).toHaveLength(1);
  });

  it('is rebuilt when the MMDB file is replaced', async () => {
    const file = dbipFile();
    const dir = tmpDir();
    (await openMmdbSource([file], recordingLogger(), { indexDir: dir }))!.close();
    writeMmdb(file, { ipVersion: 4, recordSize: 28, databaseType: 'DBIP-City-Lite' }, [['8.0.0.0', 8, { city: 'Elsewhere', country_code: 'CA', state1: '' }]]);
    const log = recordingLogger();
    const source = (await openMmdbSource([file], log, { indexDir: dir }))!;
    expect(log.infos.filter((m) => /lookup index built/.test(m))).toHaveLength(1);
    expect(source.lookup('8.8.8.8')).toEqual({ country: 'Canada', city: 'Elsewhere', region: null });
    source.close();
  });

  it('is rebuilt when the index file is damaged', async () => {
    const file = dbipFile();
    const dir = tmpDir();
    (await openMmdbSource([file], recordingLogger(), { indexDir: dir }))!.close();
    const [indexName] = fs.readdirSync(dir);
    const indexPath = path.join(dir, indexName!);
    fs.truncateSync(indexPath, fs.statSync(indexPath).size - 10);
    const log = recordingLogger();
    const source = (await openMmdbSource([file], log, { indexDir: dir }))!;
    expect(log.warnings).toEqual([]);
    expect(log.infos.filter((m) => /lookup index built/.test(m))).toHaveLength(1);
    expect(source.lookup('8.8.8.8')?.city).toBe('Mountain View');
    source.close();
  });

  it('falls back to reading the MMDB into memory when no index can be written', async () => {
    const file = dbipFile();
    const notADir = path.join(tmpDir(), 'file');
    fs.writeFileSync(notADir, '');
    const log = recordingLogger();
    const source = (await openMmdbSource([file], log, { indexDir: path.join(notADir, 'index') }))!;
    expect(log.warnings.some((w) => /keeping this MMDB file in memory/.test(w))).toBe(true);
    expect(source.lookup('8.8.8.8')).toEqual({ country: 'United States', city: 'Mountain View', region: 'California' });
  });

  it('skips a file that is not an MMDB, as before, without writing an index', async () => {
    const dir = tmpDir();
    const log = recordingLogger();
    expect(await openMmdbSource([path.resolve('package.json')], log, { indexDir: dir })).toBeNull();
    expect(log.warnings.some((w) => /could not be opened/.test(w))).toBe(true);
    expect(log.infos).toEqual([]);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
