/**
 * What the signup and mail benchmarks share: the load generator's client (the generator runs in its
 * own process, see load-generator.ts), the databases a run measures, and the output's small helpers.
 */
import { execFileSync, fork } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { FillResult } from './challenge-pool.js';
import type { GeneratorMessage, GeneratorReply, OpenPhaseResult, PhaseResult } from './load-generator.js';
import { createScratchPostgres, postgresAnswers, scratchSqlite } from './servers.js';

export const DEFAULT_POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';

/** `--flag`, else the environment variable, else the default; a non-negative number. */
export function numberOption(flag: string | undefined, env: string | undefined, fallback: number): number {
  const value = Number(flag ?? env ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`not a number: ${flag ?? env}`);
  return value;
}

/**
 * The load generator's sources (relative to scripts/bench), for compile.ts: its own modules and the
 * project's files they import (the server's isPublicIp, the form's proof-of-work search and contract).
 */
export const GENERATOR_SOURCES = [
  'lib/load-generator.ts',
  'lib/addresses.ts',
  'lib/challenge-pool.ts',
  'lib/histogram.ts',
  'lib/open-loop.ts',
  'lib/response-reader.ts',
  '../../src/server/geolocation/ip.ts',
  '../../src/shared/waitlist/challenge-contract.ts',
  '../../src/web/waitlist/pow-search.ts',
] as const;

export interface GeneratorSettings {
  /** The transpiled bench scripts (compile.ts), holding lib/load-generator.js. */
  jsDir: string;
  /** E-mail prefix of this run (letters and digits). */
  prefix: string;
  ipv6Share: number;
  connections: number;
}

/** Forks the load generator and talks to it over IPC, one request at a time. */
export function startGenerator(settings: GeneratorSettings) {
  const child = fork(path.join(settings.jsDir, 'lib/load-generator.js'), ['--serve'], {
    execArgv: [],
    env: { ...process.env, BENCH_PREFIX: settings.prefix, BENCH_IPV6_SHARE: String(settings.ipv6Share) },
  });
  let nextId = 0;
  const waiting = new Map<number, { resolve: (reply: GeneratorReply) => void; reject: (err: Error) => void }>();
  child.on('message', (reply: GeneratorReply) => {
    waiting.get(reply.id)?.resolve(reply);
    waiting.delete(reply.id);
  });
  child.on('exit', (code) => {
    for (const { reject } of waiting.values()) reject(new Error(`load generator exited (${code})`));
    waiting.clear();
  });
  const ask = (message: GeneratorMessage & { id: number }) =>
    new Promise<GeneratorReply>((resolve, reject) => {
      waiting.set(message.id, { resolve, reject });
      child.send(message);
    });
  return {
    pid: child.pid!,
    /**
     * Loads `port` for `seconds`; `record` keeps the acknowledged signups for `acks`; `challenge`
     * sends each with a solution from the pool (`fill`).
     */
    async run(port: number, seconds: number, record: boolean, challenge = false): Promise<PhaseResult> {
      const reply = await ask({ type: 'run', id: nextId++, port, seconds, connections: settings.connections, record, challenge });
      if (reply.type !== 'result') throw new Error('unexpected answer from the load generator');
      return reply.result;
    },
    /** Loads `port` at a steady `rate` signups/s for `seconds` (open loop, up to the run's connections). */
    async open(port: number, seconds: number, rate: number, record: boolean, challenge = false): Promise<OpenPhaseResult> {
      const reply = await ask({ type: 'open', id: nextId++, port, seconds, rate, connections: settings.connections, record, challenge });
      if (reply.type !== 'open-result') throw new Error('unexpected answer from the load generator');
      return reply.result;
    },
    /** Fetches and solves challenges from the product on `port` until `size` are ready (challenge-pool.ts). */
    async fill(port: number, size: number, reset: boolean): Promise<FillResult> {
      const reply = await ask({ type: 'fill', id: nextId++, port, size, reset });
      if (reply.type !== 'filled') throw new Error('unexpected answer from the load generator');
      if (!reply.result) throw new Error(`the challenge pool could not be filled: ${reply.error ?? 'unknown error'}`);
      return reply.result;
    },
    /** Writes the recorded acknowledged signups to `file`; resolves to how many. */
    async acks(file: string): Promise<number> {
      const reply = await ask({ type: 'acks', id: nextId++, file });
      if (reply.type !== 'acks') throw new Error('unexpected answer from the load generator');
      return reply.count;
    },
    stop() {
      child.send({ type: 'exit' } satisfies GeneratorMessage);
    },
  };
}
export type Generator = ReturnType<typeof startGenerator>;

/** A database one run measures: a fresh SQLite file, or a scratch database on a PostgreSQL server. */
export interface Target {
  label: string;
  databaseUrl: string;
  cleanup(): Promise<void>;
}

export async function prepareTarget(spec: string, workDir: string): Promise<Target> {
  if (spec === 'sqlite' || spec === 'file:' || spec === 'sqlite:') {
    const { url } = scratchSqlite(workDir);
    return { label: 'sqlite', databaseUrl: url, cleanup: async () => undefined };
  }
  if (spec.startsWith('postgres://') || spec.startsWith('postgresql://')) {
    const scratch = await createScratchPostgres(spec);
    return { label: 'postgres', databaseUrl: scratch.url, cleanup: () => scratch.drop() };
  }
  throw new Error(`unknown database "${spec}": use sqlite or a postgres:// URL`);
}

/** The databases given (comma-separated), else SQLite and, when it answers, the local PostgreSQL. */
export async function databaseSpecs(given: string | undefined): Promise<string[]> {
  if (given) return given.split(',').map((s) => s.trim()).filter(Boolean);
  if (await postgresAnswers(DEFAULT_POSTGRES)) return ['sqlite', DEFAULT_POSTGRES];
  console.log(`(PostgreSQL at ${DEFAULT_POSTGRES} did not answer: SQLite only)`);
  return ['sqlite'];
}

/** The measured build's commit, and whether it had uncommitted changes. */
export function gitDescription(root: string): string {
  try {
    const head = execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['-C', root, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return `${head}${dirty ? ' + uncommitted changes' : ''}`;
  } catch {
    return 'not a git checkout';
  }
}

/** Removes the run's temporary directory (the node_modules link in the transpiled scripts first). */
export function removeWorkDir(workDir: string, jsDir: string): void {
  fs.rmSync(path.join(jsDir, 'node_modules'), { force: true });
  fs.rmSync(workDir, { recursive: true, force: true });
}

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-');

/** The answers other than 201, for the table's last column. */
export const otherStatuses = (statuses: Record<string, number>) =>
  Object.entries(statuses)
    .filter(([status]) => status !== '201')
    .map(([status, n]) => `${status === '0' ? 'conn err' : status === '-1' ? 'no answer' : status}: ${n}`)
    .join(', ') || '-';
