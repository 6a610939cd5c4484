/**
 * Signup benchmark: the production build (`node dist/server/main.js`) against a floor server
 * (Fastify parsing the JSON, validating the address by JSON schema and answering 201, no database;
 * floor-server.ts), loaded alternately in one run so that both see the same machine: a warm-up of
 * each, then rounds of product, floor, product, floor...
 *
 * Every request is a fresh address from its own random public IPv4/IPv6 client address, sent as
 * X-Forwarded-For to a product started with TRUST_PROXY=1, so the per-IP rate limit and the
 * geolocation lookup work as in production (the floor ignores the header); the product logs at
 * its production level (`info`) to /dev/null. The load comes from a separate plain-Node process
 * writing raw HTTP/1.1 on keep-alive connections (lib/load-generator.ts), one request in flight per
 * connection. Memory is read from /proc/<pid>/status every 100 ms (VmHWM: the peak over the
 * process's life, start-up included; VmRSS: the highest seen under load).
 *
 * After the closed-loop rounds both are loaded in turn at a steady rate (open loop, --rate, 1,000/s
 * for 60 s by default; lib/open-loop.ts): p50/p99/max from when each request was due, the answers
 * over 50 ms. Each server's CPU is read from /proc (utime + stime of all its threads) around every
 * phase and given per answered request, beside the floor's, as a ratio (issue 33); on PostgreSQL
 * the CPU of the scratch database's backends and of the server's background writers is read the
 * same way and printed beside it.
 *
 * The address screening is on, as in production (issue 28): the throwaway list, and the MX check
 * asking a DNS server this script runs on 127.0.0.1 (answering every name with an MX; its answer time
 * is printed in the header); --no-screening turns both off.
 *
 * After the run the product is killed (SIGKILL, as a crash) and every address it acknowledged with
 * 201 must be in the database; the run fails loudly otherwise.
 *
 *   npm run build:server && npm run bench:signup
 *   npm run bench:signup -- --databases sqlite --seconds 5 --rounds 2
 *   BENCH_DATABASE_URLS=postgres://postgres@127.0.0.1:5432/test npm run bench:signup
 *   npm run bench:signup -- --profile       # CPU profile of the product under load, by category
 *
 * Options (flag, or environment variable):
 *   --databases / BENCH_DATABASE_URLS   comma-separated: `sqlite` (or `file:`) for a fresh SQLite file,
 *                                       a postgres:// URL for a scratch database created (and dropped)
 *                                       on that server. Default: sqlite, plus
 *                                       postgres://postgres@127.0.0.1:5432/test if it answers.
 *   --seconds / BENCH_SECONDS (10)      length of each measured phase
 *   --rounds / BENCH_ROUNDS (3)         product/floor pairs
 *   --warmup / BENCH_WARMUP_SECONDS (3) warm-up of each server, not counted
 *   --connections / BENCH_CONNECTIONS (100)
 *   --ipv6-share / BENCH_IPV6_SHARE (0.3) share of client addresses that are IPv6
 *   --log-level / BENCH_LOG_LEVEL (info) the product's LOG_LEVEL
 *   --root / BENCH_ROOT (.)             project root whose dist/server/main.js is run (another build to compare)
 *   --profile / BENCH_PROFILE=1         profile mode: --cpu-prof, one phase of --profile-seconds (10), no floor;
 *                                       the .cpuprofile is kept in bench-results/signup-profile/
 *   --label / BENCH_LABEL               names the build in the header (default: its git commit)
 *   --refused-sign-ins / BENCH_REFUSED_SIGN_INS=1
 *                                       each round also loads the product while one more client loops on
 *                                       refused sign-ins (POST /auth/v1/token, wrong password, one address,
 *                                       one keep-alive connection; lib/refused-sign-ins.ts): rounds of
 *                                       product, product + refused sign-ins, floor, so the two product rows
 *                                       see the same machine; the table gets a row for each.
 *   --rate / BENCH_RATE (1000)          the open-loop phases' signups/s (0: none)
 *   --rate-seconds / BENCH_RATE_SECONDS (60)  their length
 *   --no-screening / BENCH_SCREENING=0  the product without the address screening (the throwaway list and
 *                                       the MX check against the bench's own DNS server are on otherwise)
 *   --email-domains / BENCH_EMAIL_DOMAINS (0)
 *                                       spreads the addresses over N domains (d<i>.example.com), or `fresh`:
 *                                       a domain of its own per signup, so each one asks DNS (the MX
 *                                       check's worst case); 0: all at example.com (one query, then cached)
 *   --json FILE                         also write the results as JSON
 * Other environment variables reach the product unchanged (REDIS_URL=… benchmarks Redis counters).
 * The product's DNS is always the bench's own server: a bench never depends on the network's DNS.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchNumber, parseEmailDomains } from './lib/addresses.js';
import { screeningDns, type ScreeningDns } from './lib/screening-dns.js';
import { transpileFiles } from './lib/compile.js';
import { formatSummary, summarizeCpuProfile, type CpuProfile } from './lib/cpu-profile.js';
import { printOpenTable, printTable, summarize, type OpenRow, type Phase, type PostgresCpu, type Row } from './lib/signup-report.js';
import { databaseSpecs, fmt, gitDescription, numberOption, otherStatuses, prepareTarget, removeWorkDir, startGenerator, type Generator, type Target } from './lib/harness.js';
import { sqliteCommitRate } from './lib/disk.js';
import { refusedSignIns } from './lib/refused-sign-ins.js';
import { cpuPressure, cpuSeconds, fileSystemType, machineDescription, memorySampler, postgresCpuSampler } from './lib/proc.js';
import {
  freePort,
  startServer,
  stopServer,
  storedAddresses,
  type ServerProcess,
} from './lib/servers.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const projectRoot = path.resolve(benchDir, '../..');

const { values: flags } = parseArgs({
  options: {
    databases: { type: 'string' },
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    'ipv6-share': { type: 'string' },
    'log-level': { type: 'string' },
    root: { type: 'string' },
    profile: { type: 'boolean' },
    'profile-seconds': { type: 'string' },
    json: { type: 'string' },
    label: { type: 'string' },
    'refused-sign-ins': { type: 'boolean' },
    'no-screening': { type: 'boolean' },
    rate: { type: 'string' },
    'rate-seconds': { type: 'string' },
    'email-domains': { type: 'string' },
  },
});
const options = {
  seconds: numberOption(flags.seconds, process.env.BENCH_SECONDS, 10),
  rounds: Math.max(1, Math.round(numberOption(flags.rounds, process.env.BENCH_ROUNDS, 3))),
  warmup: numberOption(flags.warmup, process.env.BENCH_WARMUP_SECONDS, 3),
  connections: Math.max(1, Math.round(numberOption(flags.connections, process.env.BENCH_CONNECTIONS, 100))),
  ipv6Share: numberOption(flags['ipv6-share'], process.env.BENCH_IPV6_SHARE, 0.3),
  logLevel: flags['log-level'] ?? process.env.BENCH_LOG_LEVEL ?? 'info',
  root: path.resolve(flags.root ?? process.env.BENCH_ROOT ?? projectRoot),
  profile: flags.profile ?? ['1', 'true'].includes(process.env.BENCH_PROFILE ?? ''),
  profileSeconds: numberOption(flags['profile-seconds'], process.env.BENCH_PROFILE_SECONDS, 10),
  /** Names the build in the header (default: its git commit). */
  label: flags.label ?? process.env.BENCH_LABEL,
  refusedSignIns: flags['refused-sign-ins'] ?? ['1', 'true'].includes(process.env.BENCH_REFUSED_SIGN_INS ?? ''),
  screening: !(flags['no-screening'] ?? ['0', 'false', 'off'].includes(process.env.BENCH_SCREENING ?? '')),
  rate: numberOption(flags.rate, process.env.BENCH_RATE, 1000),
  rateSeconds: numberOption(flags['rate-seconds'], process.env.BENCH_RATE_SECONDS, 60),
  emailDomains: parseEmailDomains(flags['email-domains'] ?? process.env.BENCH_EMAIL_DOMAINS),
};
// The load generator (a child process) reads it from its environment.
process.env.BENCH_EMAIL_DOMAINS = String(options.emailDomains);

