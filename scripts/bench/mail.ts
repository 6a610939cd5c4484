/**
 * Mail benchmark (issue 9): in one run, per database (a fresh SQLite file; a scratch PostgreSQL
 * database when one answers),
 *
 * 1. Outbox throughput. The production build (`node dist/server/main.js`, SMTP_URL pointing at an
 *    SMTP server inside this process: the `smtp-server` package, accepting everything, recording
 *    each Message-ID) starts on a database pre-filled with N outbox messages, and the run measures
 *    messages per second from the worker's start (the server's "Server listening" log line; the
 *    worker starts just before it, in onReady) to the last message received. Twice: N launch invites
 *    queued by the server's own code (N entries, status invited, and `enqueueManyMail` with template
 *    `invite` and data {entryId}), so each is rendered at send time (React e-mail, signed links);
 *    then N plain pre-rendered `test` messages of the same size. Every message must arrive exactly
 *    once and its row must end `sent`. The floor, in the same run: nodemailer in its own process
 *    sending N pre-rendered messages straight to the same SMTP server with the product's transport
 *    (createMailTransport from the build, pooled, one connection), one after another as the worker
 *    sends them, no database; and the same with k connections and k messages in flight, for what
 *    more connections would give (--floor-connections).
 * 2. Signups per second with double opt-in on beside off: two production servers on fresh databases,
 *    SIGNUP_CONFIRMATION=off and =required (both with SMTP to this process), loaded alternately by
 *    the signup bench's load generator (lib/load-generator.ts: 100 keep-alive connections, a fresh
 *    address and a random public client IP per request, TRUST_PROXY=1, LOG_LEVEL info to /dev/null).
 *    After each phase of the `required` server the run waits until its worker has sent the
 *    confirmations of that phase, so that sending never overlaps the `off` server's phase (the time
 *    it took is printed). Then both servers are killed (SIGKILL, as a crash) and the run fails
 *    unless every acknowledged signup is stored in the database it was sent to, and, with
 *    confirmation on, each stored entry is pending with exactly one confirmation queued or sent,
 *    none received twice (with it off: joined, no message at all).
 *
 *   npm run build && npm run bench:mail
 *   npm run bench:mail -- --databases sqlite --messages 2000 --seconds 5 --rounds 2
 *   npm run bench:mail -- --sections outbox          # or signups
 *
 * Options (flag, or environment variable):
 *   --databases / BENCH_DATABASE_URLS   as bench:signup: `sqlite` and/or postgres:// URLs (scratch databases are
 *                                       created and dropped); default sqlite, plus postgres://postgres@127.0.0.1:5432/test if it answers
 *   --sections / BENCH_MAIL_SECTIONS    outbox,signups (default both)
 *   --messages / BENCH_MAIL_MESSAGES (5000)   messages per outbox phase and per floor
 *   --floor-connections / BENCH_MAIL_FLOOR_CONNECTIONS (4)   the second floor's connections (0: none)
 *   --seconds / BENCH_SECONDS (5)       length of each measured signup phase
 *   --rounds / BENCH_ROUNDS (2)         off/required pairs
 *   --warmup / BENCH_WARMUP_SECONDS (2) warm-up of each signup server, not counted
 *   --connections / BENCH_CONNECTIONS (100), --ipv6-share / BENCH_IPV6_SHARE (0.3), --log-level / BENCH_LOG_LEVEL (info)
 *   --root / BENCH_ROOT (.)             project root whose dist/server/main.js is run
 *   --label / BENCH_LABEL               names the build in the header (default: its git commit)
 *   --json FILE                         also write the results as JSON
 *   --profile / BENCH_PROFILE=1         the outbox phases' product runs with --cpu-prof (slower): its time by part and
 *                                       heaviest frames are printed, the .cpuprofile kept in bench-results/mail-profile/
 */
import { fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../../src/server/db/database.js';
import { migrateToLatest } from '../../src/server/db/migrate.js';
import type { Database } from '../../src/server/db/schema.js';
import { enqueueMail, enqueueManyMail } from '../../src/server/mail/outbox.js';
import { insertWaitlistEntriesSkippingDuplicates } from '../../src/server/signup/repository.js';
import { waitlistEmailMessage, waitlistEmailSubject } from '../../src/server/consent/emails/index.js';
import { emailContent } from '../../src/shared/site/content.js';
import { ONE_CLICK_FIELD, ONE_CLICK_VALUE, PREFERENCES_PAGE_PATH } from '../../src/shared/waitlist/consent-contract.js';
import { entryLocation, NO_CONSENT_RECORD, type WaitlistEntry } from '../../src/shared/waitlist/entry.js';
import { NO_ATTRIBUTION } from '../../src/shared/waitlist/attribution.js';
import { benchNumber } from './lib/addresses.js';
import { transpileFiles } from './lib/compile.js';
import { formatSummary, summarizeCpuProfile, type CpuProfile } from './lib/cpu-profile.js';
import { sqliteCommitRate } from './lib/disk.js';
import { emptyHistogram, mergeHistograms, quantileMs } from './lib/histogram.js';
import type { PhaseResult } from './lib/load-generator.js';
import { databaseSpecs, fmt, GENERATOR_SOURCES, gitDescription, numberOption, otherStatuses, prepareTarget, removeWorkDir, startGenerator, type Generator, type Target } from './lib/harness.js';
import { floorMessageId, type FloorCommand, type FloorMessage, type FloorResult } from './lib/mail-floor.js';
import { startBenchSmtpServer, type Arrival, type BenchSmtpServer } from './lib/mail-smtp.js';
import { cpuPressure, cpuSeconds, machineDescription, memorySampler } from './lib/proc.js';
import { freePort, startServer, stopServer, type ServerProcess } from './lib/servers.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const projectRoot = path.resolve(benchDir, '../..');
const PUBLIC_URL = 'https://waitlist.bench.example';
const MAIL_FROM = 'Waitlist bench <hello@waitlist.bench.example>';
/** No message for this long while some are due: the sender has stopped; the run fails. */
const STALL_MS = 60_000;

const { values: flags } = parseArgs({
  options: {
    databases: { type: 'string' },
    sections: { type: 'string' },
    messages: { type: 'string' },
    'floor-connections': { type: 'string' },
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    'ipv6-share': { type: 'string' },
    'log-level': { type: 'string' },
    root: { type: 'string' },
    json: { type: 'string' },
    label: { type: 'string' },
    profile: { type: 'boolean' },
  },
});
const sections = (flags.sections ?? process.env.BENCH_MAIL_SECTIONS ?? 'outbox,signups').split(',').map((s) => s.trim());
for (const s of sections) if (s !== 'outbox' && s !== 'signups') throw new Error(`unknown section "${s}": outbox or signups`);
const options = {
  messages: Math.max(1, Math.round(numberOption(flags.messages, process.env.BENCH_MAIL_MESSAGES, 5000))),
  floorConnections: Math.round(numberOption(flags['floor-connections'], process.env.BENCH_MAIL_FLOOR_CONNECTIONS, 4)),
  seconds: numberOption(flags.seconds, process.env.BENCH_SECONDS, 5),
  rounds: Math.max(1, Math.round(numberOption(flags.rounds, process.env.BENCH_ROUNDS, 2))),
  warmup: numberOption(flags.warmup, process.env.BENCH_WARMUP_SECONDS, 2),
  connections: Math.max(1, Math.round(numberOption(flags.connections, process.env.BENCH_CONNECTIONS, 100))),
  ipv6Share: numberOption(flags['ipv6-share'], process.env.BENCH_IPV6_SHARE, 0.3),
  logLevel: flags['log-level'] ?? process.env.BENCH_LOG_LEVEL ?? 'info',
  root: path.resolve(flags.root ?? process.env.BENCH_ROOT ?? projectRoot),
  label: flags.label ?? process.env.BENCH_LABEL,
  /** The outbox phases' product runs with --cpu-prof; its profile is summarized and kept. */
  profile: flags.profile ?? ['1', 'true'].includes(process.env.BENCH_PROFILE ?? ''),
  outbox: sections.includes('outbox'),
  signups: sections.includes('signups'),
};

const mainJs = path.join(options.root, 'dist/server/main.js');
const transportJs = path.join(options.root, 'dist/server/mail/transport.js');
if (!fs.existsSync(mainJs) || !fs.existsSync(transportJs)) {
  console.error(`${mainJs} not found: run \`npm run build\` (or \`npm run build:server\`) first.`);
  process.exit(1);
}

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-bench-mail-'));
const jsDir = transpileFiles(benchDir, [...GENERATOR_SOURCES, 'lib/mail-floor.ts'], path.join(workDir, 'js'), projectRoot);
/** Letters and digits only: the LIKE-safe prefix of every address of this run. */
const prefix = `mail${randomBytes(4).toString('hex')}`;
const messageIdHost = new URL(PUBLIC_URL).hostname;

// ---- formatting ---------------------------------------------------------------------------------

const pct = (share: number) => (Number.isFinite(share) ? `${Math.round(share * 100)}%` : '-');
const pressureNow = () => {
  const p = cpuPressure();
  return p === null ? '' : `CPU pressure ${pct(p)}, `;
};
const loadNow = () => `${pressureNow()}load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`;

/** A table: left-aligned text columns (`left`), right-aligned figures. */
function table(header: string[], rows: string[][], left: ReadonlySet<number>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (left.has(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

// ---- databases ----------------------------------------------------------------------------------



/** The bench's own connection to a target (seeding before a server starts, checks after it stopped). */
function openTarget(target: Target): DatabaseHandle {
  const url = target.databaseUrl;
  return openDatabase(url.startsWith('postgres') ? { dialect: 'postgres', connectionString: url } : { dialect: 'sqlite', filename: url.replace(/^(file|sqlite):/, '') });
}

async function withDatabase<T>(target: Target, work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  const handle = openTarget(target);
  try {
    return await work(handle.db);
  } finally {
    await handle.close();
  }
}


// ---- the product --------------------------------------------------------------------------------

function productEnv(target: Target, smtp: BenchSmtpServer, confirmation: 'off' | 'required'): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: target.databaseUrl,
    HOST: '127.0.0.1',
    TRUST_PROXY: '1',
    LOG_LEVEL: options.logLevel,
    // A key of its own, so the bench never writes secrets/ under the project.
    AUTH_SECRET_KEY: randomBytes(32).toString('base64'),
    SMTP_URL: smtp.url,
    MAIL_FROM,
    PUBLIC_URL,
    SIGNUP_CONFIRMATION: confirmation,
    MAIL_WELCOME: 'off',
  };
}

let serverCount = 0;
async function startProduct(target: Target, smtp: BenchSmtpServer, confirmation: 'off' | 'required', stdoutFile?: string, nodeArgs: string[] = []): Promise<ServerProcess> {
  serverCount += 1;
  return startServer({
    name: `product #${serverCount} (${target.label}, confirmation ${confirmation})`,
    nodeArgs: [...nodeArgs, mainJs],
    env: productEnv(target, smtp, confirmation),
    port: await freePort(),
    cwd: options.root,
    ...(stdoutFile ? { stdoutFile } : {}),
  });
}

/** Time of the product's "Server listening" log line (pino's epoch ms): the worker started just before, in onReady. */
function listeningTime(logFile: string): number | null {
  for (const line of fs.readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('Server listening')) continue;
    try {
      const { time } = JSON.parse(line) as { time?: number | string };
      const ms = typeof time === 'number' ? time : typeof time === 'string' ? Date.parse(time) : Number.NaN;
      if (Number.isFinite(ms)) return ms;
    } catch {
      // not a JSON line
    }
  }
  return null;
}

/** The worker's and transport's settings as the build under test has them (their defaults: production passes no overrides). */
function workerSettings(): string {
  const read = (file: string) => {
    try {
      return fs.readFileSync(path.join(options.root, 'dist/server/mail', file), 'utf8');
    } catch {
      return '';
    }
  };
  const worker = read('worker.js');
  const transport = read('transport.js');
  const find = (text: string, re: RegExp) => re.exec(text)?.[1]?.replace(/_/g, '') ?? '?';
  return [
    `batch ${find(worker, /batchSize \?\? ([\d_]+)/)} rows per claim (a full batch claims again at once)`,
    `poll every ${find(worker, /pollIntervalMs \?\? ([\d_]+)/)} ms when idle (and woken by an enqueue in the same process)`,
    `lease ${find(worker, /leaseMs \?\? ([\d_ *]+)/).replace(/\s+/g, '')} ms`,
    `one message at a time; pool maxConnections ${find(transport, /maxConnections: (\d+)/)}, maxMessages ${find(transport, /maxMessages: (\d+)/)}, idleTimeout ${find(transport, /idleTimeout: ([\d_]+)/)} ms`,
  ].join('; ');
}

// ---- 1. outbox throughput -----------------------------------------------------------------------

interface OutboxRow {
  database: string;
  what: string;
  kind: 'outbox' | 'floor' | 'floor-k';
  messages: number;
  /** From the start (worker start / first send) to the last message received, seconds. */
  seconds: number;
  perSecond: number;
  /** First to last message received. */
  steadyPerSecond: number;
  /** Start to the first message received, ms. */
  firstMs: number;
  /** Gaps of PAUSE_MS or more between two messages received (a new connection's greeting, a module loading…): count and total seconds. */
  pauses: number;
  pauseSeconds: number;
  /** The sender's CPU (product or floor process) over the phase, share of one core. */
  senderCpu: number;
  /** This process (the SMTP server) over the phase, share of one core. */
  smtpCpu: number;
  peakRssMb: number;
  check: string;
  failure: string | null;
}

/** Exactly once: every expected Message-ID received once, nothing else. */
function checkArrivals(arrivals: Arrival[], expected: ReadonlySet<string>): { duplicates: number; missing: number; unexpected: number } {
  const seen = new Map<string, number>();
  for (const a of arrivals) seen.set(a.messageId, (seen.get(a.messageId) ?? 0) + 1);
  let duplicates = 0;
  let unexpected = 0;
  for (const [id, n] of seen) {
    if (!expected.has(id)) unexpected += n;
    else if (n > 1) duplicates += n - 1;
  }
  let missing = 0;
  for (const id of expected) if (!seen.has(id)) missing += 1;
  return { duplicates, missing, unexpected };
}

/** A gap between two messages this long is a wait, not a send (a send takes a few ms here). */
const PAUSE_MS = 50;

function arrivalSpan(arrivals: Arrival[]): { first: number; last: number; pauses: number; pauseSeconds: number } {
  const times = arrivals.map((a) => a.at).sort((a, b) => a - b);
  let pauses = 0;
  let pauseMs = 0;
  for (let i = 1; i < times.length; i++) {
    const gap = times[i]! - times[i - 1]!;
    if (gap >= PAUSE_MS) {
      pauses += 1;
      pauseMs += gap;
    }
  }
  return { first: times[0] ?? Number.NaN, last: times.at(-1) ?? Number.NaN, pauses, pauseSeconds: pauseMs / 1000 };
}

/** The product's worker sending what is queued in `target` (`kind` rows); the server stops afterwards. */
async function outboxPhase(target: Target, smtp: BenchSmtpServer, what: string, kind: string): Promise<OutboxRow> {
  const expected = new Set(
    await withDatabase(target, async (db) => (await db.selectFrom('mail_outbox').select('message_id').where('kind', '=', kind).execute()).map((r) => r.message_id)),
  );
  const logFile = path.join(workDir, `outbox-${target.label}-${kind}.log`);
  smtp.take();
  const benchCpuBefore = process.cpuUsage();
  const profileDir = path.join(workDir, `profile-${target.label}-${kind}`);
  const product = await startProduct(target, smtp, 'off', logFile, options.profile ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []);
  const memory = memorySampler(product.pid);
  memory.open();
  // The CPU of start-up until /healthz answered is left out (a few ms of sending may be too).
  const cpuBefore = cpuSeconds(product.pid) ?? Number.NaN;
  const cpuFrom = Date.now();
  let failure: string | null = null;
  try {
    await smtp.waitFor(expected.size, STALL_MS, () => {
      if (product.child.exitCode !== null || product.child.signalCode !== null) throw new Error(`${product.name} exited:\n${product.stderr()}`);
    });
  } catch (err) {
    failure = `${target.label} ${what}: ${(err as Error).message}`;
  }
  const cpuAfter = cpuSeconds(product.pid) ?? Number.NaN;
  const cpuTo = Date.now();
  memory.close();
  const peakRssMb = memory.peak / 2 ** 20;
  memory.stop();
  await stopServer(product, 'SIGTERM');
  const benchCpu = process.cpuUsage(benchCpuBefore);
  const arrivals = smtp.take();
  const workerStart = listeningTime(logFile);
  const { first, last, pauses, pauseSeconds } = arrivalSpan(arrivals);
  const start = workerStart ?? first;
  const statuses = await withDatabase(target, async (db) =>
    Object.fromEntries(
      (await db.selectFrom('mail_outbox').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).where('kind', '=', kind).groupBy('status').execute()).map((r) => [r.status, Number(r.n)]),
    ),
  );
  const { duplicates, missing, unexpected } = checkArrivals(arrivals, expected);
  const sent = statuses.sent ?? 0;
  const ok = duplicates === 0 && missing === 0 && unexpected === 0 && sent === expected.size;
  if (!ok && !failure) {
    failure = `${target.label} ${what}: ${missing} missing, ${duplicates} received twice or more, ${unexpected} unexpected; rows by status ${JSON.stringify(statuses)}`;
  }
  const seconds = (last - start) / 1000;
  if (options.profile) profiles.push(keepProfile(profileDir, `${target.label}-${kind}`, `${target.label} ${what}`, expected.size));
  return {
    database: target.label,
    what,
    kind: 'outbox',
    messages: arrivals.length,
    seconds,
    perSecond: expected.size / seconds,
    steadyPerSecond: (arrivals.length - 1) / ((last - first) / 1000),
    firstMs: first - start,
    pauses,
    pauseSeconds,
    senderCpu: (cpuAfter - cpuBefore) / ((cpuTo - cpuFrom) / 1000),
    smtpCpu: (benchCpu.user + benchCpu.system) / 1e6 / ((last - start) / 1000),
    peakRssMb,
    check: ok ? `all ${fmt(expected.size)} once, rows sent` : `FAILED (${missing} missing, ${duplicates} twice, rows ${JSON.stringify(statuses)})`,
    failure,
  };
}

