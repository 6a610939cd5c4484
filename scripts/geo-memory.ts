/**
 * Where a production server's memory goes, idle and under signup load: starts the built server
 * (`node --expose-gc dist/server/main.js`) on a fresh SQLite database and reports
 * process.memoryUsage(), /proc/PID/status, /proc/PID/smaps_rollup and the resident size of each
 * large mapping (the node binary, native addons, geolocation files...).
 *
 *   npm run build && npx tsx scripts/geo-memory.ts
 *
 * Options (env): GEO_MEMORY_ROOT (project to run, default .), GEO_MEMORY_SIGNUPS (20000 per load
 * phase), GEO_MEMORY_CONNECTIONS (32). Two load phases: signups from the loopback address (as
 * `npm run bench:signup` sends them: never geolocated), then signups whose X-Forwarded-For holds a
 * random public IPv4 or IPv6 address (TRUST_PROXY=127.0.0.1), each geolocated.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { isPublicIp } from '../src/server/geolocation/ip.js';

const root = path.resolve(process.env.GEO_MEMORY_ROOT ?? '.');
const signups = Number(process.env.GEO_MEMORY_SIGNUPS ?? 20_000);
const connections = Number(process.env.GEO_MEMORY_CONNECTIONS ?? 32);
const port = 4470 + Math.floor(Math.random() * 20);

// Loaded into the server with --require: on SIGUSR2 it collects garbage (or not) and writes its
// own view of its memory to a file.
const PRELOAD = `
const fs = require('node:fs');
const v8 = require('node:v8');
process.on('SIGUSR2', () => {
  const gcFirst = fs.existsSync(process.env.GEO_MEMORY_REPORT + '.gc');
  if (gcFirst && global.gc) { global.gc(); global.gc(); }
  const heap = v8.getHeapStatistics();
  const report = { memory: process.memoryUsage(), heap: { total_physical_size: heap.total_physical_size, malloced_memory: heap.malloced_memory, external_memory: heap.external_memory } };
  fs.writeFileSync(process.env.GEO_MEMORY_REPORT + '.tmp', JSON.stringify(report));
  fs.renameSync(process.env.GEO_MEMORY_REPORT + '.tmp', process.env.GEO_MEMORY_REPORT);
});
`;

const MB = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

interface Snapshot {
  label: string;
  memory: NodeJS.MemoryUsage;
  status: Record<string, number>;
  rollup: Record<string, number>;
  mappings: [string, number][];
}

function procKb(file: string, keys: RegExp): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^(\w+):\s+(\d+) kB/.exec(line);
    if (m && keys.test(m[1]!)) out[m[1]!] = Number(m[2]) * 1024;
  }
  return out;
}

/** Resident bytes per mapped file (and [heap]/[anon] for the rest), largest first. */
function mappings(pid: number): [string, number][] {
  const sizes = new Map<string, number>();
  let current = '[anon]';
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      current = head[1] ? head[1] : '[anon]';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) sizes.set(current, (sizes.get(current) ?? 0) + Number(rss[1]) * 1024);
  }
  return [...sizes].sort((a, b) => b[1] - a[1]);
}

async function snapshot(child: ChildProcess, report: string, label: string, gc: boolean): Promise<Snapshot> {
  fs.rmSync(report, { force: true });
  if (gc) fs.writeFileSync(`${report}.gc`, '');
  else fs.rmSync(`${report}.gc`, { force: true });
  child.kill('SIGUSR2');
  for (let i = 0; i < 200 && !fs.existsSync(report); i++) await new Promise((r) => setTimeout(r, 25));
  const { memory } = JSON.parse(fs.readFileSync(report, 'utf8')) as { memory: NodeJS.MemoryUsage };
  const pid = child.pid!;
  return {
    label,
    memory,
    status: procKb(`/proc/${pid}/status`, /^(VmRSS|VmHWM|RssAnon|RssFile|RssShmem)$/),
    rollup: procKb(`/proc/${pid}/smaps_rollup`, /^(Rss|Pss|Shared_Clean|Shared_Dirty|Private_Clean|Private_Dirty|Anonymous)$/),
    mappings: mappings(pid),
  };
}

function startServer(dataDir: string, report: string, preload: string): Promise<{ child: ChildProcess; startMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--expose-gc', '--require', preload, 'dist/server/main.js'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: `file:${path.join(dataDir, 'memory.db')}`,
      AUTH_SECRET_KEY_FILE: path.join(dataDir, 'auth-secret.key'),
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      TRUST_PROXY: '127.0.0.1',
      SIGNUP_RATE_LIMIT_MAX: '100000000',
      // No dependence on the network's DNS (its signups are at example.com, which has a null MX).
      SIGNUP_CHECK_MX: 'off',
      GEO_MEMORY_REPORT: report,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 120_000;
    const poll = () => {
      http
        .get({ host: '127.0.0.1', port, path: '/healthz' }, (res) => {
          res.resume();
          if (res.statusCode === 200) resolve({ child, startMs: Math.round(performance.now() - started) });
          else setTimeout(poll, 50);
        })
        .on('error', () => (Date.now() > deadline ? reject(new Error('server did not start')) : setTimeout(poll, 50)));
    };
    poll();
  });
}