const mainJs = path.join(options.root, 'dist/server/main.js');
if (!fs.existsSync(mainJs)) {
  console.error(`${mainJs} not found: run \`npm run build\` (or \`npm run build:server\`) first.`);
  process.exit(1);
}

// ---- the load generator, a plain-Node child process -------------------------------------------

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-bench-'));
const jsDir = transpileFiles(
  benchDir,
  ['floor-server.ts', ...fs.readdirSync(path.join(benchDir, 'lib')).filter((f) => f.endsWith('.ts')).map((f) => `lib/${f}`), '../../src/server/geolocation/ip.ts'],
  path.join(workDir, 'js'),
  projectRoot,
);
const prefix = `bench${randomBytes(4).toString('hex')}`;


// ---- measuring one phase ----------------------------------------------------------------------

/** The client looping on refused sign-ins beside the product's phases (--refused-sign-ins), or null. */
const refused = options.refusedSignIns ? refusedSignIns() : null;

type Sampler = ReturnType<typeof memorySampler>;
type PgSampler = ReturnType<typeof postgresCpuSampler> | null;

/** Runs `load` while reading the server's CPU (and PostgreSQL's) around it. */
async function withCpu<T>(server: ServerProcess, sampler: Sampler, pg: PgSampler, load: () => Promise<T>): Promise<T & { serverCpuSeconds: number; postgres: PostgresCpu | null }> {
  sampler.open();
  pg?.open();
  const cpuBefore = cpuSeconds(server.pid) ?? Number.NaN;
  const result = await load();
  const cpuAfter = cpuSeconds(server.pid) ?? Number.NaN;
  const postgres = pg?.close() ?? null;
  sampler.close();
  return { ...result, serverCpuSeconds: cpuAfter - cpuBefore, postgres };
}

