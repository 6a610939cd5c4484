import type { AppConfig } from '../config.js';
import { createHttpSource } from './http.js';
import { isPublicIp, normalizeIp } from './ip.js';
import type { GeoLocation, GeoLogger } from './location.js';
import { openMmdbSource, type MmdbOptions } from './mmdb.js';

export type { GeoLocation, GeoLogger } from './location.js';

/** Turns a client address into a place. Resolves null when the place is unknown. */
export interface Geolocator {
  lookup(ip: string): Promise<GeoLocation | null>;
}

/**
 * The configured geolocator: the HTTP service first when GEOLOCATION_URL is set, then the MMDB
 * files. Private, loopback and other non-public addresses are never looked up (and never sent to a
 * third party). Lookup never throws: every failure is logged and ends in null.
 * MMDB files are opened here, once; missing files are a warning, not a crash. Each is read through
 * a lookup index on disk (built on first use), not held in memory: see mmdb.ts.
 */
export async function createGeolocator(config: AppConfig['geolocation'], logger: GeoLogger, options: MmdbOptions = {}): Promise<Geolocator> {
  const mmdb = await openMmdbSource(config.mmdbPaths, logger, options);
  const http = config.httpUrl ? createHttpSource(config.httpUrl, config.httpTimeoutMs) : null;
  if (!mmdb && !http) logger.warn({}, 'geolocation: no MMDB file and no GEOLOCATION_URL; locations will be empty');

  return {
    async lookup(rawIp) {
      const ip = normalizeIp(rawIp);
      if (!ip || !isPublicIp(ip)) return null;
      if (http) {
        try {
          const location = await http.lookup(ip);
          if (location) return location;
        } catch (err) {
          logger.warn({ err }, 'geolocation: HTTP service failed; falling back to the MMDB files');
        }
      }
      if (mmdb) {
        try {
          return mmdb.lookup(ip);
        } catch (err) {
          logger.warn({ err }, 'geolocation: MMDB lookup failed');
        }
      }
      return null;
    },
  };
}
