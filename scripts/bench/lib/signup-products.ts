/**
 * The products the signup benchmark (signup.ts) loads: which abuse checks (issue 28) each runs and
 * the settings that give them, the pool of solved challenges of one with the proof of work, what is
 * read about its process and database under load, and the check after the run that every
 * acknowledged signup is stored (and none held).
 */
import fs from 'node:fs';
import path from 'node:path';
import { benchNumber } from './addresses.js';
import type { Generator, Target } from './harness.js';
import { cpuSeconds, memorySampler, postgresCpuSampler } from './proc.js';
import { storedSignups, type ServerProcess } from './servers.js';
import type { Phase, PostgresCpu } from './signup-report.js';

/** The abuse checks a product runs; `challenge` undefined: as the environment sets it (the bench's default). */
export interface Checks {
  /** The throwaway-domain list and the MX check (against the bench's DNS server). */
  screening: boolean;
  /** The proof of work (SIGNUP_CHALLENGE=proof-of-work): each signup needs a solved challenge. */
  challenge?: boolean;
}

/**
 * The proof of work's difficulty in the bench: the config's minimum (src/server/config.ts), so the
 * pool is solved quickly; the server's cost per signup does not depend on it (signup.ts's header).
 */
export const BENCH_CHALLENGE_MAX_NUMBER = 1000;

/** The product's settings for `checks`; `dnsAddress`: the bench's DNS server (screening on). */
export function checksEnv(checks: Checks, dnsAddress: string | null): NodeJS.ProcessEnv {
  if (checks.screening && !dnsAddress) throw new Error('the screening needs the bench\'s DNS server');
  return {
    ...(checks.screening
      ? { SIGNUP_CHECK_MX: 'on', SIGNUP_BLOCK_DISPOSABLE: 'on', DNS_SERVERS: dnsAddress! }
      : { SIGNUP_CHECK_MX: 'off', SIGNUP_BLOCK_DISPOSABLE: 'off' }),
    ...(checks.challenge === undefined
      ? {}
      : checks.challenge
        ? { SIGNUP_CHALLENGE: 'proof-of-work', SIGNUP_CHALLENGE_MAX_NUMBER: String(BENCH_CHALLENGE_MAX_NUMBER), SIGNUP_CHALLENGE_TTL_SECONDS: '3600' }
        : { SIGNUP_CHALLENGE: 'off' }),
  };
}

export interface ProductSpec {
  name: string;
  checks: Checks;
}

/** A product with the proof of work: how many solutions were fetched and solved for it, and what issuing them cost it. */
export interface Pool {
  filled: boolean;
  challenges: number;
  solveSeconds: number;
  serverCpuSeconds: number;
}

export type Sampler = ReturnType<typeof memorySampler>;
export type PgSampler = ReturnType<typeof postgresCpuSampler> | null;

/** A product running on its own database, and what has been measured of it. */
export interface Product {
  spec: ProductSpec;
  target: Target;
  server: ServerProcess;
  memory: Sampler;
  pg: PgSampler;
  phases: Phase[];
  /** The highest signups/s seen (warm-up included), which sizes the pool of the next phase. */
  bestRate: number;
  pool: Pool | null;
}

export function newProduct(spec: ProductSpec, target: Target, server: ServerProcess): Product {
  const pool = spec.checks.challenge ? { filled: false, challenges: 0, solveSeconds: 0, serverCpuSeconds: 0 } : null;
  return { spec, target, server, memory: memorySampler(server.pid), pg: postgresSampler(target), phases: [], bestRate: 0, pool };
}