async function phase(generator: Generator, server: ServerProcess, sampler: Sampler, pg: PgSampler, seconds: number, record: boolean, withRefusedSignIns = false): Promise<Phase> {
  if (withRefusedSignIns) refused?.start(server.port);
  const result = await withCpu(server, sampler, pg, () => generator.run(server.port, seconds, record));
  await refused?.stop();
  return result;
}

/** The product, the product beside a client looping on refused sign-ins (--refused-sign-ins), the floor. */
const REFUSED_ROW = 'product + refused sign-ins';

// ---- the product and the floor ----------------------------------------------------------------

function productEnv(databaseUrl: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    HOST: '127.0.0.1',
    TRUST_PROXY: '1',
    LOG_LEVEL: options.logLevel,
    // A key of its own, so the bench never writes secrets/ under the project.
    AUTH_SECRET_KEY: randomBytes(32).toString('base64'),
    // The address screening (issue 28) as in production, its DNS the bench's own server; or off (--no-screening).
    ...(dns ? { SIGNUP_CHECK_MX: 'on', SIGNUP_BLOCK_DISPOSABLE: 'on', DNS_SERVERS: dns.address } : { SIGNUP_CHECK_MX: 'off', SIGNUP_BLOCK_DISPOSABLE: 'off' }),
  };
}

async function startProduct(target: Target, nodeArgs: string[] = []): Promise<ServerProcess> {
  return startServer({ name: `product (${target.label})`, nodeArgs: [...nodeArgs, mainJs], env: productEnv(target.databaseUrl), port: await freePort(), cwd: options.root });
}

async function startFloor(): Promise<ServerProcess> {
  return startServer({ name: 'floor', nodeArgs: [path.join(jsDir, 'floor-server.js')], env: { ...process.env, NODE_ENV: 'production' }, port: await freePort(), cwd: jsDir });
}

/** PostgreSQL's CPU for a scratch database on a local server (its processes visible in /proc), else null. */
function postgresSampler(target: Target): PgSampler {
  if (target.label !== 'postgres') return null;
  const url = new URL(target.databaseUrl);
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(url.hostname)) return null;
  return postgresCpuSampler(decodeURIComponent(url.pathname.slice(1)));
}

/** The SQLite WAL's size now, MB (null: not SQLite): it must not grow without bound under load. */
function walSizeMb(target: Target): number | null {
  if (target.label !== 'sqlite') return null;
  try {
    return fs.statSync(`${target.databaseUrl.replace(/^(file|sqlite):/, '')}-wal`).size / 2 ** 20;
  } catch {
    return 0;
  }
}

