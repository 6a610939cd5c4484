/**
 * The admin benchmark's results (admin.ts) and its report: the table of each step's time (the median
 * of its runs, beside the others), its goal and whether it was met, the longest main-thread task and
 * the step's API request, per database.
 */
import type { SeedResult } from './admin-data.js';
import { fmt, median } from './harness.js';

export interface Sample {
  ms: number;
  /** Longest main-thread task during the step, ms (0: none over 50 ms). */
  longestTask: number;
  /** The step's main API request, start to last byte (resource timing), ms; null when not seen. */
  apiMs?: number | null;
}

export interface DatabaseResult {
  kind: 'sqlite' | 'postgres';
  seed?: SeedResult & { totalMs: number };
  firstRows: Sample[];
  panel: Sample[];
  search: Array<Sample & { query: string; matching: number }>;
  urlFilter: Array<Sample & { country: string; matching: number }>;
  selectAll?: Sample;
  /** Each Export All, with the CPU seconds it cost the server, the browser's processes and PostgreSQL's backends (null on SQLite). */
  exportAll: Array<Sample & { rows: number; file: string; cpu?: { server: number; browser: number; database: number | null } }>;
  streaming?: { runs: number[]; rows: number };
  deleteSelect?: Sample;
  deleted?: Sample & { remaining: number };
  peakRssBytes?: number;
  error?: string;
}

export const log = (kind: string, text: string) => console.error(`[${kind}] ${text}`);
export const secs = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s` : '-');

/** What the report's step names and goals depend on. */
export interface ReportSettings {
  runs: number;
  entries: number;
  deleteCount: number;
  /** Entries of the second list (0: none). */
  secondList: number;
  /** Exports, and runs of the database's own streaming they are held against (the medians). */
  streamingRuns: number;
}

interface Cell {
  value: string;
  met?: boolean;
  /** Longest main-thread task, ms. */
  task?: number;
  /** The API request's time (median over the runs), ms. */
  api?: number | null;
}

interface Row {
  step: string;
  goal: string;
  cell: (r: DatabaseResult) => Cell | null;
}

const GOAL_TASK_MS = 200;
const medianSample = (samples: Sample[]) => {
  const api = samples.map((s) => s.apiMs).filter((ms): ms is number => typeof ms === 'number');
  return { ms: median(samples.map((s) => s.ms)), task: Math.max(0, ...samples.map((s) => s.longestTask)), api: api.length ? median(api) : null };
};
const spread = (samples: Sample[]) => (samples.length > 1 ? ` [${samples.map((s) => (s.ms / 1000).toFixed(2)).join(' ')}]` : '');

function timedRow(step: string, goalMs: number | null, pick: (r: DatabaseResult) => Sample[]): Row {
  return {
    step,
    goal: goalMs === null ? '' : `≤ ${goalMs / 1000} s`,
    cell: (r) => {
      const samples = pick(r);
      if (samples.length === 0) return null;
      const { ms, task, api } = medianSample(samples);
      return { value: `${secs(ms)}${spread(samples)}`, met: goalMs === null ? undefined : ms <= goalMs, task, api };
    },
  };
}

function allTasks(r: DatabaseResult): number[] {
  return [
    ...r.firstRows,
    ...r.panel,
    ...r.search,
    ...r.urlFilter,
    ...r.exportAll,
    ...[r.selectAll, r.deleteSelect, r.deleted].filter((s): s is Sample => s !== undefined),
  ].map((s) => s.longestTask);
}

function reportRows({ runs, entries, deleteCount, secondList, streamingRuns }: ReportSettings): Row[] {
  return [
    {
      step: secondList > 0 ? 'seed (load + indexes, both lists)' : 'seed (load + indexes)',
      goal: '',
      cell: (r) =>
        r.seed
          ? { value: `${secs(r.seed.totalMs)}${r.seed.vacuumMs ? ` (VACUUM ANALYZE ${secs(r.seed.vacuumMs)} of it)` : ''}` }
          : null,
    },
    timedRow(`first rows (median of ${runs})`, 1000, (r) => r.firstRows),
    timedRow(`filtered: Search "@domain"`, 500, (r) => r.search),
    timedRow(`filtered: URL ?country=`, 500, (r) => r.urlFilter),
    timedRow(`insight panel`, 1000, (r) => r.panel),
    timedRow(`select all ${fmt(entries)}`, null, (r) => (r.selectAll ? [r.selectAll] : [])),
    {
      step: `export all → file saved (median of ${streamingRuns})`,
      goal: '≤ 1.5× database',
      cell: (r) => {
        if (r.exportAll.length === 0) return null;
        const floor = r.streaming ? median(r.streaming.runs) : Number.NaN;
        const { ms, task, api } = medianSample(r.exportAll);
        const ratio = ms / floor;
        return { value: `${secs(ms)} = ${ratio.toFixed(2)}×${spread(r.exportAll)}`, met: ratio <= 1.5, task, api };
      },
    },
    {
      // The export's CPU on every side, against what two cores give in the wall time: an export
      // whose CPU in all is more than twice 1.5× the floor cannot meet the goal on two cores.
      step: `  CPU per export: server + browser (+ PostgreSQL)`,
      goal: '',
      cell: (r) => {
        const costs = r.exportAll.flatMap((s) => (s.cpu ? [s.cpu] : []));
        if (costs.length === 0) return null;
        const part = (pick: (c: (typeof costs)[number]) => number) => median(costs.map(pick)).toFixed(2);
        const database = costs.every((c) => c.database !== null) ? ` + ${part((c) => c.database!)}` : '';
        return { value: `${part((c) => c.server)} + ${part((c) => c.browser)}${database} s (median)` };
      },
    },
    {
      step: `  database streaming (median of ${streamingRuns})`,
      goal: '',
      cell: (r) => (r.streaming ? { value: `${secs(median(r.streaming.runs))} [${r.streaming.runs.map((ms) => (ms / 1000).toFixed(2)).join(' ')}]` } : null),
    },
    timedRow(`select all ${fmt(deleteCount)} (filtered)`, null, (r) => (r.deleteSelect ? [r.deleteSelect] : [])),
    timedRow(`delete ${fmt(deleteCount)} selected`, null, (r) => (r.deleted ? [r.deleted] : [])),
    {
      step: 'longest main-thread task',
      goal: `≤ ${GOAL_TASK_MS} ms`,
      cell: (r) => {
        const tasks = allTasks(r);
        if (tasks.length === 0) return null;
        const longest = Math.max(...tasks);
        return { value: `${longest} ms`, met: longest <= GOAL_TASK_MS };
      },
    },
    { step: 'server peak RSS', goal: '', cell: (r) => (r.peakRssBytes ? { value: `${fmt(r.peakRssBytes / 2 ** 20)} MiB` } : null) },
  ];
}

export function printReport(results: DatabaseResult[], settings: ReportSettings): void {
  const rows = reportRows(settings);
  const header = ['step', 'goal', ...results.flatMap((r) => [r.kind, 'met', 'longest task', 'API request'])];
  const table = rows.map((row) => [
    row.step,
    row.goal,
    ...results.flatMap((r) => {
      const c = row.cell(r);
      if (!c) return ['-', '', '', ''];
      return [
        c.value,
        c.met === undefined ? '' : c.met ? 'yes' : 'NO',
        c.task === undefined ? '' : c.task === 0 ? '< 50 ms' : `${c.task} ms`,
        typeof c.api === 'number' ? secs(c.api) : '',
      ];
    }),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((line) => line[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const cells of table) console.log(line(cells));
}