/** Runs `load` while reading the server's CPU (and PostgreSQL's) around it. */
export async function withCpu<T>(server: ServerProcess, sampler: Sampler, pg: PgSampler, load: () => Promise<T>): Promise<T & { serverCpuSeconds: number; postgres: PostgresCpu | null }> {
  sampler.open();
  pg?.open();
  const cpuBefore = cpuSeconds(server.pid) ?? Number.NaN;
  const result = await load();
  const cpuAfter = cpuSeconds(server.pid) ?? Number.NaN;
  const postgres = pg?.close() ?? null;
  sampler.close();
  return { ...result, serverCpuSeconds: cpuAfter - cpuBefore, postgres };
}

/**
 * Expected signups × this, plus one per connection, are solved before a closed-loop phase: the
 * rate may rise between phases (a machine growing quieter). The warm-up's pool is sized from the
 * other product's warm-up, a server still starting (its rate lower than the steady one): × 3.
 */
export const POOL_MARGIN = { warmup: 3, round: 2 };

/** The solutions a closed-loop phase of `seconds` may use: the highest rate any product has shown × seconds × the margin. */
export function closedPoolSize(products: readonly Product[], seconds: number, connections: number, margin: number): number {
  const rate = Math.max(...products.map((p) => p.bestRate));
  return Math.ceil(rate * seconds * margin) + connections;
}

/**
 * Tops the product's pool up to `size` solutions (not timed), reading the product's CPU for
 * issuing the challenges; the first fill drops whatever the generator kept of another product.
 */
export async function fillPool(generator: Generator, product: Product, size: number): Promise<void> {
  const pool = product.pool!;
  const before = cpuSeconds(product.server.pid) ?? Number.NaN;
  const result = await generator.fill(product.server.port, size, !pool.filled);
  pool.serverCpuSeconds += (cpuSeconds(product.server.pid) ?? Number.NaN) - before;
  pool.filled = true;
  pool.challenges += result.added;
  pool.solveSeconds += result.seconds;
}

/** PostgreSQL's CPU for a scratch database on a local server (its processes visible in /proc), else null. */
export function postgresSampler(target: Target): PgSampler {
  if (target.label !== 'postgres') return null;
  const url = new URL(target.databaseUrl);
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(url.hostname)) return null;
  return postgresCpuSampler(decodeURIComponent(url.pathname.slice(1)));
}

/** The SQLite WAL's size now, MB (null: not SQLite): it must not grow without bound under load. */
export function walSizeMb(target: Target): number | null {
  if (target.label !== 'sqlite') return null;
  try {
    return fs.statSync(`${target.databaseUrl.replace(/^(file|sqlite):/, '')}-wal`).size / 2 ** 20;
  } catch {
    return 0;
  }
}

export interface StoredCheck {
  acknowledged: number;
  /** Acknowledged addresses in none of the databases. */
  missing: string[];
  /** Per database (in the order given): this run's rows by status. */
  statuses: Array<Record<string, number>>;
}

/**
 * Every acknowledged signup must be stored: compares the generator's acks (which it then forgets)
 * with this run's rows in `targets` (the products loaded, each on its own database; signup numbers
 * are unique over the run, so an address is in one of them).
 */
export async function verifyStored(generator: Generator, targets: readonly Target[], prefix: string, workDir: string): Promise<StoredCheck> {
  const file = path.join(workDir, `acks-${targets[0]!.label}.bin`);
  const acknowledged = await generator.acks(file);
  const acks = fs.readFileSync(file);
  fs.rmSync(file);
  const stored = new Uint8Array(acks.length);
  const statuses: Array<Record<string, number>> = [];
  for (const target of targets) {
    const counts: Record<string, number> = {};
    for (const { email, status } of await storedSignups(target.databaseUrl, prefix)) {
      counts[status] = (counts[status] ?? 0) + 1;
      const n = benchNumber(prefix, email);
      if (n !== null && n < stored.length) stored[n] = 1;
    }
    statuses.push(counts);
  }
  const missing: string[] = [];
  for (let n = 0; n < acks.length; n++) if (acks[n] && !stored[n]) missing.push(`${prefix}-${n}@example.com`);
  return { acknowledged, missing, statuses };
}
