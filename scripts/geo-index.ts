/**
 * Builds the geolocation lookup index of each configured MMDB file (GEOIP_MMDB_PATH, else the
 * bundled DB-IP Lite pair) in node_modules/.cache/geolocation, so that the server's first start
 * does not have to (it would, once, if the index were missing or stale). `npm run build:server`
 * (so `npm run build` and `npm start`) runs it; an index that is up to date is left as it is.
 *
 *   npm run build:geo
 */
import { loadConfig } from '../src/server/config.js';
import { DEFAULT_INDEX_DIR, openMmdbSource } from '../src/server/geolocation/mmdb.js';

const paths = loadConfig({ GEOIP_MMDB_PATH: process.env.GEOIP_MMDB_PATH }).geolocation.mmdbPaths;
let built = 0;
const line = (msg: string | undefined, obj: object) => `${msg ?? ''} ${JSON.stringify(obj)}`;
const source = await openMmdbSource(paths, {
  warn: (obj, msg) => console.warn(line(msg, obj)),
  info: (obj, msg) => {
    if (msg?.includes('index built')) built++;
    console.log(line(msg, obj));
  },
  debug: () => {},
});
source?.close();
if (!source) {
  // The server starts without geolocation too (it warns); the build should not fail for it.
  console.warn('geolocation: no MMDB file could be opened; nothing indexed');
} else if (built === 0) {
  console.log(`geolocation: lookup indexes in ${DEFAULT_INDEX_DIR} are up to date`);
}
