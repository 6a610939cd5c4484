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
 * --checks-compare (issue 28's goal: all three abuse checks cost at most 15% of the signups/s and add
 * at most 2 ms to the p99 at 100 connections) runs two products side by side, each on a database of
 * its own, per round: all checks off, all three on (the throwaway list, the MX check against the
 * bench's DNS server, and the proof of work, SIGNUP_CHALLENGE=proof-of-work), then the floor; and
 * prints their differences. The load generator sends each signup of the checks-on product with a
 * valid, unused solution, as the form does (the `altcha` field, CHALLENGE_FIELD, beside the address;
 * the client address that fetched the challenge as X-Forwarded-For): before every phase of that
 * product it fetches challenges from it and solves them (lib/challenge-pool.ts; not timed, the
 * product's CPU for issuing them is printed apart), as many as the phase may send: the highest rate
 * seen so far × the phase's seconds × 2, plus one per connection (its warm-up: the checks-off
 * product's warm-up rate × 3; the open loop: exactly its requests). A signup the pool has none left for is sent
 * without one, counted and reported as a failure (it would be held), never hidden. After the run
 * no entry of either product may be held.
 *
 * The difficulty is the config's minimum, SIGNUP_CHALLENGE_MAX_NUMBER=1000 (default 50,000), so
 * solving the pool takes seconds, not minutes. The server's cost per signup does not depend on it:
 * a solution is checked (src/server/challenge/pow.ts solutionVerifier, as altcha-lib's
 * verifySolution in node_modules/altcha-lib/dist/esm/v1/index.js, which calls createChallenge with
 * the sent number) with one SHA-256 of salt + number and one HMAC of the challenge, whatever the
 * maxnumber (only compared with the number); salt + number fit one SHA-256 block either way, and the
 * spent-challenge write is the same. Issuing one costs the same too (a random number below maxnumber).
 * The challenges live for an hour (SIGNUP_CHALLENGE_TTL_SECONDS=3600), so pre-solved ones never
 * expire during a run (a pool's solutions expiring within 10 minutes are dropped at its next fill).
 *
 * After the run the product is killed (SIGKILL, as a crash) and every address it acknowledged with
 * 201 must be in the database; the run fails loudly otherwise.
 *
 *   npm run build:server && npm run bench:signup
 *   npm run bench:signup -- --databases sqlite --seconds 5 --rounds 2
 *   BENCH_DATABASE_URLS=postgres://postgres@127.0.0.1:5432/test npm run bench:signup
 *   npm run bench:signup -- --profile       # CPU profile of the product under load, by category
 *   npm run bench:signup -- --checks-compare  # all three abuse checks on against all off (issue 28)
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
 *   --checks-compare / BENCH_CHECKS_COMPARE=1
 *                                       rounds of (product with all three abuse checks off, product with
 *                                       all three on, floor), each product on its own database, and the
 *                                       differences against issue 28's goals (see above); not with
 *                                       --no-screening or --refused-sign-ins; with --profile, each of
 *                                       the two products is profiled in turn
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
import { parseEmailDomains } from './lib/addresses.js';
import { screeningDns, type ScreeningDns } from './lib/screening-dns.js';
import { transpileFiles } from './lib/compile.js';
import { formatSummary, summarizeCpuProfile, type CpuProfile } from './lib/cpu-profile.js';
import { printChecksComparison, printOpenTable, printTable, summarize, type OpenRow, type Phase, type Row } from './lib/signup-report.js';
import { databaseSpecs, fmt, GENERATOR_SOURCES, gitDescription, numberOption, otherStatuses, prepareTarget, removeWorkDir, startGenerator, type Generator, type Target } from './lib/harness.js';
import { sqliteCommitRate } from './lib/disk.js';
import { refusedSignIns } from './lib/refused-sign-ins.js';
import { cpuPressure, fileSystemType, machineDescription, memorySampler, waitForQuiet } from './lib/proc.js';
import {
  BENCH_CHALLENGE_MAX_NUMBER,
  checksEnv,
  closedPoolSize,
  fillPool,
  newProduct,
  POOL_MARGIN,
  verifyStored,
  walSizeMb,
  withCpu,
  type Checks,
  type PgSampler,
  type Product,
  type ProductSpec,
  type Sampler,
} from './lib/signup-products.js';
import { freePort, startServer, stopServer, type ServerProcess } from './lib/servers.js';

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
    'checks-compare': { type: 'boolean' },
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
  checksCompare: flags['checks-compare'] ?? ['1', 'true'].includes(process.env.BENCH_CHECKS_COMPARE ?? ''),
  rate: numberOption(flags.rate, process.env.BENCH_RATE, 1000),
  rateSeconds: numberOption(flags['rate-seconds'], process.env.BENCH_RATE_SECONDS, 60),
  emailDomains: parseEmailDomains(flags['email-domains'] ?? process.env.BENCH_EMAIL_DOMAINS),
};
// The load generator (a child process) reads it from its environment.
process.env.BENCH_EMAIL_DOMAINS = String(options.emailDomains);

if (options.checksCompare && (!options.screening || options.refusedSignIns)) {
  console.error('--checks-compare sets the checks itself: not with --no-screening or --refused-sign-ins.');
  process.exit(2);
}

const mainJs = path.join(options.root, 'dist/server/main.js');
if (!fs.existsSync(mainJs)) {
  console.error(`${mainJs} not found: run \`npm run build\` (or \`npm run build:server\`) first.`);
  process.exit(1);
}

// ---- the load generator, a plain-Node child process -------------------------------------------

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-bench-'));
const jsDir = transpileFiles(benchDir, ['floor-server.ts', ...GENERATOR_SOURCES], path.join(workDir, 'js'), projectRoot);
const prefix = `bench${randomBytes(4).toString('hex')}`;

// ---- the products measured --------------------------------------------------------------------

/** --checks-compare's two products (the names its comparison looks for). */
const CHECKS_OFF = 'product, checks off';
const CHECKS_ON = 'product, checks on';
const productSpecs: ProductSpec[] = options.checksCompare
  ? [
      { name: CHECKS_OFF, checks: { screening: false, challenge: false } },
      { name: CHECKS_ON, checks: { screening: true, challenge: true } },
    ]
  : [{ name: 'product', checks: { screening: options.screening } }];

// ---- measuring one phase ----------------------------------------------------------------------

/** The client looping on refused sign-ins beside the product's phases (--refused-sign-ins), or null. */
const refused = options.refusedSignIns ? refusedSignIns() : null;

/** Every server started (a stopped one reads as idle), and how long phases waited for them to settle. */
const serverPids = new Set<number>();
const settling = { ms: 0, phases: 0, timedOut: 0 };

/**
 * Before a measured phase: no server still busy with the last one (a checkpoint, a collection, the
 * challenges it issued) takes the cores from this one, as the phases follow each other in a fixed order.
 */
async function settle(): Promise<void> {
  const waited = await waitForQuiet([...serverPids]);
  settling.phases += 1;
  if (waited === null) settling.timedOut += 1;
  else settling.ms += waited;
}

async function phase(generator: Generator, server: ServerProcess, sampler: Sampler, pg: PgSampler, seconds: number, record: boolean, withRefusedSignIns = false, challenge = false): Promise<Phase> {
  await settle();
  if (withRefusedSignIns) refused?.start(server.port);
  const result = await withCpu(server, sampler, pg, () => generator.run(server.port, seconds, record, challenge));
  await refused?.stop();
  return result;
}

/** Failures of the whole run (printed at the end; the exit code is 1). */
const failures: string[] = [];

/** A phase that sent signups without a solution: said at once, and the run fails. */
function reportDry(product: Product, what: string, unsolved: number): void {
  if (unsolved === 0) return;
  const message =
    `${product.target.label} ${product.spec.name}, ${what}: THE CHALLENGE POOL RAN DRY: ${fmt(unsolved)} signups were sent without a solution ` +
    `(held, not measured as the checks-on product); the pool is sized from the highest rate seen × ${POOL_MARGIN.round} (the warm-up's × ${POOL_MARGIN.warmup})`;
  console.log(`\n!! ${message}`);
  failures.push(message);
}

/** One closed-loop phase of a product (its pool, if any, filled before). */
async function productPhase(generator: Generator, product: Product, seconds: number, what: string, withRefusedSignIns = false): Promise<Phase> {
  const result = await phase(generator, product.server, product.memory, product.pg, seconds, true, withRefusedSignIns, product.pool !== null);
  product.bestRate = Math.max(product.bestRate, (result.statuses['201'] ?? 0) / Math.max(result.elapsed, 1e-9));
  if (product.pool) reportDry(product, what, result.unsolved);
  return result;
}

// ---- the product and the floor ----------------------------------------------------------------

function productEnv(databaseUrl: string, checks: Checks): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    HOST: '127.0.0.1',
    TRUST_PROXY: '1',
    LOG_LEVEL: options.logLevel,
    // A key of its own, so the bench never writes secrets/ under the project.
    AUTH_SECRET_KEY: randomBytes(32).toString('base64'),
    // The abuse checks (issue 28), the MX check's DNS the bench's own server.
    ...checksEnv(checks, dns?.address ?? null),
  };
}