function randomPublicAddress(): string {
  for (;;) {
    const b = crypto.randomBytes(16);
    const ip =
      b[15]! % 2 === 0
        ? `${b[0]}.${b[1]}.${b[2]}.${b[3]}`
        : // 2000::/3, the global unicast space
          Array.from({ length: 8 }, (_, i) => (i === 0 ? 0x2000 | (b.readUInt16BE(0) & 0x1fff) : b.readUInt16BE(2 * i)).toString(16)).join(':');
    if (isPublicIp(ip)) return ip;
  }
}

/** Sends `count` signups; samples the server's VmRSS meanwhile and returns its peak. */
async function load(pid: number, count: number, forwarded: boolean): Promise<{ peakRss: number; statuses: Record<number, number>; seconds: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const statuses: Record<number, number> = {};
  let peakRss = 0;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, procKb(`/proc/${pid}/status`, /^VmRSS$/).VmRSS ?? 0);
  }, 20);
  const run = Date.now().toString(36);
  let next = 0;
  const started = performance.now();
  const one = () =>
    new Promise<void>((resolve) => {
      const body = JSON.stringify({ email: `memory-${run}-${next++}@example.com` });
      const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
      if (forwarded) headers['x-forwarded-for'] = randomPublicAddress();
      const req = http.request({ host: '127.0.0.1', port, path: '/api/waitlist', method: 'POST', agent, headers }, (res) => {
        res.resume();
        res.on('end', () => {
          statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
          resolve();
        });
      });
      req.on('error', () => {
        statuses[0] = (statuses[0] ?? 0) + 1;
        resolve();
      });
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < count) await one();
    }),
  );
  clearInterval(sampler);
  agent.destroy();
  return { peakRss, statuses, seconds: Math.round((performance.now() - started) / 100) / 10 };
}

function row(s: Snapshot) {
  return {
    phase: s.label,
    rss: MB(s.memory.rss),
    heapTotal: MB(s.memory.heapTotal),
    heapUsed: MB(s.memory.heapUsed),
    external: MB(s.memory.external),
    arrayBuffers: MB(s.memory.arrayBuffers),
    RssAnon: MB(s.status.RssAnon ?? 0),
    RssFile: MB(s.status.RssFile ?? 0),
    Pss: MB(s.rollup.Pss ?? 0),
    Shared_Clean: MB(s.rollup.Shared_Clean ?? 0),
    Private_Dirty: MB(s.rollup.Private_Dirty ?? 0),
    VmHWM: MB(s.status.VmHWM ?? 0),
  };
}

if (!fs.existsSync(path.join(root, 'dist/server/main.js'))) {
  console.error(`No build in ${root}: run \`npm run build\` first.`);
  process.exit(1);
}
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'geo-memory-'));
const preload = path.join(work, 'preload.cjs');
fs.writeFileSync(preload, PRELOAD);
const report = path.join(work, 'report.json');
const { child, startMs } = await startServer(work, report, preload);
try {
  const snapshots: Snapshot[] = [];
  await new Promise((r) => setTimeout(r, 2000));
  snapshots.push(await snapshot(child, report, 'idle', false));
  snapshots.push(await snapshot(child, report, 'idle, after gc', true));
  const loopback = await load(child.pid!, signups, false);
  snapshots.push(await snapshot(child, report, `after ${signups} loopback signups`, false));
  const forwarded = await load(child.pid!, signups, true);
  snapshots.push(await snapshot(child, report, `after ${signups} geolocated signups`, false));
  snapshots.push(await snapshot(child, report, 'after load, after gc', true));

  console.log(`server ${root}: listening ${startMs} ms after spawn; ${connections} connections`);
  console.log(`loopback signups: ${JSON.stringify(loopback.statuses)} in ${loopback.seconds}s, peak VmRSS ${MB(loopback.peakRss)} MB`);
  console.log(`geolocated signups: ${JSON.stringify(forwarded.statuses)} in ${forwarded.seconds}s, peak VmRSS ${MB(forwarded.peakRss)} MB`);
  console.log('MB (memoryUsage: rss heapTotal heapUsed external arrayBuffers; /proc status and smaps_rollup):');
  console.table(snapshots.map(row));
  const last = snapshots[snapshots.length - 1]!;
  console.log(`largest resident mappings after load (MB):`);
  console.table(last.mappings.slice(0, 12).map(([name, bytes]) => ({ mapping: name, rss: MB(bytes) })));
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  fs.rmSync(work, { recursive: true, force: true });
}
