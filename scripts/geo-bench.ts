/**
 * Geolocation lookups, both ways the MMDB files can be read: through the on-disk lookup index
 * (the default) and held in memory by maxmind (`indexDir: null`, what every server did before).
 * Each runs in its own process and reports the time to open the files, microseconds per lookup
 * over random public IPv4 and IPv6 addresses (the same addresses for both), and the process's
 * memory after them; the answers of both are compared.
 *
 *   npx tsx scripts/geo-bench.ts                 # the configured files (GEOIP_MMDB_PATH or the bundled DB-IP Lite)
 *   GEO_BENCH_LOOKUPS=200000 npx tsx scripts/geo-bench.ts
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/server/config.js';
import { isPublicIp } from '../src/server/geolocation/ip.js';
import { openMmdbSource } from '../src/server/geolocation/mmdb.js';

const lookups = Number(process.env.GEO_BENCH_LOOKUPS ?? 100_000);
const MB = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

/** Deterministic public addresses, half IPv4, half in 2000::/3. */
function addresses(count: number): string[] {
  let state = crypto.createHash('sha256').update('geo-bench').digest();
  let used = 0;
  const bytes = (n: number) => {
    if (used + n > state.length) {
      state = crypto.createHash('sha256').update(state).digest();
      used = 0;
    }
    used += n;
    return state.subarray(used - n, used);
  };
  const out: string[] = [];
  while (out.length < count) {
    const ip =
      out.length % 2 === 0
        ? [...bytes(4)].join('.')
        : Array.from({ length: 8 }, (_, i) => {
            const group = bytes(2).readUInt16BE(0);
            return (i === 0 ? 0x2000 | (group & 0x1fff) : group).toString(16);
          }).join(':');
    if (isPublicIp(ip)) out.push(ip);
  }
  return out;
}

function rollup(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of fs.readFileSync('/proc/self/status', 'utf8').split('\n')) {
    const m = /^(VmRSS|RssAnon|RssFile):\s+(\d+) kB/.exec(line);
    if (m) out[m[1]!] = Number(m[2]) * 1024;
  }
  return out;
}

interface ChildResult {
  mode: string;
  openMs: number;
  firstPassUs: number;
  secondPassUs: number;
  secondPassCpuUs: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  rssAnonAfterMb: number;
  rssFileAfterMb: number;
  heapUsedAfterMb: number;
  arrayBuffersAfterMb: number;
  answers: string;
  found: number;
}

async function child(mode: 'index' | 'memory'): Promise<ChildResult> {
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
  const paths = loadConfig({ GEOIP_MMDB_PATH: process.env.GEOIP_MMDB_PATH }).geolocation.mmdbPaths;
  const ips = addresses(lookups);
  const silent = { warn: console.warn, info: () => {}, debug: () => {} };
  gc();
  const before = process.memoryUsage().rss;
  const opened = performance.now();
  const source = await openMmdbSource(paths, silent, mode === 'memory' ? { indexDir: null } : {});
  const openMs = Math.round(performance.now() - opened);
  if (!source) throw new Error('no MMDB file opened');
  // Wall time, and CPU time (user + system), which a busy shared machine disturbs less.
  const timed = () => {
    const started = performance.now();
    const cpu = process.cpuUsage();
    for (const ip of ips) source.lookup(ip);
    const used = process.cpuUsage(cpu);
    return { wall: ((performance.now() - started) * 1000) / ips.length, cpu: (used.user + used.system) / ips.length };
  };
  const first = timed();
  const second = timed();
  const digest = crypto.createHash('sha256');
  let found = 0;
  for (const ip of ips) {
    const place = source.lookup(ip);
    if (place) found++;
    digest.update(JSON.stringify(place));
  }
  gc();
  const memory = process.memoryUsage();
  const status = rollup();
  return {
    mode,
    openMs,
    firstPassUs: Math.round(first.wall * 100) / 100,
    secondPassUs: Math.round(second.wall * 100) / 100,
    secondPassCpuUs: Math.round(second.cpu * 100) / 100,
    rssBeforeMb: MB(before),
    rssAfterMb: MB(memory.rss),
    rssAnonAfterMb: MB(status.RssAnon ?? 0),
    rssFileAfterMb: MB(status.RssFile ?? 0),
    heapUsedAfterMb: MB(memory.heapUsed),
    arrayBuffersAfterMb: MB(memory.arrayBuffers),
    answers: digest.digest('hex').slice(0, 16),
    found,
  };
}

const asChild = process.argv[2];
if (asChild === 'index' || asChild === 'memory') {
  process.stdout.write(JSON.stringify(await child(asChild)));
} else {
  const self = fileURLToPath(import.meta.url);
  const run = (mode: string) =>
    JSON.parse(execFileSync(process.execPath, [...process.execArgv, '--expose-gc', self, mode], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })) as ChildResult;
  // The index first: on a clean checkout its first run builds it (that run's openMs says how long).
  const results = [run('index'), run('memory')];
  console.log(`${lookups} lookups (half IPv4, half IPv6 in 2000::/3), two timed passes each; MB after the lookups and a GC`);
  console.table(results);
  if (results[0]!.answers !== results[1]!.answers) {
    console.error('The two ways gave different answers.');
    process.exit(1);
  }
}
