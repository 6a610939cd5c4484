/** What the benchmark reads about processes and the machine (Linux /proc; null elsewhere). */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

/** A process's parent and its user + system CPU seconds so far, from one read of /proc/<pid>/stat; null once it has ended. */
function processStat(pid: number | string): { parent: number; cpu: number } | null {
  try {
    // After "pid (comm) ": state, ppid, …, utime (the 14th field), stime.
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { parent: Number(fields[1]), cpu: (Number(fields[11]) + Number(fields[12])) / clockTicks() };
  } catch {
    return null;
  }
}

/** User + system CPU seconds a process has used so far. */
export function cpuSeconds(pid: number): number | null {
  return processStat(pid)?.cpu ?? null;
}

let ticks: number | undefined;
/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux unless getconf says otherwise). */
function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/**
 * User + system CPU seconds used so far by the live processes below `root` (its children, theirs,
 * and so on; `root` itself not counted), but those under a pid in `skip` (and those pids): for
 * example a browser's processes, started by the benchmark beside the server it also started. A
 * process that ends between two readings leaves the second sum: their difference then counts less.
 */
export function descendantsCpuSeconds(root: number, skip: readonly number[] = []): number {
  const stats = new Map<number, { parent: number; cpu: number }>();
  for (const name of fs.readdirSync('/proc')) {
    const stat = /^\d+$/.test(name) ? processStat(name) : null;
    if (stat) stats.set(Number(name), stat);
  }
  const below = (pid: number): boolean => {
    for (let at = stats.get(pid)?.parent; at !== undefined && at > 1; at = stats.get(at)?.parent) {
      if (skip.includes(at)) return false;
      if (at === root) return true;
    }
    return false;
  };
  let total = 0;
  for (const [pid, { cpu }] of stats) if (!skip.includes(pid) && below(pid)) total += cpu;
  return total;
}

export interface MemoryStatus {
  /** Resident set size now, bytes. */
  rss: number;
  /** Peak resident set size since the process started (VmHWM), bytes. */
  peak: number;
}

export function memoryStatus(pid: number): MemoryStatus | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return null;
  }
}

/**
 * Samples a process's memory every `intervalMs` from start to stop: the highest VmRSS seen while
 * a window is open (the load phases) and the last VmHWM (the peak over the process's whole life,
 * start-up included).
 */
export function memorySampler(pid: number, intervalMs = 100) {
  let windowMax = 0;
  let inWindow = false;
  let peak = 0;
  const sample = () => {
    const status = memoryStatus(pid);
    if (!status) return;
    peak = Math.max(peak, status.peak);
    if (inWindow) windowMax = Math.max(windowMax, status.rss);
  };
  const timer = setInterval(sample, intervalMs);
  sample();
  return {
    open() {
      inWindow = true;
      sample();
    },
    close() {
      sample();
      inWindow = false;
    },
    /** Highest VmRSS sampled under load, bytes. */
    get underLoad() {
      return windowMax;
    },
    /** VmHWM, bytes. */
    get peak() {
      sample();
      return peak;
    },
    stop() {
      clearInterval(timer);
    },
  };
}

/** The file system type a directory is on (`ext4`, `tmpfs`...), or null when unknown. */
export function fileSystemType(dir: string): string | null {
  for (const [command, args] of [
    ['findmnt', ['-n', '-o', 'FSTYPE', '-T', dir]],
    ['stat', ['-f', '-c', '%T', dir]],
  ] as const) {
    try {
      const type = execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
      if (type) return type;
    } catch {
      // try the next way
    }
  }
  return null;
}

/** The share of time some task waited for a CPU over the last minute (Linux PSI), or null. */
export function cpuPressure(): number | null {
  try {
    const line = fs.readFileSync('/proc/pressure/cpu', 'utf8').split('\n')[0] ?? '';
    const avg60 = /avg60=([\d.]+)/.exec(line)?.[1];
    return avg60 === undefined ? null : Number(avg60) / 100;
  } catch {
    return null;
  }
}

