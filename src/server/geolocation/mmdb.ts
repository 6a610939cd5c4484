import fs from 'node:fs';
import net from 'node:net';
import maxmind, { type Reader, type Response } from 'maxmind';
import { cleanPlaceName, countryNameFromCode, nonEmptyLocation, type GeoLocation, type GeoLogger } from './location.js';

/** Offline lookups in one or more MMDB files, opened once. */
export interface MmdbSource {
  lookup(ip: string): GeoLocation | null;
  /** The files that opened, for logs and tests. */
  readonly files: string[];
}

type AnyRecord = Record<string, unknown>;

const isRecord = (v: unknown): v is AnyRecord => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `names.en` of a MaxMind GeoIP2/GeoLite2 place object. */
function englishName(place: unknown): string | null {
  if (!isRecord(place) || !isRecord(place.names)) return null;
  return cleanPlaceName(place.names.en);
}

/**
 * Reads either record shape:
 *  - DB-IP Lite / ip-location-db: `{ country_code: 'US', state1: 'California', city: 'Mountain View' }`
 *  - MaxMind GeoLite2/GeoIP2 City: `{ country: { iso_code, names: { en } }, subdivisions: [{ names }], city: { names } }`
 */
export function locationFromRecord(record: unknown): GeoLocation | null {
  if (!isRecord(record)) return null;
  if (isRecord(record.country) || isRecord(record.registered_country) || Array.isArray(record.subdivisions) || isRecord(record.city)) {
    const country = isRecord(record.country) ? record.country : record.registered_country;
    const firstSubdivision = Array.isArray(record.subdivisions) ? record.subdivisions[0] : undefined;
    return nonEmptyLocation({
      country: englishName(country) ?? (isRecord(country) ? countryNameFromCode(country.iso_code) : null),
      city: englishName(record.city),
      region: englishName(firstSubdivision),
    });
  }
  return nonEmptyLocation({
    country: countryNameFromCode(record.country_code),
    city: cleanPlaceName(record.city),
    region: cleanPlaceName(record.state1),
  });
}

interface OpenReader {
  file: string;
  ipVersion: number;
  reader: Reader<Response>;
}

/**
 * Opens every readable file; a missing or broken file is logged and skipped, never fatal.
 * Returns null when none opened. (maxmind reads each file into memory: the bundled DB-IP pair is
 * about 135 MB, read once at start.)
 */
export async function openMmdbSource(paths: readonly string[], logger: GeoLogger): Promise<MmdbSource | null> {
  const readers: OpenReader[] = [];
  for (const file of paths) {
    if (!fs.existsSync(file)) {
      logger.warn({ file }, 'geolocation: MMDB file not found; continuing without it');
      continue;
    }
    try {
      const reader = await maxmind.open<Response>(file, { watchForUpdates: false });
      readers.push({ file, ipVersion: reader.metadata.ipVersion, reader });
    } catch (err) {
      logger.warn({ file, err }, 'geolocation: MMDB file could not be opened; continuing without it');
    }
  }
  if (readers.length === 0) return null;

  // An IPv6 address must never be asked of an IPv4-only file: the reader would walk the wrong tree
  // and return a made-up place. IPv4 addresses try IPv4 files first, then IPv6 files (GeoLite2
  // files are IPv6 trees holding IPv4 too).
  const v4Order = [...readers.filter((r) => r.ipVersion === 4), ...readers.filter((r) => r.ipVersion === 6)];
  const v6Order = readers.filter((r) => r.ipVersion === 6);

  return {
    files: readers.map((r) => r.file),
    lookup(ip) {
      const version = net.isIP(ip);
      const candidates = version === 4 ? v4Order : version === 6 ? v6Order : [];
      for (const { reader } of candidates) {
        const location = locationFromRecord(reader.get(ip));
        if (location) return location;
      }
      return null;
    },
  };
}