const profiles: string[] = [];

/** The product's profile of one outbox phase (start-up and shutdown included): kept, and summarized by part. */
function keepProfile(dir: string, name: string, title: string, messages: number): string {
  const file = fs.existsSync(dir) ? fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile')) : undefined;
  if (!file) return `== ${title}: no .cpuprofile written`;
  const keptDir = path.join(projectRoot, 'bench-results/mail-profile');
  fs.mkdirSync(keptDir, { recursive: true });
  const kept = path.join(keptDir, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
  fs.copyFileSync(path.join(dir, file), kept);
  const summary = summarizeCpuProfile(JSON.parse(fs.readFileSync(kept, 'utf8')) as CpuProfile, { topFrames: 15 });
  // The categories are the signup bench's; a package's time is its own line ("package nodemailer").
  return [`== ${title}, profiled (start-up included; "per signup" is per message here)`, formatSummary(summary, messages), `profile: ${path.relative(process.cwd(), kept)}`].join('\n');
}

/** nodemailer straight to the SMTP server, in its own process: the floor. */
async function floorPhase(database: string, smtp: BenchSmtpServer, message: FloorMessage, connections: number, run: number): Promise<OutboxRow> {
  const command: FloorCommand = {
    type: 'run',
    transportModule: transportJs,
    smtpUrl: smtp.url,
    from: MAIL_FROM,
    count: options.messages,
    connections,
    message,
    toPrefix: `${prefix}-floor${run}`,
    idPrefix: `${prefix}-floor${run}`,
    idHost: messageIdHost,
  };
  smtp.take();
  const benchCpuBefore = process.cpuUsage();
  const child = fork(path.join(jsDir, 'lib/mail-floor.js'), ['--serve'], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const result = await new Promise<FloorResult>((resolve, reject) => {
    child.once('message', (reply: FloorResult) => resolve(reply));
    void exited.then((code) => reject(new Error(`the floor process exited (${code}) without a result`)));
    child.send(command);
  });
  await exited;
  const benchCpu = process.cpuUsage(benchCpuBefore);
  const arrivals = smtp.take();
  const expected = new Set(Array.from({ length: options.messages }, (_, i) => floorMessageId(command, i)));
  const { duplicates, missing, unexpected } = checkArrivals(arrivals, expected);
  const { first, last, pauses, pauseSeconds } = arrivalSpan(arrivals);
  const ok = duplicates === 0 && missing === 0 && unexpected === 0 && result.errors === 0;
  const seconds = (last - result.startedAt) / 1000;
  return {
    database,
    what: connections === 1 ? 'floor: nodemailer, product transport' : `floor: nodemailer, ${connections} connections`,
    kind: connections === 1 ? 'floor' : 'floor-k',
    messages: arrivals.length,
    seconds,
    perSecond: options.messages / seconds,
    steadyPerSecond: (arrivals.length - 1) / ((last - first) / 1000),
    firstMs: first - result.startedAt,
    pauses,
    pauseSeconds,
    senderCpu: result.cpuSeconds / ((result.finishedAt - result.startedAt) / 1000),
    smtpCpu: (benchCpu.user + benchCpu.system) / 1e6 / seconds,
    peakRssMb: Number.NaN,
    check: ok ? `all ${fmt(options.messages)} once` : `FAILED (${missing} missing, ${duplicates} twice, ${result.errors} send errors)`,
    failure: ok ? null : `${database} floor (${connections} connections): ${missing} missing, ${duplicates} twice, ${result.errors} send errors${result.firstError ? `, e.g. ${result.firstError}` : ''}`,
  };
}

/** N entries (status invited, as after "Invite selected") and their invites, queued by the server's own outbox code. */
async function seedInvites(db: Kysely<Database>): Promise<void> {
  const now = new Date().toISOString();
  const entries: WaitlistEntry[] = Array.from({ length: options.messages }, (_, i) => ({
    id: randomUUID(),
    email: `${prefix}-invite-${i}@example.com`,
    created_at: now,
    ip_address: null,
    ...entryLocation(null),
    ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION,
    status: 'invited',
    invited_at: now,
  }));
  await insertWaitlistEntriesSkippingDuplicates(db, entries);
  await enqueueManyMail(
    db,
    entries.map((e) => waitlistEmailMessage('invite', e)),
    { messageIdHost },
  );
}

/** N plain messages with their bodies and headers stored (no template), in one transaction. */
async function seedPrerendered(db: Kysely<Database>, message: FloorMessage): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < options.messages; i++) {
      await enqueueMail(trx, { kind: 'test', to: `${prefix}-plain-${i}@example.com`, ...message }, { messageIdHost });
    }
  });
}

