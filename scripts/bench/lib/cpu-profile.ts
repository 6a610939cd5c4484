/**
 * Summarizes a V8 `.cpuprofile` (node --cpu-prof) of the server by what a signup spends its time
 * on: each sample's time goes to the innermost frame on its stack that belongs to a known part
 * (a package under node_modules, or a folder of the server), so JSON.parse called by Fastify's
 * body parser counts as JSON parsing and a regular expression run by the e-mail rule as validation.
 * Node's own socket, stream and HTTP-parser frames count as "HTTP and sockets" only when nothing
 * more specific is above them (a pg socket write counts as the insert).
 *
 * It only sees the main thread: time a synchronous call spends blocked (better-sqlite3 waiting for
 * fsync) shows as that call's time, while libuv's thread pool and V8's helper threads are not in it.
 *
 * The production server is a minified bundle (scripts/bundle-server.ts): a frame in a file that has
 * a source map beside it (`FILE.js.map`) is read as the source it came from (src/server/…, or a
 * package's own file under node_modules), so the parts are told apart as before.
 *
 *   npx tsx scripts/bench/lib/cpu-profile.ts FILE.cpuprofile [--signups N] [--from µs --to µs] [--sqlite]
 */
import fs from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export const CATEGORIES = {
  http: 'HTTP parser, sockets, streams (node core)',
  fastify: 'Fastify routing, hooks, reply',
  json: 'JSON body: read + JSON.parse',
  validation: 'request validation (zod + e-mail rule)',
  serialization: 'response serialization',
  rateLimit: 'rate-limit counter',
  geolocation: 'geolocation lookup (maxmind)',
  logging: 'request logging (pino)',
  insert: 'insert + group commit (kysely + driver; SQLite: incl. fsync wait)',
  database: 'insert + rate-limit SQL, after an await (not separable)',
  security: 'security headers (helmet)',
  compression: 'compression hook',
  attribution: 'attribution',
  consent: 'consent record + suppression hash',
  screening: 'address screening (throwaway list, MX check)',
  challenge: 'signup challenge',
  live: 'live-update publishing',
  handler: 'signup route + service code',
  app: 'other server code',
  unattributed: 'other JS (no known frame)',
  gc: 'garbage collection',
  program: '(program): native, not attributed',
  idle: 'idle',
} as const;
export type Category = (typeof CATEGORIES)[keyof typeof CATEGORIES] | `package ${string}`;

type Verdict = { strength: 'strong' | 'weak'; category: Category } | { strength: 'pass' } | { strength: 'final'; category: Category };

const PACKAGE_CATEGORIES: Record<string, Category> = {};
const packagesOf = (category: Category, names: string[]) => names.forEach((name) => (PACKAGE_CATEGORIES[name] = category));
packagesOf(CATEGORIES.validation, ['zod', 'fastify-type-provider-zod', 'ajv', 'ajv-formats', '@fastify/ajv-compiler', 'fast-uri']);
packagesOf(CATEGORIES.json, ['secure-json-parse']);
packagesOf(CATEGORIES.serialization, ['fast-json-stringify', '@fastify/fast-json-stringify-compiler', 'json-schema-ref-resolver']);
packagesOf(CATEGORIES.rateLimit, ['@fastify/rate-limit', 'ip-address', 'toad-cache', 'ioredis', 'rate-limiter-flexible']);
packagesOf(CATEGORIES.geolocation, ['maxmind', 'mmdb-lib', 'tiny-lru']);
packagesOf(CATEGORIES.screening, ['tldts', 'tldts-core', 'disposable-email-domains']);
packagesOf(CATEGORIES.logging, [
  'pino',
  'sonic-boom',
  'pino-std-serializers',
  '@pinojs/redact',
  'fast-redact',
  'thread-stream',
  'on-exit-leak-free',
  'quick-format-unescaped',
  'atomic-sleep',
  'safe-stable-stringify',
  'fast-safe-stringify',
  'real-require',
  'abstract-logging',
]);
packagesOf(CATEGORIES.insert, [
  'better-sqlite3',
  'bindings',
  'kysely',
  'pg',
  'pg-pool',
  'pg-protocol',
  'pg-types',
  'pg-int8',
  'pg-connection-string',
  'postgres-array',
  'postgres-bytea',
  'postgres-date',
  'postgres-interval',
  'pgpass',
  'split2',
]);
packagesOf(CATEGORIES.security, ['@fastify/helmet', 'helmet']);
packagesOf(CATEGORIES.compression, ['@fastify/compress', 'mime-db', 'minipass', 'duplexify', 'peek-stream', 'pumpify', 'through2']);
packagesOf(CATEGORIES.fastify, [
  'fastify',
  'find-my-way',
  'avvio',
  'fastify-plugin',
  'light-my-request',
  '@fastify/error',
  '@fastify/formbody',
  '@fastify/proxy-addr',
  '@fastify/forwarded',
  '@fastify/merge-json-schemas',
  'proxy-addr',
  'forwarded',
  'ipaddr.js',
  'fast-querystring',
  'fast-decode-uri-component',
  'process-warning',
  'rfdc',
  'ret',
  'safe-regex2',
  'content-type',
  'fast-content-type-parse',
  'set-cookie-parser',
  'cookie',
  'semver',
  'fastq',
  'reusify',
]);

