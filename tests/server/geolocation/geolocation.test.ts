import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/server/config.js';
import { createGeolocator, type Geolocator, type GeoLogger } from '../../../src/server/geolocation/geolocator.js';
import { ipv6Words, isPublicIp, NON_PUBLIC_PREFIXES, normalizeIp } from '../../../src/server/geolocation/ip.js';
import { countryNameFromCode } from '../../../src/server/geolocation/location.js';
import { COUNTRY_NAMES, COUNTRY_NAMES_ICU } from '../../../src/server/geolocation/country-names.js';
import { icuCountryNames } from '../../../scripts/country-names.js';
import { locationFromRecord } from '../../../src/server/geolocation/mmdb.js';
import { SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { prng } from '../../../scripts/bench/lib/admin-data.js';
import { createTestApp } from '../../support/test-app.js';

function recordingLogger(): GeoLogger & { warnings: string[] } {
  const warnings: string[] = [];
  return {
    warnings,
    warn: (_obj, msg) => void warnings.push(msg ?? ''),
    info: () => {},
    debug: () => {},
  };
}

const bundled = loadConfig({}).geolocation;
const bundledV4 = bundled.mmdbPaths.find((p) => p.endsWith('ipv4.mmdb'))!;

describe('IP normalisation', () => {
  it.each([
    ['::ffff:1.2.3.4', '1.2.3.4'],
    ['::FFFF:8.8.8.8', '8.8.8.8'],
    ['::ffff:0808:0808', '8.8.8.8'],
    [' 8.8.8.8 ', '8.8.8.8'],
    ['2001:4860:4860::8888', '2001:4860:4860::8888'],
    ['2001:4860:4860::8888'.toUpperCase(), '2001:4860:4860::8888'],
    ['[::1]', '::1'],
    ['<script>', null],
    ['', null],
    [undefined, null],
  ])('%j -> %j', (raw, expected) => {
    expect(normalizeIp(raw)).toBe(expected);
  });

  it.each(['127.0.0.1', '10.0.0.1', '192.168.1.1', '172.16.5.4', '169.254.1.1', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', 'not-an-ip'])(
    '%s is not public',
    (ip) => expect(isPublicIp(ip)).toBe(false),
  );

  it.each(['8.8.8.8', '81.2.69.160', '2001:4860:4860::8888'])('%s is public', (ip) => expect(isPublicIp(ip)).toBe(true));

  it("agrees with node's BlockList of the same ranges on every range edge and 200,000 random addresses", () => {
    const { ipv4: v4Ranges, ipv6: v6Ranges } = NON_PUBLIC_PREFIXES;
    const oracle = new net.BlockList();
    for (const [prefix, bits] of v4Ranges) oracle.addSubnet(prefix, bits, 'ipv4');
    for (const [prefix, bits] of v6Ranges) oracle.addSubnet(prefix, bits, 'ipv6');
    const expected = (ip: string) => !oracle.check(ip, net.isIPv4(ip) ? 'ipv4' : 'ipv6');

    const v4 = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
    const v6 = (groups: number[]) => groups.map((g) => g.toString(16)).join(':');
    const addresses: string[] = [];
    // Each range's first and last address and their neighbours.
    for (const [prefix, bits] of v4Ranges) {
      const base = prefix.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
      const end = base + 2 ** (32 - bits) - 1;
      for (const n of [base - 1, base, base + 1, end - 1, end, end + 1]) if (n >= 0 && n < 2 ** 32) addresses.push(v4(n));
    }
    for (const [prefix, bits] of v6Ranges) {
      const words = new Uint32Array(4);
      ipv6Words(prefix, words);
      const first = [...words].flatMap((w) => [w >>> 16, w & 0xffff]);
      const last = first.map((g, i) => (16 * (i + 1) <= bits ? g : 16 * i >= bits ? 0xffff : g | (0xffff >>> (bits - 16 * i))));
      const after = [...last];
      for (let i = 7; i >= 0; i--) {
        if (after[i]! < 0xffff) {
          after[i]! += 1;
          break;
        }
        after[i] = 0;
      }
      addresses.push(v6(first), v6(last), v6(after));
    }
    const random = prng(11);
    const below = (n: number) => Math.floor(random() * n);
    for (let i = 0; i < 100_000; i++) addresses.push(v4(below(2 ** 32)));
    // IPv6 around the listed ranges and elsewhere, written out in full or with a '::'.
    const heads = [[0], [1], [0x100], [0x2001], [0x2001, 0xdb8], [0xfc00], [0xfd12], [0xfe80], [0xfebf], [0xfec0], [0xff00], [0x2a00]];
    for (let i = 0; i < 100_000; i++) {
      const head = heads[i % heads.length]!;
      if (i % 3 === 0) addresses.push(`${v6(head)}::${below(65536).toString(16)}`);
      else addresses.push(v6([...head, ...Array.from({ length: 8 - head.length }, () => below(65536))]));
    }

    expect(addresses.every((ip) => net.isIP(ip) !== 0)).toBe(true);
    expect(addresses.filter((ip) => isPublicIp(ip) !== expected(ip))).toEqual([]);
  });
});

describe('MMDB records', () => {
  it('reads a DB-IP Lite record, naming the country in English', () => {
    expect(locationFromRecord({ city: 'Mountain View', country_code: 'US', state1: 'California', state2: '' })).toEqual({
      country: 'United States',
      city: 'Mountain View',
      region: 'California',
    });
    expect(locationFromRecord({ city: '', country_code: 'GB', state1: '' })).toEqual({ country: 'United Kingdom', city: null, region: null });
    expect(locationFromRecord({ city: '', country_code: 'ZZ', state1: '' })).toBeNull();
  });

  it('reads a MaxMind GeoLite2-City record', () => {
    expect(
      locationFromRecord({
        city: { names: { en: 'London', de: 'London' } },
        country: { iso_code: 'GB', names: { en: 'United Kingdom' } },
        subdivisions: [{ iso_code: 'ENG', names: { en: 'England' } }],
      }),
    ).toEqual({ country: 'United Kingdom', city: 'London', region: 'England' });
    expect(locationFromRecord({ registered_country: { iso_code: 'DE' } })).toEqual({ country: 'Germany', city: null, region: null });
  });

  it('maps country codes to English names', () => {
    expect(countryNameFromCode('us')).toBe('United States');
    expect(countryNameFromCode('QQ')).toBeNull();
    expect(countryNameFromCode('USA')).toBeNull();
    expect(countryNameFromCode(42)).toBeNull();
    expect(countryNameFromCode('ZZ')).toBeNull();
    expect(countryNameFromCode(' gb ')).toBe('United Kingdom');
  });

  it('names every code as the ICU the table was made from does (scripts/country-names.ts regenerates it)', () => {
    const table = Object.entries(COUNTRY_NAMES);
    expect(table.length).toBeGreaterThan(249); // every ISO 3166-1 country, plus ICU's other regions
    for (const [code, name] of table) expect(countryNameFromCode(code)).toBe(name);
    const icu = icuCountryNames();
    if (process.versions.icu === COUNTRY_NAMES_ICU) {
      expect(table).toEqual(icu);
    } else {
      // Another Node's ICU may word a name differently, but still names every code of the table.
      const named = new Set(icu.map(([code]) => code));
      expect(table.filter(([code]) => !named.has(code))).toEqual([]);
    }
  });
});

describe('bundled DB-IP Lite MMDB', () => {
  let geo: Geolocator;
  const log = recordingLogger();
  beforeAll(async () => {
    geo = await createGeolocator({ ...bundled, httpUrl: null }, log);
  });

  it('opens without warnings', () => expect(log.warnings).toEqual([]));

  it('places 8.8.8.8 in the United States', async () => {
    const location = await geo.lookup('8.8.8.8');
    expect(location?.country).toBe('United States');
  });

  it('places an IPv4-mapped address like the plain one', async () => {
    expect(await geo.lookup('::ffff:8.8.8.8')).toEqual(await geo.lookup('8.8.8.8'));
  });

  it('resolves a public IPv6 address', async () => {
    const location = await geo.lookup('2001:4860:4860::8888');
    expect(location).not.toBeNull();
    expect(location?.country).toMatch(/^[A-Z][A-Za-z .,'()-]+$/);
    expect(location?.country).not.toMatch(/^[A-Z]{2}$/);
  });

  it.each(['127.0.0.1', '10.0.0.1', '::1', 'garbage'])('gives null for %s', async (ip) => {
    expect(await geo.lookup(ip)).toBeNull();
  });
});

describe('HTTP geolocation service', () => {
  let server: http.Server;
  let base = '';
  const asked: string[] = [];
  let delayMs = 0;
  let reply: (ip: string) => { status: number; body: string } = (ip) => ({
    status: 200,
    body: JSON.stringify({ ip, country_name: 'Testland', city: 'Test City', region: 'Test Region' }),
  });

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const ip = decodeURIComponent((req.url ?? '').split('/')[2] ?? '');
      asked.push(ip);
      const answer = reply(ip);
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(answer.body);
      }, delayMs);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('is used first, with the address substituted and encoded', async () => {
    delayMs = 0;
    const geo = await createGeolocator({ mmdbPaths: [], httpUrl: `${base}/json/{ip}`, httpTimeoutMs: 1000 }, recordingLogger());
    expect(await geo.lookup('8.8.8.8')).toEqual({ country: 'Testland', city: 'Test City', region: 'Test Region' });
    expect(await geo.lookup('2001:4860:4860::8888')).toEqual({ country: 'Testland', city: 'Test City', region: 'Test Region' });
    expect(asked.slice(-2)).toEqual(['8.8.8.8', '2001:4860:4860::8888']);
  });

  it('is never asked about private addresses', async () => {
    const before = asked.length;
    const geo = await createGeolocator({ mmdbPaths: [], httpUrl: `${base}/json/{ip}`, httpTimeoutMs: 1000 }, recordingLogger());
    expect(await geo.lookup('192.168.0.10')).toBeNull();
    expect(asked.length).toBe(before);
  });

  it('falls back to the MMDB when the service is slower than the timeout', async () => {
    delayMs = 2000;
    const log = recordingLogger();
    const geo = await createGeolocator({ mmdbPaths: [bundledV4], httpUrl: `${base}/json/{ip}`, httpTimeoutMs: 150 }, log);
    // The service answers after 2 s; the MMDB answer plus the timeout warning show it was not awaited.
    const location = await geo.lookup('8.8.8.8');
    expect(location?.country).toBe('United States');
    expect(log.warnings.some((w) => /HTTP service failed/.test(w))).toBe(true);
    delayMs = 0;
  });

  it('falls back on an error status or a non-JSON answer, and gives null with nothing to fall back to', async () => {
    const geo = await createGeolocator({ mmdbPaths: [], httpUrl: `${base}/json/{ip}`, httpTimeoutMs: 1000 }, recordingLogger());
    reply = () => ({ status: 503, body: '{}' });
    expect(await geo.lookup('8.8.8.8')).toBeNull();
    reply = () => ({ status: 200, body: '<html>' });
    expect(await geo.lookup('8.8.8.8')).toBeNull();
    reply = () => ({ status: 200, body: JSON.stringify({ error: true, reason: 'Reserved IP Address' }) });
    expect(await geo.lookup('8.8.8.8')).toBeNull();
  });

  it('falls back when nothing listens at the URL', async () => {
    const geo = await createGeolocator(
      { mmdbPaths: [bundledV4], httpUrl: 'http://127.0.0.1:9/json/{ip}', httpTimeoutMs: 500 },
      recordingLogger(),
    );
    expect((await geo.lookup('8.8.8.8'))?.country).toBe('United States');
  });
});

describe('missing MMDB files', () => {
  it('warns at start and answers null without crashing', async () => {
    const log = recordingLogger();
    const geo = await createGeolocator(
      { mmdbPaths: [path.join('/nonexistent', 'nope.mmdb')], httpUrl: null, httpTimeoutMs: 100 },
      log,
    );
    expect(log.warnings.length).toBeGreaterThan(0);
    expect(await geo.lookup('8.8.8.8')).toBeNull();
  });

  it('skips a file that is not an MMDB', async () => {
    const log = recordingLogger();
    const geo = await createGeolocator({ mmdbPaths: [path.resolve('package.json')], httpUrl: null, httpTimeoutMs: 100 }, log);
    expect(log.warnings.some((w) => /could not be opened/.test(w))).toBe(true);
    expect(await geo.lookup('8.8.8.8')).toBeNull();
  });
});

describe('the app with its configured geolocator', () => {
  it('stores the bundled MMDB location of the client address on signup', async () => {
    const t = await createTestApp({}, { geolocator: undefined });
    try {
      const res = await t.app.inject({
        method: 'POST',
        url: SIGNUP_PATH,
        payload: { email: 'real@example.com' },
        remoteAddress: '8.8.8.8',
      });
      expect(res.statusCode).toBe(201);
      const row = await t.app.database.db.selectFrom('waitlist').selectAll().executeTakeFirstOrThrow();
      expect(row).toMatchObject({ ip_address: '8.8.8.8', country: 'United States' });
    } finally {
      await t.close();
    }
  });
});