/**
 * An invite as the worker renders it (the same React template, a manage link with a token of the
 * real shape), so the pre-rendered messages and the floor send the same bytes as the invites.
 */
async function prerenderedInvite(): Promise<FloorMessage> {
  const { renderInviteEmail } = await import('../../src/server/consent/emails/render.js');
  const token = `${randomBytes(22).toString('base64url')}.${randomBytes(16).toString('hex')}`;
  const manageUrl = new URL(`${PREFERENCES_PAGE_PATH}?token=${token}`, PUBLIC_URL).toString();
  const { text, html } = await renderInviteEmail({ inviteUrl: new URL(emailContent.invite.url, PUBLIC_URL).toString(), manageUrl });
  return {
    subject: waitlistEmailSubject('invite'),
    text,
    html,
    headers: { 'List-Unsubscribe': `<${manageUrl}>`, 'List-Unsubscribe-Post': `${ONE_CLICK_FIELD}=${ONE_CLICK_VALUE}` },
  };
}

let floorRuns = 0;
async function outboxBench(spec: string, smtp: BenchSmtpServer, message: FloorMessage): Promise<OutboxRow[]> {
  const target = await prepareTarget(spec, workDir);
  const rows: OutboxRow[] = [];
  try {
    await withDatabase(target, async (db) => {
      await migrateToLatest(db);
      await seedInvites(db);
    });
    if (target.label === 'sqlite') {
      const disk = sqliteCommitRate(workDir);
      process.stdout.write(`sqlite: bare better-sqlite3 serial commits (WAL, synchronous=FULL) in the temp dir: ${fmt(disk.perSecond)}/s, median ${fmt(disk.medianMs, 2)} ms\n`);
    }
    process.stdout.write(`${target.label}: ${loadNow()}; floor`);
    rows.push(await floorPhase(target.label, smtp, message, 1, floorRuns++));
    process.stdout.write(', invites');
    rows.push(await outboxPhase(target, smtp, 'outbox: invites, rendered at send', 'invite'));
    await withDatabase(target, (db) => seedPrerendered(db, message));
    process.stdout.write(', pre-rendered');
    rows.push(await outboxPhase(target, smtp, 'outbox: pre-rendered', 'test'));
    if (options.floorConnections > 1) {
      process.stdout.write(`, floor ×${options.floorConnections}`);
      rows.push(await floorPhase(target.label, smtp, message, options.floorConnections, floorRuns++));
    }
    process.stdout.write(`; ${loadNow()}\n`);
    return rows;
  } finally {
    await target.cleanup();
  }
}