// Files inside a package that do another category's work.
const FILE_CATEGORIES: Array<[RegExp, Category]> = [
  [/\/node_modules\/fastify\/lib\/content-type-parser\.js$/, CATEGORIES.json],
  [/\/node_modules\/fastify\/lib\/(log-controller|logger-factory|logger-pino)\.js$/, CATEGORIES.logging],
  [/\/node_modules\/fastify\/lib\/validation\.js$/, CATEGORIES.validation],
];

// The server's own folders (compiled under dist/, or run from src/ by tsx).
const APP_CATEGORIES: Array<[RegExp, Category]> = [
  [/\/(dist|src)\/server\/geolocation\//, CATEGORIES.geolocation],
  [/\/(dist|src)\/server\/rate-limit\//, CATEGORIES.rateLimit],
  [/\/(dist|src)\/server\/db\//, CATEGORIES.insert],
  [/\/(dist|src)\/server\/signup\/(repository|batcher)\.[jt]s$/, CATEGORIES.insert],
  [/\/(dist|src)\/(shared\/waitlist\/email|server\/signup\/schema)\.[jt]s$/, CATEGORIES.validation],
  [/\/(dist|src)\/shared\/waitlist\/attribution\.[jt]s$/, CATEGORIES.attribution],
  [/\/(dist|src)\/server\/(consent|records|crypto)\//, CATEGORIES.consent],
  [/\/(dist|src)\/server\/(email-domains\/|signup\/screening)/, CATEGORIES.screening],
  [/\/(dist|src)\/server\/challenge\//, CATEGORIES.challenge],
  [/\/(dist|src)\/server\/(live|pubsub)\//, CATEGORIES.live],
  [/\/(dist|src)\/server\/http\/request-log\.[jt]s$/, CATEGORIES.logging],
  [/\/(dist|src)\/server\/http\/security\.[jt]s$/, CATEGORIES.security],
  [/\/(dist|src)\/server\/signup\//, CATEGORIES.handler],
  [/\/(dist|src)\/(server|shared)\//, CATEGORIES.app],
];

const NODE_IO = /^node:(_http_|net$|stream$|_stream_|internal\/(stream_base_commons|streams\/|http|net|js_stream_socket|child_process))/;

export function packageName(url: string): string | null {
  const at = url.lastIndexOf('/node_modules/');
  if (at < 0) return null;
  const parts = url.slice(at + '/node_modules/'.length).split('/');
  return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1] ?? ''}` : (parts[0] ?? null);
}

function classify(frame: CallFrame): Verdict {
  const { functionName, url } = frame;
  if (url === '') {
    if (functionName === '(garbage collector)') return { strength: 'final', category: CATEGORIES.gc };
    if (functionName === '(idle)') return { strength: 'final', category: CATEGORIES.idle };
    if (functionName === '(program)') return { strength: 'final', category: CATEGORIES.program };
    return { strength: 'pass' }; // builtins, native bindings, RegExp: their caller says what they are for
  }
  if (url.startsWith('node:')) return NODE_IO.test(url) ? { strength: 'weak', category: CATEGORIES.http } : { strength: 'pass' };
  for (const [pattern, category] of FILE_CATEGORIES) if (pattern.test(url)) return { strength: 'strong', category };
  const pkg = packageName(url);
  if (pkg) return { strength: 'strong', category: PACKAGE_CATEGORIES[pkg] ?? `package ${pkg}` };
  for (const [pattern, category] of APP_CATEGORIES) if (pattern.test(url)) return { strength: 'strong', category };
  return { strength: 'pass' };
}

/** Parts that only dispatch: node's socket and parser frames beneath them are HTTP work. */
const DISPATCHERS = new Set<Category>([CATEGORIES.fastify, CATEGORIES.handler, CATEGORIES.app]);

export interface CategoryTime {
  category: Category;
  microseconds: number;
}
export interface FrameTime {
  frame: string;
  category: Category;
  microseconds: number;
}
export interface ProfileSummary {
  /** Wall time covered by the samples taken into account, µs. */
  wallMicroseconds: number;
  /** The same minus idle, µs. */
  busyMicroseconds: number;
  categories: CategoryTime[];
  topFrames: FrameTime[];
  samples: number;
}

export interface SummaryOptions {
  /** Only samples taken within [from, to] (µs, the profile's clock: CLOCK_MONOTONIC, as process.hrtime). */
  from?: number;
  to?: number;
  topFrames?: number;
  /**
   * The profiled server ran on SQLite: its rate limit counts in memory, so every database frame
   * is the insert, also after an await (on PostgreSQL the rate-limit SQL shares those frames).
   */
  sqlite?: boolean;
}

/** The source maps of the profiled files, read once each (null: the file has none). */
function sourceMapReader(): (url: string) => SourceMap | null {
  const maps = new Map<string, SourceMap | null>();
  return (url) => {
    let map = maps.get(url);
    if (map === undefined) {
      map = null;
      if (url.startsWith('file:')) {
        try {
          map = new SourceMap(JSON.parse(fs.readFileSync(fileURLToPath(`${url}.map`), 'utf8')) as SourceMapPayload);
        } catch {
          // No map beside it: the frame is read as it is.
        }
      }
      maps.set(url, map);
    }
    return map;
  };
}

/** A frame of a bundled file as the source it came from (its URL, 0-based line and column). */
function originalFrame(frame: CallFrame, mapOf: (url: string) => SourceMap | null): CallFrame {
  const map = mapOf(frame.url);
  if (!map || frame.lineNumber < 0) return frame;
  const entry = map.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string; originalLine?: number; originalColumn?: number };
  if (!entry.originalSource) return frame;
  return {
    ...frame,
    url: new URL(entry.originalSource, frame.url).href,
    lineNumber: entry.originalLine ?? frame.lineNumber,
    columnNumber: entry.originalColumn ?? frame.columnNumber,
  };
}

export function summarizeCpuProfile(original: CpuProfile, options: SummaryOptions = {}): ProfileSummary {
  const mapOf = sourceMapReader();
  const profile: CpuProfile = { ...original, nodes: original.nodes.map((node) => ({ ...node, callFrame: originalFrame(node.callFrame, mapOf) })) };
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

  const categoryCache = new Map<number, Category>();
  const categoryOf = (id: number): Category => {
    const cached = categoryCache.get(id);
    if (cached) return cached;
    let weak: Category | null = null;
    let result: Category | null = null;
    for (let at: number | undefined = id; at !== undefined && result === null; at = parentOf.get(at)) {
      const verdict = classify(byId.get(at)!.callFrame);
      if (verdict.strength === 'final') result = verdict.category;
      else if (verdict.strength === 'weak') weak ??= verdict.category;
      else if (verdict.strength === 'strong') {
        if (weak && DISPATCHERS.has(verdict.category)) result = weak;
        else if (verdict.category === CATEGORIES.validation) result = refineZod(at);
        else if (verdict.category === CATEGORIES.insert) result = refineDatabase(at);
        else result = verdict.category;
      }
    }
    result ??= weak ?? CATEGORIES.unattributed;
    categoryCache.set(id, result);
    return result;
  };
  // The zod serializer compiler of fastify-type-provider-zod runs zod on the answer too.
  const refineZod = (id: number): Category => {
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const { url } = byId.get(at)!.callFrame;
      if (url.endsWith('/fastify/lib/reply.js')) return CATEGORIES.serialization;
      if (url.endsWith('/fastify/lib/validation.js') || url.endsWith('/fastify/lib/handle-request.js')) return CATEGORIES.validation;
    }
    return CATEGORIES.validation;
  };

  // Kysely and the drivers serve the insert and (on PostgreSQL) the rate-limit store alike: the
  // caller up the stack says which, when the stack still has it. After an await it does not.
  const refineDatabase = (id: number): Category => {
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const { url } = byId.get(at)!.callFrame;
      if (/\/(dist|src)\/server\/rate-limit\/|\/node_modules\/@fastify\/rate-limit\//.test(url)) return CATEGORIES.rateLimit;
      if (/\/(dist|src)\/server\/signup\//.test(url)) return CATEGORIES.insert;
    }
    return options.sqlite ? CATEGORIES.insert : CATEGORIES.database;
  };

  // Sample i lasts until sample i + 1 (as DevTools counts it); the last one lasts a typical interval.
  const { samples, timeDeltas } = profile;
  const times = new Array<number>(samples.length);
  let clock = profile.startTime;
  for (let i = 0; i < samples.length; i++) times[i] = clock += timeDeltas[i] ?? 0;
  const typical = [...timeDeltas].sort((a, b) => a - b)[Math.floor(timeDeltas.length / 2)] ?? 1000;
  const from = options.from ?? -Infinity;
  const to = options.to ?? Infinity;

  const perCategory = new Map<Category, number>();
  const perFrame = new Map<string, FrameTime>();
  let wall = 0;
  let counted = 0;
  for (let i = 0; i < samples.length; i++) {
    const at = times[i]!;
    if (at < from || at > to) continue;
    const duration = i + 1 < samples.length ? times[i + 1]! - at : typical;
    const id = samples[i]!;
    const category = categoryOf(id);
    perCategory.set(category, (perCategory.get(category) ?? 0) + duration);
    wall += duration;
    counted += 1;
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const name = `${functionName || '(anonymous)'} ${shortUrl(url)}${url ? `:${lineNumber + 1}` : ''}`;
    // The same native frame (writev) works for several parts: one line per frame and part.
    const key = `${name}\u0000${category}`;
    const frame = perFrame.get(key) ?? { frame: name, category, microseconds: 0 };
    frame.microseconds += duration;
    perFrame.set(key, frame);
  }
  const idle = perCategory.get(CATEGORIES.idle) ?? 0;
  return {
    wallMicroseconds: wall,
    busyMicroseconds: wall - idle,
    samples: counted,
    categories: [...perCategory].map(([category, microseconds]) => ({ category, microseconds })).sort((a, b) => b.microseconds - a.microseconds),
    topFrames: [...perFrame.values()]
      .filter((f) => f.category !== CATEGORIES.idle)
      .sort((a, b) => b.microseconds - a.microseconds)
      .slice(0, options.topFrames ?? 25),
  };
}

function shortUrl(url: string): string {
  const pkg = url.lastIndexOf('/node_modules/');
  if (pkg >= 0) return url.slice(pkg + '/node_modules/'.length);
  const app = /\/((dist|src)\/(server|shared)\/.*)$/.exec(url);
  return app?.[1] ?? url.replace(/^file:\/\//, '');
}

/** The summary as text: one line per category with its share and its cost per signup. */
export function formatSummary(summary: ProfileSummary, signups?: number): string {
  const { wallMicroseconds: wall, busyMicroseconds: busy } = summary;
  const lines: string[] = [];
  const perSignup = (us: number) => (signups ? (us / signups).toFixed(1).padStart(9) : '        -');
  lines.push(
    `${(wall / 1e6).toFixed(2)} s of main-thread samples (${summary.samples}), ${((busy / wall) * 100).toFixed(0)}% busy` +
      (signups ? `, ${signups} signups answered meanwhile: ${(busy / signups).toFixed(1)} µs busy per signup` : ''),
  );
  lines.push('(main-thread wall time: a blocking call such as fsync, and time spent waiting for a core, count as the frame that was running)');
  lines.push(`${'category'.padEnd(58)} ${'% busy'.padStart(7)} ${'% wall'.padStart(7)} ${'µs/signup'.padStart(9)}`);
  for (const { category, microseconds } of summary.categories) {
    const ofBusy = category === CATEGORIES.idle ? '' : ((microseconds / busy) * 100).toFixed(1);
    lines.push(`${category.padEnd(58)} ${ofBusy.padStart(7)} ${((microseconds / wall) * 100).toFixed(1).padStart(7)} ${perSignup(microseconds)}`);
  }
  lines.push('', 'heaviest frames (self time):');
  for (const frame of summary.topFrames) {
    lines.push(`${((frame.microseconds / busy) * 100).toFixed(1).padStart(5)}%  ${frame.frame.slice(0, 90).padEnd(90)}  ${frame.category}`);
  }
  return lines.join('\n');
}

// As a command: summarize any .cpuprofile.
if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { signups: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, top: { type: 'string' }, sqlite: { type: 'boolean' } },
  });
  if (positionals.length !== 1) {
    process.stderr.write('usage: tsx scripts/bench/lib/cpu-profile.ts FILE.cpuprofile [--signups N] [--from µs --to µs] [--top N] [--sqlite]\n');
    process.exit(2);
  }
  const profile = JSON.parse(fs.readFileSync(positionals[0]!, 'utf8')) as CpuProfile;
  const summary = summarizeCpuProfile(profile, {
    from: values.from ? Number(values.from) : undefined,
    to: values.to ? Number(values.to) : undefined,
    topFrames: values.top ? Number(values.top) : undefined,
    sqlite: values.sqlite,
  });
  console.log(formatSummary(summary, values.signups ? Number(values.signups) : undefined));
}
