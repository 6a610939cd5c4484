/**
 * The signup benchmark's tables (signup.ts): the closed-loop rows (signups/s at N connections, the
 * servers' CPU per answered request and its ratio to the floor's), the open-loop rows (a steady
 * rate: p50/p99/max, answers over 50 ms, CPU per request at that rate), and with --checks-compare
 * the abuse checks' cost against issue 28's goals.
 */
import { emptyHistogram, mergeHistograms, quantileMs } from './histogram.js';
import type { PhaseResult } from './load-generator.js';
import { fmt, median, otherStatuses } from './harness.js';
import type { OpenLoopResult } from './open-loop.js';

/** PostgreSQL's own CPU over a phase (proc.ts postgresCpuSampler), seconds; null on SQLite. */
export interface PostgresCpu {
  backends: number | null;
  background: number | null;
}

export interface Phase extends PhaseResult {
  /** The loaded server's CPU over the phase (/proc: utime + stime of all its threads), seconds. */
  serverCpuSeconds: number;
  postgres: PostgresCpu | null;
}

export interface Row {
  database: string;
  server: string;
  signupsPerSecond: number;
  p50: number;
  p99: number;
  /** The slowest answer, ms (within the histogram's 1%). */
  max: number;
  peakRssMb: number;
  loadRssMb: number;
  /** Shares of one core. */
  serverCpu: number;
  generatorCpu: number;
  /** Server CPU per answered request (every status), µs. */
  cpuPerRequestUs: number;
  /** Server CPU per signup (201), µs. */
  cpuPerSignupUs: number;
  /** PostgreSQL's backends of this database / its background processes, µs per answered request. */
  pgBackendUs: number | null;
  pgBackgroundUs: number | null;
  statuses: Record<string, number>;
  rounds: Array<{ signupsPerSecond: number; p99: number }>;
}

const answeredOf = (statuses: Record<string, number>) =>
  Object.entries(statuses).reduce((sum, [status, n]) => (Number(status) > 0 ? sum + n : sum), 0);

const perRequest = (seconds: number | null, answered: number) => (seconds === null ? null : (seconds / Math.max(1, answered)) * 1e6);

function sumNullable(values: Array<number | null | undefined>): number | null {
  let total: number | null = null;
  for (const v of values) if (typeof v === 'number') total = (total ?? 0) + v;
  return total;
}

export function summarize(database: string, server: string, phases: Phase[], memory: { peak: number; underLoad: number }): Row {
  const elapsed = phases.reduce((s, p) => s + p.elapsed, 0);
  const statuses: Record<string, number> = {};
  for (const p of phases) for (const [status, n] of Object.entries(p.statuses)) statuses[status] = (statuses[status] ?? 0) + n;
  const histogram = phases.reduce((h, p) => mergeHistograms(h, p.histogram), emptyHistogram());
  const rate = (p: { statuses: Record<string, number>; elapsed: number }) => (p.statuses['201'] ?? 0) / p.elapsed;
  const serverCpuSeconds = phases.reduce((s, p) => s + p.serverCpuSeconds, 0);
  const answered = answeredOf(statuses);
  return {
    database,
    server,
    signupsPerSecond: (statuses['201'] ?? 0) / elapsed,
    p50: quantileMs(histogram, 0.5),
    p99: quantileMs(histogram, 0.99),
    max: quantileMs(histogram, 1),
    peakRssMb: memory.peak / 2 ** 20,
    loadRssMb: memory.underLoad / 2 ** 20,
    serverCpu: serverCpuSeconds / elapsed,
    generatorCpu: phases.reduce((s, p) => s + p.cpuSeconds, 0) / elapsed,
    cpuPerRequestUs: (serverCpuSeconds / Math.max(1, answered)) * 1e6,
    cpuPerSignupUs: (serverCpuSeconds / Math.max(1, statuses['201'] ?? 0)) * 1e6,
    pgBackendUs: perRequest(sumNullable(phases.map((p) => p.postgres?.backends)), answered),
    pgBackgroundUs: perRequest(sumNullable(phases.map((p) => p.postgres?.background)), answered),
    statuses,
    rounds: phases.map((p) => ({ signupsPerSecond: rate(p), p99: quantileMs(p.histogram, 0.99) })),
  };
}