/** Every acknowledged signup must be stored: compares the generator's acks with the table. */
async function verifyStored(generator: Generator, target: Target): Promise<{ acknowledged: number; stored: number; missing: string[] }> {
  const file = path.join(workDir, `acks-${target.label}.bin`);
  const acknowledged = await generator.acks(file);
  const acks = fs.readFileSync(file);
  fs.rmSync(file);
  const stored = new Uint8Array(acks.length);
  const addresses = await storedAddresses(target.databaseUrl, prefix);
  for (const email of addresses) {
    const n = benchNumber(prefix, email);
    if (n !== null && n < stored.length) stored[n] = 1;
  }
  const missing: string[] = [];
  for (let n = 0; n < acks.length; n++) if (acks[n] && !stored[n]) missing.push(`${prefix}-${n}@example.com`);
  return { acknowledged, stored: addresses.length, missing };
}


// ---- the run ----------------------------------------------------------------------------------

const pct = (share: number) => `${Math.round(share * 100)}%`;

async function benchDatabase(generator: Generator, spec: string): Promise<{ rows: Row[]; openRows: OpenRow[]; failure: string | null }> {
  const target = await prepareTarget(spec, workDir);
  let product: ServerProcess | undefined;
  let floor: ServerProcess | undefined;
  const pg = postgresSampler(target);
  try {
    product = await startProduct(target);
    floor = await startFloor();
    const productMemory = memorySampler(product.pid);
    const floorMemory = memorySampler(floor.pid);
    const disk = sqliteCommitRate(workDir);
    const pressure = cpuPressure();
    process.stdout.write(
      `${target.label}: bare better-sqlite3 serial commits (WAL, synchronous=FULL) in the temp dir: ${fmt(disk.perSecond)}/s, ` +
        `median ${fmt(disk.medianMs, 2)} ms, p99 ${fmt(disk.p99Ms, 2)} ms` +
        (pressure === null ? '' : `; CPU pressure ${pct(pressure)}`) +
        '\n',
    );
    process.stdout.write(`${target.label}: warm-up`);
    await phase(generator, product, productMemory, pg, options.warmup, true, refused !== null);
    await phase(generator, floor, floorMemory, null, options.warmup, false);
    const productPhases: Phase[] = [];
    const refusedPhases: Phase[] = [];
    const floorPhases: Phase[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      process.stdout.write(`, round ${round}`);
      productPhases.push(await phase(generator, product, productMemory, pg, options.seconds, true));
      if (refused) refusedPhases.push(await phase(generator, product, productMemory, pg, options.seconds, true, true));
      floorPhases.push(await phase(generator, floor, floorMemory, null, options.seconds, false));
    }
    const rows = [
      summarize(target.label, 'product', productPhases, productMemory),
      ...(refused ? [summarize(target.label, REFUSED_ROW, refusedPhases, productMemory)] : []),
      summarize(target.label, 'floor', floorPhases, floorMemory),
    ];
    const openRows: OpenRow[] = [];
    if (options.rate > 0) {
      for (const [name, server, memory, sampler] of [['product', product, productMemory, pg], ['floor', floor, floorMemory, null]] as const) {
        process.stdout.write(`, ${name} at ${fmt(options.rate)}/s for ${options.rateSeconds} s`);
        const result = await withCpu(server, memory, sampler, () => generator.open(server.port, options.rateSeconds, options.rate, name === 'product'));
        openRows.push({ database: target.label, server: name, rate: options.rate, seconds: options.rateSeconds, result, serverCpuSeconds: result.serverCpuSeconds, postgres: result.postgres, peakRssMb: memory.peak / 2 ** 20, loadRssMb: memory.underLoad / 2 ** 20 });
      }
    }
    process.stdout.write(pressure === null ? '\n' : `; CPU pressure meanwhile ${pct(cpuPressure() ?? 0)}\n`);
    const wal = walSizeMb(target);
    if (wal !== null) console.log(`${target.label}: the WAL file is ${fmt(wal, 1)} MB at the end of the load`);
    productMemory.stop();
    floorMemory.stop();

    // A crash, not a shutdown: whatever was acknowledged must already be in the database.
    await stopServer(product, 'SIGKILL');
    await stopServer(floor, 'SIGTERM');
    const check = await verifyStored(generator, target);
    let failure: string | null = null;
    if (check.missing.length > 0) {
      failure =
        `${target.label}: ${check.missing.length} of ${check.acknowledged} acknowledged signups are NOT in the database after SIGKILL, e.g. ` +
        check.missing.slice(0, 5).join(', ');
    } else {
      console.log(`${target.label}: all ${fmt(check.acknowledged)} acknowledged signups are stored (${fmt(check.stored)} rows of this run after SIGKILL)`);
    }
    return { rows, openRows, failure };
  } finally {
    pg?.stop();
    if (product) await stopServer(product, 'SIGKILL');
    if (floor) await stopServer(floor, 'SIGKILL');
    await target.cleanup();
  }
}