export function machineDescription(): string {
  const cpus = os.cpus();
  const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
  const pressure = cpuPressure();
  return [
    `${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
    `Node ${process.version}, ${os.type()} ${os.release()}, load average ${load} at start` +
      (pressure === null ? '' : `, CPU pressure ${Math.round(pressure * 100)}% (share of the last minute some task waited for a core)`),
  ].join('\n');
}

/**
 * The CPU time of a local PostgreSQL server's processes over a window (issue 33: the product's
 * process beside the database's own work): the backends serving `database` (found by their process
 * title, `postgres: … <database> <client> …`), and the server's background writers (WAL writer,
 * checkpointer, background writer), which serve every database of the server. /proc is scanned
 * every `intervalMs`; a backend that starts within the window counts from zero, one that ends
 * within it loses at most its last interval. Null figures: no such process is visible (a remote
 * server, or not Linux).
 */
export function postgresCpuSampler(database: string, intervalMs = 200) {
  const BACKGROUND = /^postgres: (?:[^:]+: )?(checkpointer|background writer|walwriter)\s*$/;
  const backend = (title: string) => title.startsWith('postgres: ') && title.includes(` ${database} `);
  let first = new Map<number, number>();
  let last = new Map<number, number>();
  const kinds = new Map<number, 'backend' | 'background' | 'other'>();
  let window = false;
  const scan = (baseline: boolean) => {
    let pids: string[];
    try {
      pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
    } catch {
      return;
    }
    for (const name of pids) {
      const pid = Number(name);
      let kind = kinds.get(pid);
      if (kind === undefined) {
        let title: string;
        try {
          title = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+$/, '').replace(/\0/g, ' ');
        } catch {
          continue;
        }
        if (backend(title)) kind = 'backend';
        else if (BACKGROUND.test(title)) kind = 'background';
        else kind = 'other';
        kinds.set(pid, kind);
      }
      if (kind === 'other') continue;
      const cpu = cpuSeconds(pid);
      if (cpu === null) continue;
      if (baseline || !first.has(pid)) first.set(pid, baseline ? cpu : 0);
      last.set(pid, cpu);
    }
  };
  const timer = setInterval(() => window && scan(false), intervalMs);
  timer.unref();
  return {
    open() {
      first = new Map();
      last = new Map();
      window = true;
      scan(true);
    },
    /** CPU seconds of the database's backends and of the server's background processes since open(). */
    close(): { backends: number | null; background: number | null } {
      scan(false);
      window = false;
      const sum = (kind: 'backend' | 'background') => {
        let total: number | null = null;
        for (const [pid, cpu] of last) if (kinds.get(pid) === kind) total = (total ?? 0) + cpu - (first.get(pid) ?? 0);
        return total;
      };
      return { backends: sum('backend'), background: sum('background') };
    },
    stop() {
      clearInterval(timer);
    },
  };
}

/**
 * Waits until each process uses less than `share` of a core over a `windowMs` window (at most
 * `maxMs`): a measured phase then starts with no other server still busy with the last one (its
 * WAL checkpoint, a collection, challenges it issued) on the cores it shares. Resolves to the
 * milliseconds waited, or null when `maxMs` passed first.
 */
export async function waitForQuiet(pids: readonly number[], { share = 0.05, windowMs = 250, maxMs = 20_000 } = {}): Promise<number | null> {
  const started = performance.now();
  let before = pids.map((pid) => cpuSeconds(pid) ?? 0);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const now = pids.map((pid) => cpuSeconds(pid) ?? 0);
    const busiest = Math.max(0, ...now.map((seconds, i) => seconds - before[i]!));
    before = now;
    const waited = performance.now() - started;
    if (busiest < (share * windowMs) / 1000) return waited - windowMs;
    if (waited >= maxMs) return null;
  }
}