export interface OpenRow {
  database: string;
  server: string;
  rate: number;
  seconds: number;
  result: OpenLoopResult;
  serverCpuSeconds: number;
  postgres: PostgresCpu | null;
  peakRssMb: number;
  loadRssMb: number;
}

const pct = (share: number) => `${Math.round(share * 100)}%`;
const signed = (n: number, digits: number) => `${n >= 0 ? '+' : ''}${fmt(n, digits)}`;
const us = (n: number | null) => (n === null ? '-' : fmt(n, 0));

function table(header: string[], lines: string[][], leftColumns: number): void {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < leftColumns || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(line(l));
}

export function printTable(rows: Row[], connections: number): void {
  console.log(`closed loop, ${connections} connections (CPU µs per answered request; ratio: to the floor's, same run):`);
  const header = ['database', 'server', 'signups/s', 'vs floor', 'p50 ms', 'p99 ms', 'peak RSS MB', 'RSS load MB', 'server CPU', 'CPU µs/req', 'CPU ratio', 'PG backends µs', 'PG bg µs', 'gen. CPU', 'non-201'];
  const lines = rows.map((row) => {
    const floor = rows.find((r) => r.database === row.database && r.server === 'floor');
    return [
      row.database,
      row.server,
      fmt(row.signupsPerSecond),
      floor ? `${(row.signupsPerSecond / floor.signupsPerSecond).toFixed(2)}×` : '-',
      fmt(row.p50, 1),
      fmt(row.p99, 1),
      fmt(row.peakRssMb),
      fmt(row.loadRssMb),
      pct(row.serverCpu),
      fmt(row.cpuPerRequestUs, 0),
      floor ? `${(row.cpuPerRequestUs / floor.cpuPerRequestUs).toFixed(2)}×` : '-',
      us(row.pgBackendUs),
      us(row.pgBackgroundUs),
      pct(row.generatorCpu),
      otherStatuses(row.statuses),
    ];
  });
  table(header, lines, 2);
  console.log('');
  for (const row of rows) {
    console.log(`  ${row.database} ${row.server} per round: ${row.rounds.map((r) => `${fmt(r.signupsPerSecond)}/s p99 ${fmt(r.p99, 1)} ms`).join(' | ')}`);
  }
}

export function printOpenTable(rows: OpenRow[]): void {
  if (rows.length === 0) return;
  console.log('\nopen loop, a steady rate evenly spread (latency from when each request was due):');
  const header = ['database', 'server', 'rate/s', 'answered/s', 'p50 ms', 'p99 ms', 'max ms', '>50 ms', 'CPU µs/req', 'CPU ratio', 'PG backends µs', 'PG bg µs', 'RSS load MB', 'conns', 'late sends', 'non-201'];
  const perReq = (row: OpenRow) => (row.serverCpuSeconds / Math.max(1, answeredOf(row.result.statuses))) * 1e6;
  const lines = rows.map((row) => {
    const floor = rows.find((r) => r.database === row.database && r.server === 'floor');
    const answered = answeredOf(row.result.statuses);
    return [
      row.database,
      row.server,
      fmt(row.rate),
      fmt(answered / Math.max(row.result.elapsed, 1e-9)),
      fmt(quantileMs(row.result.histogram, 0.5), 2),
      fmt(quantileMs(row.result.histogram, 0.99), 2),
      fmt(row.result.maxMs, 1),
      fmt(row.result.over50ms),
      fmt(perReq(row), 0),
      floor ? `${(perReq(row) / perReq(floor)).toFixed(2)}×` : '-',
      us(perRequest(row.postgres?.backends ?? null, answered)),
      us(perRequest(row.postgres?.background ?? null, answered)),
      fmt(row.loadRssMb),
      fmt(row.result.connectionsUsed),
      `${fmt(row.result.lateSends)} (max ${fmt(row.result.maxSendLagMs, 1)} ms)`,
      otherStatuses(row.result.statuses),
    ];
  });
  table(header, lines, 2);
  console.log('  late sends: requests the generator wrote more than 1 ms after they were due (its own lag; their latency still counts from the due time)');
}