async function profileDatabase(generator: Generator, spec: string): Promise<{ text: string; failure: string | null }> {
  const target = await prepareTarget(spec, workDir);
  const profileDir = path.join(workDir, `profile-${target.label}`);
  let product: ServerProcess | undefined;
  try {
    product = await startProduct(target, ['--cpu-prof', '--cpu-prof-dir', profileDir]);
    const memory = memorySampler(product.pid);
    // With --rate given, the profiled load is the open loop at that rate (a quiet server's costs), else the closed loop.
    const rate = flags.rate !== undefined ? options.rate : 0;
    const load = rate > 0 ? `${fmt(rate)} signups/s (open loop)` : `${options.connections} connections`;
    process.stdout.write(`${target.label}: warm-up ${options.warmup} s, profiled load ${options.profileSeconds} s at ${load}\n`);
    await phase(generator, product, memory, null, options.warmup, true);
    const from = Number(process.hrtime.bigint() / 1000n);
    const measured =
      rate > 0
        ? await withCpu(product, memory, null, () => generator.open(product!.port, options.profileSeconds, rate, true))
        : await phase(generator, product, memory, null, options.profileSeconds, true);
    const to = Number(process.hrtime.bigint() / 1000n);
    memory.stop();
    // SIGTERM: the server shuts down cleanly and Node writes the profile on exit.
    await stopServer(product, 'SIGTERM');
    const file = fs.readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no .cpuprofile written in ${profileDir}:\n${product.stderr()}`);
    const keptDir = path.join(projectRoot, 'bench-results/signup-profile');
    fs.mkdirSync(keptDir, { recursive: true });
    const kept = path.join(keptDir, `${target.label}-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
    fs.copyFileSync(path.join(profileDir, file), kept);

    const signups = measured.statuses['201'] ?? 0;
    const profile = JSON.parse(fs.readFileSync(kept, 'utf8')) as CpuProfile;
    const summary = summarizeCpuProfile(profile, { from, to, sqlite: target.label === 'sqlite' });
    const text = [
      `== ${target.label}: ${fmt(signups / measured.elapsed)} signups/s while profiled (--cpu-prof slows it down), ` +
        `server CPU ${pct(measured.serverCpuSeconds / measured.elapsed)} of a core (/proc: all threads), ` +
        `${fmt((measured.serverCpuSeconds / Math.max(1, signups)) * 1e6, 1)} µs CPU per signup; generator ${pct(measured.cpuSeconds / measured.elapsed)}`,
      formatSummary(summary, signups),
      `profile: ${path.relative(process.cwd(), kept)} (again: npx tsx scripts/bench/lib/cpu-profile.ts FILE --from ${from} --to ${to} --signups ${signups}${target.label === 'sqlite' ? ' --sqlite' : ''})`,
    ].join('\n');

    const check = await verifyStored(generator, target);
    const failure = check.missing.length > 0 ? `${target.label}: ${check.missing.length} acknowledged signups are not stored, e.g. ${check.missing.slice(0, 5).join(', ')}` : null;
    return { text, failure };
  } finally {
    if (product) await stopServer(product, 'SIGKILL');
    await target.cleanup();
  }
}