async function startProduct(target: Target, checks: Checks, nodeArgs: string[] = []): Promise<ServerProcess> {
  const server = await startServer({ name: `product (${target.label})`, nodeArgs: [...nodeArgs, mainJs], env: productEnv(target.databaseUrl, checks), port: await freePort(), cwd: options.root });
  serverPids.add(server.pid);
  return server;
}

async function startFloor(): Promise<ServerProcess> {
  const server = await startServer({ name: 'floor', nodeArgs: [path.join(jsDir, 'floor-server.js')], env: { ...process.env, NODE_ENV: 'production' }, port: await freePort(), cwd: jsDir });
  serverPids.add(server.pid);
  return server;
}

/** The product, the product beside a client looping on refused sign-ins (--refused-sign-ins), the floor. */
const REFUSED_ROW = 'product + refused sign-ins';

// ---- the run ----------------------------------------------------------------------------------

const pct = (share: number) => `${Math.round(share * 100)}%`;

async function benchDatabase(generator: Generator, spec: string): Promise<{ rows: Row[]; openRows: OpenRow[] }> {
  const targets: Target[] = [];
  const products: Product[] = [];
  let floor: ServerProcess | undefined;
  try {
    for (const productSpec of productSpecs) {
      const target = await prepareTarget(spec, workDir);
      targets.push(target);
      const server = await startProduct(target, productSpec.checks);
      products.push(newProduct(productSpec, target, server));
    }
    const label = targets[0]!.label;
    floor = await startFloor();
    const floorMemory = memorySampler(floor.pid);
    const disk = sqliteCommitRate(workDir);
    const pressure = cpuPressure();
    process.stdout.write(
      `${label}: bare better-sqlite3 serial commits (WAL, synchronous=FULL) in the temp dir: ${fmt(disk.perSecond)}/s, ` +
        `median ${fmt(disk.medianMs, 2)} ms, p99 ${fmt(disk.p99Ms, 2)} ms` +
        (pressure === null ? '' : `; CPU pressure ${pct(pressure)}`) +
        '\n',
    );
    process.stdout.write(`${label}: warm-up`);
    // In order: a product with the proof of work is warmed up after the one without, whose rate sizes its first pool.
    for (const product of products) {
      if (product.pool) await fillPool(generator, product, closedPoolSize(products, options.warmup, options.connections, POOL_MARGIN.warmup));
      await productPhase(generator, product, options.warmup, 'the warm-up', refused !== null);
    }
    await phase(generator, floor, floorMemory, null, options.warmup, false);
    const refusedPhases: Phase[] = [];
    const floorPhases: Phase[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      process.stdout.write(`, round ${round}`);
      // The pools first, so that no product's phase follows its own challenges' issuing.
      for (const product of products) if (product.pool) await fillPool(generator, product, closedPoolSize(products, options.seconds, options.connections, POOL_MARGIN.round));
      for (const product of products) product.phases.push(await productPhase(generator, product, options.seconds, `round ${round}`));
      if (refused) refusedPhases.push(await productPhase(generator, products[0]!, options.seconds, `round ${round}`, true));
      floorPhases.push(await phase(generator, floor, floorMemory, null, options.seconds, false));
    }
    const rows = [
      ...products.map((p) => summarize(label, p.spec.name, p.phases, p.memory)),
      ...(refused ? [summarize(label, REFUSED_ROW, refusedPhases, products[0]!.memory)] : []),
      summarize(label, 'floor', floorPhases, floorMemory),
    ];
    const openRows: OpenRow[] = [];
    if (options.rate > 0) {
      // The open loop sends exactly rate × seconds requests: that many solutions.
      for (const product of products) if (product.pool) await fillPool(generator, product, Math.round(options.rate * options.rateSeconds));
      const loaded = [...products.map((p) => ({ name: p.spec.name, server: p.server, memory: p.memory, pg: p.pg, product: p })), { name: 'floor', server: floor, memory: floorMemory, pg: null, product: null }];
      for (const { name, server, memory, pg, product } of loaded) {
        process.stdout.write(`, ${name} at ${fmt(options.rate)}/s for ${options.rateSeconds} s`);
        await settle();
        const result = await withCpu(server, memory, pg, () => generator.open(server.port, options.rateSeconds, options.rate, product !== null, product?.pool != null));
        if (product?.pool) reportDry(product, 'the open loop', result.unsolved);
        openRows.push({ database: label, server: name, rate: options.rate, seconds: options.rateSeconds, result, serverCpuSeconds: result.serverCpuSeconds, postgres: result.postgres, peakRssMb: memory.peak / 2 ** 20, loadRssMb: memory.underLoad / 2 ** 20 });
      }
    }
    process.stdout.write(pressure === null ? '\n' : `; CPU pressure meanwhile ${pct(cpuPressure() ?? 0)}\n`);
    console.log(
      `${label}: before each of ${settling.phases} phases the servers were let settle (each under 5% of a core for 250 ms): ${fmt(settling.ms / 1000, 1)} s in all` +
        (settling.timedOut > 0 ? `; ${settling.timedOut} started after 20 s with one still busy` : ''),
    );
    Object.assign(settling, { ms: 0, phases: 0, timedOut: 0 });
    for (const product of products) {
      const wal = walSizeMb(product.target);
      if (wal !== null) console.log(`${label}: ${product.spec.name}: the WAL file is ${fmt(wal, 1)} MB at the end of the load`);
      const pool = product.pool;
      if (pool) {
        console.log(
          `${label}: ${product.spec.name}: ${fmt(pool.challenges)} challenges fetched and solved before its phases (not timed) in ${fmt(pool.solveSeconds, 1)} s; ` +
            `issuing them (8 requests at a time) cost the product ${fmt((pool.serverCpuSeconds / Math.max(1, pool.challenges)) * 1e6, 0)} µs CPU each (a browser fetches one per signup: not in the figures below)`,
        );
      }
      product.memory.stop();
    }
    floorMemory.stop();

    // A crash, not a shutdown: whatever was acknowledged must already be in the database.
    for (const product of products) await stopServer(product.server, 'SIGKILL');
    await stopServer(floor, 'SIGTERM');
    const check = await verifyStored(generator, targets, prefix, workDir);
    const stored = check.statuses.map((statuses, i) => `${products[i]!.spec.name}: ${Object.entries(statuses).map(([status, n]) => `${fmt(n)} ${status}`).join(', ') || 'none'}`);
    if (check.missing.length > 0) {
      failures.push(
        `${label}: ${check.missing.length} of ${check.acknowledged} acknowledged signups are NOT in the database after SIGKILL, e.g. ` + check.missing.slice(0, 5).join(', '),
      );
    } else {
      console.log(`${label}: all ${fmt(check.acknowledged)} acknowledged signups are stored after SIGKILL (this run's rows: ${stored.join('; ')})`);
    }
    check.statuses.forEach((statuses, i) => {
      const held = statuses.held ?? 0;
      if (held > 0) failures.push(`${label}: ${products[i]!.spec.name}: ${fmt(held)} signups were HELD (sent without a valid, unused solution): the product measured is not the one meant`);
    });
    return { rows, openRows };
  } finally {
    for (const product of products) {
      product.pg?.stop();
      await stopServer(product.server, 'SIGKILL');
    }
    if (floor) await stopServer(floor, 'SIGKILL');
    for (const target of targets) await target.cleanup();
  }
}