function printOutbox(rows: OutboxRow[]): void {
  const header = ['database', 'sender', 'messages', 'seconds', 'msg/s', 'vs floor', 'first→last msg/s', 'first msg ms', `pauses ≥${PAUSE_MS} ms`, 'sender CPU', 'SMTP CPU', 'peak RSS MB', 'check'];
  const lines = rows.map((r) => {
    const floor = rows.find((f) => f.database === r.database && f.kind === 'floor');
    return [
      r.database,
      r.what,
      fmt(r.messages),
      fmt(r.seconds, 2),
      fmt(r.perSecond),
      floor && r !== floor ? `${(r.perSecond / floor.perSecond).toFixed(2)}×` : '-',
      fmt(r.steadyPerSecond),
      fmt(r.firstMs),
      `${fmt(r.pauses)} = ${fmt(r.pauseSeconds, 2)} s`,
      pct(r.senderCpu),
      pct(r.smtpCpu),
      fmt(r.peakRssMb),
      r.check,
    ];
  });
  console.log(table(header, lines, new Set([0, 1, 12])));
}

// ---- 2. signups with confirmation on and off ----------------------------------------------------


type Confirmation = 'off' | 'required';

interface SignupPhase extends PhaseResult {
  confirmation: Confirmation;
  warmup: boolean;
  serverCpuSeconds: number;
  /** Confirmations received during the phase, and after it until the worker had sent them all. */
  mailDuring: number;
  mailAfter: number;
  drainSeconds: number;
}