const specs = await databaseSpecs(flags.databases ?? process.env.BENCH_DATABASE_URLS);
/** The DNS server the product's MX check asks (unless --no-screening), in this process. */
const dns: ScreeningDns | null = options.screening ? await screeningDns() : null;
const generator = startGenerator({ jsDir, prefix, ipv6Share: options.ipv6Share, connections: options.connections });
console.log(
  [
    `signup benchmark${options.profile ? ' (profile mode)' : ''}`,
    machineDescription(),
    `product: node ${mainJs.startsWith(process.cwd() + path.sep) ? path.relative(process.cwd(), mainJs) : mainJs} (${options.label ?? gitDescription(options.root)}), TRUST_PROXY=1, LOG_LEVEL=${options.logLevel} (to /dev/null)`,
    `SQLite files in ${workDir} (${fileSystemType(workDir) ?? 'unknown file system'})`,
    `load: ${options.connections} keep-alive connections, one request in flight each, a fresh address and a random public client IP per request (${pct(options.ipv6Share)} IPv6)`,
    options.profile
      ? `phases: warm-up ${options.warmup} s, then ${options.profileSeconds} s profiled`
      : refused
        ? `phases: warm-up ${options.warmup} s each, then ${options.rounds} × (product ${options.seconds} s, product + a client looping on refused sign-ins ${options.seconds} s, floor ${options.seconds} s)`
        : `phases: warm-up ${options.warmup} s each, then ${options.rounds} × (product ${options.seconds} s, floor ${options.seconds} s)` +
          (options.rate > 0 ? `, then each at a steady ${fmt(options.rate)} signups/s for ${options.rateSeconds} s (open loop, up to ${options.connections} connections)` : ''),
    dns
      ? `screening on: the throwaway list and the MX check, asking a DNS server on ${dns.address} (this process; ` +
        `${dns.latency}); addresses at ${options.emailDomains === 'fresh' ? 'a domain of their own each (a DNS query per signup)' : options.emailDomains === 0 ? 'example.com' : `${options.emailDomains} domains`}`
      : 'screening off (--no-screening)',
    'CPU columns are shares of one core (the machine has ' + os.cpus().length + '); the generator shares the cores with the server.',
    '',
  ].join('\n'),
);

/** The temporary directory goes, its node_modules link first (removed as a link, never followed). */

const failures: string[] = [];
const rows: Row[] = [];
const openRows: OpenRow[] = [];
const profiles: string[] = [];
try {
  for (const spec of specs) {
    if (options.profile) {
      const { text, failure } = await profileDatabase(generator, spec);
      profiles.push(text);
      if (failure) failures.push(failure);
    } else {
      const result = await benchDatabase(generator, spec);
      rows.push(...result.rows);
      openRows.push(...result.openRows);
      if (result.failure) failures.push(result.failure);
    }
  }
} finally {
  generator.stop();
  await dns?.close();
  removeWorkDir(workDir, jsDir);
}

console.log('');
if (options.profile) console.log(profiles.join('\n\n'));
else {
  printTable(rows, options.connections);
  printOpenTable(openRows);
}
if (refused) {
  const total = Object.values(refused.statuses).reduce((sum, n) => sum + n, 0);
  console.log(`\nrefused sign-ins beside the product (its "${REFUSED_ROW}" phases and warm-up): ${fmt(total)} requests in ${fmt(refused.seconds(), 1)} s (${fmt(total / Math.max(refused.seconds(), 1e-9))}/s), ${otherStatuses(refused.statuses)}`);
  for (const row of rows.filter((r) => r.server === REFUSED_ROW)) {
    const plain = rows.find((r) => r.database === row.database && r.server === 'product')!;
    const change = (a: number, b: number) => `${a >= b ? '+' : ''}${fmt(((a - b) / b) * 100, 1)}%`;
    console.log(`  ${row.database}: signups/s ${change(row.signupsPerSecond, plain.signupsPerSecond)}, p99 ${change(row.p99, plain.p99)} against the product alone`);
  }
}
if (flags.json) fs.writeFileSync(flags.json, JSON.stringify({ options, machine: machineDescription(), rows, openRows, profiles, refusedSignIns: refused?.statuses ?? null }, null, 2));

if (failures.length > 0) {
  console.error(`\nFAILED: acknowledged signups missing from the database\n${failures.map((f) => `  ${f}`).join('\n')}`);
  process.exit(1);
}