/** Profile mode, the checks-on product's warm-up: solutions for this many signups/s (more than this machine takes). */
const PROFILE_POOL_RATE = 12_000;

/** Profile mode: one product (with --checks-compare, each of the two in turn) under --cpu-prof. */
async function profileDatabase(generator: Generator, spec: string, productSpec: ProductSpec): Promise<{ text: string; failure: string | null }> {
  const target = await prepareTarget(spec, workDir);
  const profileDir = path.join(workDir, `profile-${target.label}-${productSpecs.indexOf(productSpec)}`);
  let product: ServerProcess | undefined;
  try {
    product = await startProduct(target, productSpec.checks, ['--cpu-prof', '--cpu-prof-dir', profileDir]);
    // The checks-on product's signups carry solutions, solved before each phase (not timed, not profiled apart: issuing them is in the profile's file, outside --from/--to).
    const measuredProduct = newProduct(productSpec, target, product);
    const memory = measuredProduct.memory;
    const challenge = measuredProduct.pool !== null;
    // With --rate given, the profiled load is the open loop at that rate (a quiet server's costs), else the closed loop.
    const rate = flags.rate !== undefined ? options.rate : 0;
    const load = rate > 0 ? `${fmt(rate)} signups/s (open loop)` : `${options.connections} connections`;
    process.stdout.write(`${target.label}: ${productSpec.name}: warm-up ${options.warmup} s, profiled load ${options.profileSeconds} s at ${load}\n`);
    if (challenge) await fillPool(generator, measuredProduct, Math.ceil(PROFILE_POOL_RATE * options.warmup) + options.connections);
    const warm = await phase(generator, product, memory, null, options.warmup, true, false, challenge);
    if (challenge) {
      reportDry(measuredProduct, 'the warm-up', warm.unsolved);
      const expected = rate > 0 ? rate : ((warm.statuses['201'] ?? 0) / Math.max(warm.elapsed, 1e-9)) * POOL_MARGIN.round;
      await fillPool(generator, measuredProduct, Math.ceil(expected * options.profileSeconds) + options.connections);
    }
    await settle();
    const from = Number(process.hrtime.bigint() / 1000n);
    const measured = await withCpu(product, memory, null, () =>
      rate > 0 ? generator.open(product!.port, options.profileSeconds, rate, true, challenge) : generator.run(product!.port, options.profileSeconds, true, challenge),
    );
    const to = Number(process.hrtime.bigint() / 1000n);
    if (challenge) reportDry(measuredProduct, 'the profiled load', measured.unsolved);
    memory.stop();
    // SIGTERM: the server shuts down cleanly and Node writes the profile on exit.
    await stopServer(product, 'SIGTERM');
    const file = fs.readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no .cpuprofile written in ${profileDir}:\n${product.stderr()}`);
    const keptDir = path.join(projectRoot, 'bench-results/signup-profile');
    fs.mkdirSync(keptDir, { recursive: true });
    const kept = path.join(keptDir, `${target.label}${challenge ? '-checks-on' : productSpec.checks.screening ? '' : '-checks-off'}-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
    fs.copyFileSync(path.join(profileDir, file), kept);

    const signups = measured.statuses['201'] ?? 0;
    const profile = JSON.parse(fs.readFileSync(kept, 'utf8')) as CpuProfile;
    const summary = summarizeCpuProfile(profile, { from, to, sqlite: target.label === 'sqlite' });
    const text = [
      `== ${target.label}, ${productSpec.name}: ${fmt(signups / measured.elapsed)} signups/s while profiled (--cpu-prof slows it down), ` +
        `server CPU ${pct(measured.serverCpuSeconds / measured.elapsed)} of a core (/proc: all threads), ` +
        `${fmt((measured.serverCpuSeconds / Math.max(1, signups)) * 1e6, 1)} µs CPU per signup; generator ${pct(measured.cpuSeconds / measured.elapsed)}`,
      formatSummary(summary, signups),
      `profile: ${path.relative(process.cwd(), kept)} (again: npx tsx scripts/bench/lib/cpu-profile.ts FILE --from ${from} --to ${to} --signups ${signups}${target.label === 'sqlite' ? ' --sqlite' : ''})`,
    ].join('\n');

    const check = await verifyStored(generator, [target], prefix, workDir);
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
      : `phases: warm-up ${options.warmup} s each, then ${options.rounds} × (` +
        [...productSpecs.map((p) => p.name), ...(refused ? ['product + a client looping on refused sign-ins'] : []), 'floor'].map((name) => `${name} ${options.seconds} s`).join(', ') +
        ')' +
        (options.rate > 0 ? `, then each at a steady ${fmt(options.rate)} signups/s for ${options.rateSeconds} s (open loop, up to ${options.connections} connections)` : ''),
    dns
      ? `screening${options.checksCompare ? ' (checks on)' : ' on'}: the throwaway list and the MX check, asking a DNS server on ${dns.address} (this process; ` +
        `${dns.latency}); addresses at ${options.emailDomains === 'fresh' ? 'a domain of their own each (a DNS query per signup)' : options.emailDomains === 0 ? 'example.com' : `${options.emailDomains} domains`}`
      : 'screening off (--no-screening)',
    ...(options.checksCompare
      ? [
          `checks compared (issue 28): "${CHECKS_OFF}" (SIGNUP_BLOCK_DISPOSABLE=off, SIGNUP_CHECK_MX=off, SIGNUP_CHALLENGE=off) against "${CHECKS_ON}" ` +
            `(the throwaway list, the MX check and SIGNUP_CHALLENGE=proof-of-work at SIGNUP_CHALLENGE_MAX_NUMBER=${BENCH_CHALLENGE_MAX_NUMBER}, each signup with a solution ` +
            `solved before the phase), each on a database of its own`,
        ]
      : []),
    'CPU columns are shares of one core (the machine has ' + os.cpus().length + '); the generator shares the cores with the server.',
    '',
  ].join('\n'),
);

const rows: Row[] = [];
const openRows: OpenRow[] = [];
const profiles: string[] = [];
try {
  for (const spec of specs) {
    if (options.profile) {
      for (const productSpec of productSpecs) {
        const { text, failure } = await profileDatabase(generator, spec, productSpec);
        profiles.push(text);
        if (failure) failures.push(failure);
      }
    } else {
      const result = await benchDatabase(generator, spec);
      rows.push(...result.rows);
      openRows.push(...result.openRows);
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
  if (options.checksCompare) printChecksComparison(rows, openRows, CHECKS_OFF, CHECKS_ON, options.connections);
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
  console.error(`\nFAILED:\n${failures.map((f) => `  ${f}`).join('\n')}`);
  process.exit(1);
}