interface SignupRow {
  database: string;
  confirmation: Confirmation;
  signupsPerSecond: number;
  p50: number;
  p99: number;
  serverCpu: number;
  generatorCpu: number;
  statuses: Record<string, number>;
  mailDuring: number;
  mailAfter: number;
  drainSeconds: number;
  /** Signups over the phases plus the waits for their confirmations to be sent. */
  deliveredPerSecond: number;
  rounds: Array<{ signupsPerSecond: number; p99: number }>;
}

function summarizeSignups(database: string, confirmation: Confirmation, phases: SignupPhase[]): SignupRow {
  const elapsed = phases.reduce((s, p) => s + p.elapsed, 0);
  const statuses: Record<string, number> = {};
  for (const p of phases) for (const [status, n] of Object.entries(p.statuses)) statuses[status] = (statuses[status] ?? 0) + n;
  const histogram = phases.reduce((h, p) => mergeHistograms(h, p.histogram), emptyHistogram());
  const created = statuses['201'] ?? 0;
  const drainSeconds = phases.reduce((s, p) => s + p.drainSeconds, 0);
  return {
    database,
    confirmation,
    signupsPerSecond: created / elapsed,
    p50: quantileMs(histogram, 0.5),
    p99: quantileMs(histogram, 0.99),
    serverCpu: phases.reduce((s, p) => s + p.serverCpuSeconds, 0) / elapsed,
    generatorCpu: phases.reduce((s, p) => s + p.cpuSeconds, 0) / elapsed,
    statuses,
    mailDuring: phases.reduce((s, p) => s + p.mailDuring, 0),
    mailAfter: phases.reduce((s, p) => s + p.mailAfter, 0),
    drainSeconds,
    deliveredPerSecond: created / (elapsed + drainSeconds),
    rounds: phases.map((p) => ({ signupsPerSecond: (p.statuses['201'] ?? 0) / p.elapsed, p99: quantileMs(p.histogram, 0.99) })),
  };
}

interface StoredEntries {
  /** Signup number → entry status, for this run's addresses. */
  status: Map<number, string>;
  /** Lower-cased address → its outbox rows. */
  mail: Map<string, Array<{ kind: string; status: string; messageId: string }>>;
  mailRows: number;
}

async function readStored(target: Target): Promise<StoredEntries> {
  return withDatabase(target, async (db) => {
    const entries = await db.selectFrom('waitlist').select(['email', 'status']).where('email', 'like', `${prefix}-%`).execute();
    const status = new Map<number, string>();
    for (const e of entries) {
      const n = benchNumber(prefix, e.email);
      if (n !== null) status.set(n, e.status);
    }
    const rows = await db.selectFrom('mail_outbox').select(['to_address', 'kind', 'status', 'message_id']).execute();
    const mail = new Map<string, Array<{ kind: string; status: string; messageId: string }>>();
    for (const r of rows) {
      const key = r.to_address.toLowerCase();
      if (!mail.has(key)) mail.set(key, []);
      mail.get(key)!.push({ kind: r.kind, status: r.status, messageId: r.message_id });
    }
    return { status, mail, mailRows: rows.length };
  });
}

/**
 * After the crash: every acknowledged signup stored where it was sent; with confirmation on, each
 * stored entry pending with exactly one confirmation queued, being sent or sent, and no message
 * received twice or without its row; with it off, joined and no message.
 */