/** Issue 28's goals for the three abuse checks together, at 100 connections. */
export const CHECKS_GOALS = { throughputCostPct: 15, p99AddedMs: 2 };

/**
 * The checks' cost per database: the product with all three checks on against the same product
 * with all off (rows `off` and `on`), closed loop (and open loop, when it ran), with the goals.
 */
export function printChecksComparison(rows: Row[], openRows: OpenRow[], off: string, on: string, connections: number): void {
  const databases = [...new Set(rows.map((r) => r.database))];
  console.log(
    `\nthe abuse checks' cost (issue 28: at most ${CHECKS_GOALS.throughputCostPct}% of the signups/s and +${CHECKS_GOALS.p99AddedMs} ms p99 at 100 connections; ` +
      `closed loop, ${connections} connections${connections === 100 ? '' : ': NOT the goals\' 100'}):`,
  );
  const lines: string[][] = [];
  const verdicts: string[] = [];
  for (const database of databases) {
    const a = rows.find((r) => r.database === database && r.server === off);
    const b = rows.find((r) => r.database === database && r.server === on);
    if (!a || !b) continue;
    for (const row of [a, b]) {
      lines.push([database, row.server, fmt(row.signupsPerSecond), fmt(row.p50, 2), fmt(row.p99, 2), fmt(row.max, 1), fmt(row.cpuPerSignupUs, 0)]);
    }
    const cost = ((a.signupsPerSecond - b.signupsPerSecond) / a.signupsPerSecond) * 100;
    const added = b.p99 - a.p99;
    lines.push([database, 'difference', `${signed(-cost, 1)}%`, signed(b.p50 - a.p50, 2), signed(added, 2), signed(b.max - a.max, 1), signed(b.cpuPerSignupUs - a.cpuPerSignupUs, 0)]);
    const costs = b.rounds.map((r, i) => ((r.signupsPerSecond - a.rounds[i]!.signupsPerSecond) / a.rounds[i]!.signupsPerSecond) * 100);
    const p99s = b.rounds.map((r, i) => r.p99 - a.rounds[i]!.p99);
    const perRound = costs.map((c, i) => `${signed(c, 1)}% / ${signed(p99s[i]!, 2)} ms`);
    verdicts.push(
      `  ${database}: throughput cost ${fmt(cost, 1)}% (goal ≤ ${CHECKS_GOALS.throughputCostPct}%: ${cost <= CHECKS_GOALS.throughputCostPct ? 'met' : 'NOT met'}), ` +
        `p99 added ${signed(added, 2)} ms (goal ≤ +${CHECKS_GOALS.p99AddedMs} ms: ${added <= CHECKS_GOALS.p99AddedMs ? 'met' : 'NOT met'}); per round (signups/s, p99): ${perRound.join(' | ')}; ` +
        // Each round pairs the two products on the same machine a few seconds apart: the median of
        // the pairs is the figure a host whose speed swings between rounds moves least.
        `median of the rounds' pairs ${signed(median(costs), 1)}% / ${signed(median(p99s), 2)} ms`,
    );
  }
  table(['database', 'server', 'signups/s', 'p50 ms', 'p99 ms', 'max ms', 'CPU µs/signup'], lines, 2);
  for (const verdict of verdicts) console.log(verdict);
  const open = databases.flatMap((database) => {
    const a = openRows.find((r) => r.database === database && r.server === off);
    const b = openRows.find((r) => r.database === database && r.server === on);
    if (!a || !b) return [];
    const p99 = (row: OpenRow) => quantileMs(row.result.histogram, 0.99);
    const cpu = (row: OpenRow) => (row.serverCpuSeconds / Math.max(1, answeredOf(row.result.statuses))) * 1e6;
    return [`  ${database} at ${fmt(a.rate)}/s: p99 ${signed(p99(b) - p99(a), 2)} ms, max ${signed(b.result.maxMs - a.result.maxMs, 1)} ms, CPU ${signed(cpu(b) - cpu(a), 0)} µs per request (checks on against off)`];
  });
  if (open.length > 0) console.log(`open loop (a steady rate):\n${open.join('\n')}`);
}
