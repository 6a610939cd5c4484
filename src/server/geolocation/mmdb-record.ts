import crypto from 'node:crypto';
import { cleanPlaceName, countryNameFromCode, nonEmptyLocation, type GeoLocation } from './location.js';

// What a record of an MMDB file says about a place. Lookup indexes (range-index.ts) store the
// output of locationFromRecord, so it lives apart from the readers: the worker thread that builds
// an index (index-worker.ts) imports this module and nothing that opens files at start.

type AnyRecord = Record<string, unknown>;

const isRecord = (v: unknown): v is AnyRecord => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `names.en` of a MaxMind GeoIP2/GeoLite2 place object. */
function englishName(place: unknown): string | null {
  if (!isRecord(place) || !isRecord(place.names)) return null;
  return cleanPlaceName(place.names.en);
}

/**
 * Reads either record shape (lookup indexes store its output: see placeMappingFingerprint):
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

let fingerprint: string | null = null;

/**
 * A digest of what locationFromRecord makes of a fixed set of records (every two-letter country
 * code, both layouts, control characters, over-long names). An index stores places, not records,
 * so a change of that mapping, or of the country names of Node's ICU data, must rebuild it.
 */
export function placeMappingFingerprint(): string {
  if (fingerprint) return fingerprint;
  const probes: unknown[] = [];
  for (let a = 65; a <= 90; a++) {
    for (let b = 65; b <= 90; b++) probes.push({ country_code: String.fromCharCode(a, b), city: 'C', state1: 'R' });
  }
  probes.push(
    { country_code: ' us ', city: ' Mountain\u0000 View\u2028 ', state1: 'x'.repeat(300), state2: 'y' },
    { country_code: 'USA', city: 42, state1: null },
    { country_code: 'gb', city: '', state1: '  ' },
    {
      city: { names: { en: ' London ', de: 'London' } },
      country: { iso_code: 'GB', names: { en: 'United Kingdom' } },
      subdivisions: [{ iso_code: 'ENG', names: { en: 'England' } }, { names: { en: 'Other' } }],
    },
    { registered_country: { iso_code: 'DE' } },
    { country: { iso_code: 'FR' }, subdivisions: [] },
    { country: { names: { en: '\u0007' } }, city: { names: {} }, subdivisions: [null] },
    { city: { names: { en: 'A' } } },
    'text',
    null,
    [],
  );
  fingerprint = crypto.createHash('sha256').update(JSON.stringify(probes.map(locationFromRecord))).digest('hex').slice(0, 16);
  return fingerprint;
}