async function verifySignups(generator: Generator, targets: Record<Confirmation, Target>, phases: SignupPhase[], arrivals: Arrival[]): Promise<{ lines: string[]; failures: string[] }> {
  const file = path.join(workDir, `acks-${targets.off.label}.bin`);
  await generator.acks(file);
  const acks = fs.readFileSync(file);
  fs.rmSync(file);
  const stored = { off: await readStored(targets.off), required: await readStored(targets.required) };
  const lines: string[] = [];
  const failures: string[] = [];
  const database = targets.off.label;

  for (const confirmation of ['off', 'required'] as const) {
    let acknowledged = 0;
    const missing: number[] = [];
    for (const p of phases.filter((ph) => ph.confirmation === confirmation)) {
      for (let n = p.numbers[0]; n < p.numbers[1]; n++) {
        if (!acks[n]) continue;
        acknowledged += 1;
        if (!stored[confirmation].status.has(n)) missing.push(n);
      }
    }
    const byStatus: Record<string, number> = {};
    for (const s of stored[confirmation].status.values()) byStatus[s] = (byStatus[s] ?? 0) + 1;
    const expectedStatus = confirmation === 'off' ? 'joined' : 'pending';
    const wrongStatus = stored[confirmation].status.size - (byStatus[expectedStatus] ?? 0);
    if (missing.length > 0) {
      failures.push(`${database} confirmation ${confirmation}: ${missing.length} of ${acknowledged} acknowledged signups NOT stored after SIGKILL, e.g. ${missing.slice(0, 3).map((n) => `${prefix}-${n}@example.com`).join(', ')}`);
    }
    if (wrongStatus > 0) failures.push(`${database} confirmation ${confirmation}: entries by status ${JSON.stringify(byStatus)}, expected all ${expectedStatus}`);

    if (confirmation === 'off') {
      if (stored.off.mailRows > 0) failures.push(`${database} confirmation off: ${stored.off.mailRows} outbox rows, expected none`);
      lines.push(`${database}, confirmation off: ${fmt(acknowledged)} acknowledged, all stored: ${missing.length === 0 ? 'yes' : 'NO'}; ${fmt(stored.off.status.size)} entries (${JSON.stringify(byStatus)}); outbox rows: ${stored.off.mailRows}`);
      continue;
    }

    // Confirmation required: one live confirmation per stored entry, each received at most once.
    const rowByMessageId = new Map<string, string>();
    const rowStatuses: Record<string, number> = {};
    for (const rows of stored.required.mail.values()) {
      for (const r of rows) {
        rowByMessageId.set(r.messageId, r.status);
        rowStatuses[`${r.kind} ${r.status}`] = (rowStatuses[`${r.kind} ${r.status}`] ?? 0) + 1;
      }
    }
    let notExactlyOne = 0;
    const examples: string[] = [];
    for (const n of stored.required.status.keys()) {
      const email = `${prefix}-${n}@example.com`;
      const live = (stored.required.mail.get(email) ?? []).filter((r) => r.kind === 'confirmation' && ['queued', 'sending', 'sent'].includes(r.status)).length;
      if (live !== 1) {
        notExactlyOne += 1;
        if (examples.length < 3) examples.push(`${email}: ${live}`);
      }
    }
    const received = new Map<string, number>();
    for (const a of arrivals) received.set(a.messageId, (received.get(a.messageId) ?? 0) + 1);
    let twice = 0;
    let withoutRow = 0;
    let sentNotReceived = 0;
    for (const [id, count] of received) {
      if (!rowByMessageId.has(id)) withoutRow += count;
      else if (count > 1) twice += count - 1;
    }
    for (const [id, status] of rowByMessageId) if (status === 'sent' && !received.has(id)) sentNotReceived += 1;
    if (notExactlyOne > 0) failures.push(`${database} confirmation required: ${notExactlyOne} stored entries without exactly one queued-or-sent confirmation, e.g. ${examples.join(', ')}`);
    if (twice + withoutRow + sentNotReceived > 0) {
      failures.push(`${database} confirmation required: ${twice} confirmations received twice, ${withoutRow} received without an outbox row, ${sentNotReceived} rows marked sent but never received`);
    }
    lines.push(
      `${database}, confirmation required: ${fmt(acknowledged)} acknowledged, all stored: ${missing.length === 0 ? 'yes' : 'NO'}; ${fmt(stored.required.status.size)} entries (${JSON.stringify(byStatus)}); ` +
        `exactly one confirmation queued or sent for each: ${notExactlyOne === 0 ? 'yes' : 'NO'} (rows: ${JSON.stringify(rowStatuses)}); ` +
        `${fmt(arrivals.length)} received by SMTP, none twice: ${twice === 0 && withoutRow === 0 ? 'yes' : 'NO'}`,
    );
  }
  return { lines, failures };
}

async function signupBench(generator: Generator, spec: string, smtp: BenchSmtpServer): Promise<{ rows: SignupRow[]; lines: string[]; failures: string[] }> {
  const targets = { off: await prepareTarget(spec, workDir), required: await prepareTarget(spec, workDir) };
  const servers: Partial<Record<Confirmation, ServerProcess>> = {};
  try {
    servers.off = await startProduct(targets.off, smtp, 'off');
    servers.required = await startProduct(targets.required, smtp, 'required');
    smtp.take();
    const database = targets.off.label;
    process.stdout.write(`${database}: ${loadNow()}; warm-up`);
    const phases: SignupPhase[] = [];
    /** 201s of the `required` server so far: each is one confirmation to send. */
    let confirmationsDue = 0;
    const phase = async (confirmation: Confirmation, seconds: number, warmup: boolean) => {
      const server = servers[confirmation]!;
      const mailBefore = smtp.count;
      const cpuBefore = cpuSeconds(server.pid) ?? Number.NaN;
      const result = await generator.run(server.port, seconds, true);
      const cpuAfter = cpuSeconds(server.pid) ?? Number.NaN;
      const mailEnd = smtp.count;
      let drainSeconds = 0;
      if (confirmation === 'required') {
        confirmationsDue += result.statuses['201'] ?? 0;
        const from = Date.now();
        await smtp.waitFor(confirmationsDue, STALL_MS, () => {
          if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error(`${server.name} exited:\n${server.stderr()}`);
        });
        drainSeconds = (Date.now() - from) / 1000;
      }
      phases.push({ ...result, confirmation, warmup, serverCpuSeconds: cpuAfter - cpuBefore, mailDuring: mailEnd - mailBefore, mailAfter: smtp.count - mailEnd, drainSeconds });
      if (confirmation === 'required') process.stdout.write(` (${fmt(smtp.count - mailBefore)} confirmations sent, ${fmt(drainSeconds)} s after the load)`);
    };
    await phase('off', options.warmup, true);
    await phase('required', options.warmup, true);
    for (let round = 1; round <= options.rounds; round++) {
      process.stdout.write(`, round ${round}`);
      await phase('off', options.seconds, false);
      await phase('required', options.seconds, false);
    }
    process.stdout.write(`; ${loadNow()}\n`);
    // A crash, not a shutdown: whatever was acknowledged must already be in the database, with its e-mail.
    await stopServer(servers.off, 'SIGKILL');
    await stopServer(servers.required, 'SIGKILL');
    const arrivals = smtp.take();
    const measured = phases.filter((p) => !p.warmup);
    const rows = (['off', 'required'] as const).map((c) => summarizeSignups(database, c, measured.filter((p) => p.confirmation === c)));
    const { lines, failures } = await verifySignups(generator, targets, phases, arrivals);
    return { rows, lines, failures };
  } finally {
    for (const server of Object.values(servers)) await stopServer(server, 'SIGKILL');
    await targets.off.cleanup();
    await targets.required.cleanup();
  }
}


function printSignups(rows: SignupRow[]): void {
  const header = ['database', 'confirmation', 'signups/s', 'on/off', 'p50 ms', 'p99 ms', 'server CPU', 'gen. CPU', 'mails during', 'mails after', 'wait s', 'incl. wait/s', 'non-201'];
  const lines = rows.map((r) => {
    const off = rows.find((o) => o.database === r.database && o.confirmation === 'off');
    const on = r.confirmation === 'required';
    return [
      r.database,
      r.confirmation,
      fmt(r.signupsPerSecond),
      on && off ? `${(r.signupsPerSecond / off.signupsPerSecond).toFixed(2)}×` : '-',
      fmt(r.p50, 1),
      fmt(r.p99, 1),
      pct(r.serverCpu),
      pct(r.generatorCpu),
      on ? fmt(r.mailDuring) : '-',
      on ? fmt(r.mailAfter) : '-',
      on ? fmt(r.drainSeconds, 2) : '-',
      on ? fmt(r.deliveredPerSecond) : '-',
      otherStatuses(r.statuses),
    ];
  });
  console.log(table(header, lines, new Set([0, 1, 12])));
  console.log('');
  for (const r of rows) console.log(`  ${r.database} ${r.confirmation} per round: ${r.rounds.map((x) => `${fmt(x.signupsPerSecond)}/s p99 ${fmt(x.p99, 1)} ms`).join(' | ')}`);
}

// ---- the run ------------------------------------------------------------------------------------



const specs = await databaseSpecs(flags.databases ?? process.env.BENCH_DATABASE_URLS);
const smtp = await startBenchSmtpServer();
const relativeMain = mainJs.startsWith(process.cwd() + path.sep) ? path.relative(process.cwd(), mainJs) : mainJs;
console.log(
  [
    'mail benchmark',
    machineDescription(),
    `product: node ${relativeMain} (${options.label ?? gitDescription(options.root)}), SMTP to smtp-server in the bench process (${smtp.url}, no TLS, no auth, accepts everything; it greets a new connection after 100 ms, its early-talker check), PUBLIC_URL=${PUBLIC_URL}, LOG_LEVEL=${options.logLevel}`,
    `outbox worker (the build's defaults): ${workerSettings()}`,
    options.outbox
      ? `outbox: ${fmt(options.messages)} messages per phase; rate = messages / (last received − worker start); the floor's from its first send; CPU columns are shares of one core (${os.cpus().length} cores)`
      : null,
    options.signups
      ? `signups: ${options.connections} keep-alive connections (the signup bench's generator), warm-up ${options.warmup} s each, then ${options.rounds} × (off ${options.seconds} s, required ${options.seconds} s), each required phase followed by a wait until its confirmations are sent`
      : null,
    '',
  ]
    .filter((l) => l !== null)
    .join('\n'),
);

const failures: string[] = [];
const outboxRows: OutboxRow[] = [];
const signupRows: SignupRow[] = [];
const checks: string[] = [];
const generator = options.signups ? startGenerator({ jsDir, prefix, ipv6Share: options.ipv6Share, connections: options.connections }) : null;
try {
  if (options.outbox) {
    const message = await prerenderedInvite();
    console.log(`message: the invite, ${fmt(Buffer.byteLength(message.html))} bytes of HTML and ${fmt(Buffer.byteLength(message.text))} of text (the pre-rendered phase and the floor send these bodies)`);
    for (const spec of specs) {
      const rows = await outboxBench(spec, smtp, message);
      outboxRows.push(...rows);
      for (const r of rows) if (r.failure) failures.push(r.failure);
    }
  }
  if (generator) {
    for (const spec of specs) {
      const result = await signupBench(generator, spec, smtp);
      signupRows.push(...result.rows);
      checks.push(...result.lines);
      failures.push(...result.failures);
    }
  }
} finally {
  generator?.stop();
  await smtp.close();
  removeWorkDir(workDir, jsDir);
}

if (outboxRows.length > 0) {
  console.log(`\nOutbox throughput${options.profile ? ' (the product profiled: slower)' : ''}\n`);
  printOutbox(outboxRows);
  if (profiles.length > 0) console.log(`\n${profiles.join('\n\n')}`);
}
if (signupRows.length > 0) {
  console.log('\nSignups with double opt-in on (required) beside off\n');
  printSignups(signupRows);
  console.log('');
  for (const line of checks) console.log(line);
}
console.log(`\nat the end: ${loadNow()}`);
if (flags.json) fs.writeFileSync(flags.json, JSON.stringify({ options, machine: machineDescription(), worker: workerSettings(), outbox: outboxRows, signups: signupRows, checks }, null, 2));

if (failures.length > 0) {
  console.error(`\nFAILED\n${failures.map((f) => `  ${f}`).join('\n')}`);
  process.exit(1);
}
