/**
 * How fast the disk under the benchmark's SQLite files commits, measured just before the product
 * is loaded: with `synchronous=FULL` every commit waits for fsync, so one-commit-per-signup cannot
 * beat the bare driver's serial commit rate, whatever the code around it does.
 */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';

export interface CommitRate {
  perSecond: number;
  medianMs: number;
  p99Ms: number;
}

/** Serial single-row commits with better-sqlite3 (WAL, synchronous=FULL) in `dir`, for about `seconds`. */
export function sqliteCommitRate(dir: string, seconds = 1): CommitRate {
  const work = fs.mkdtempSync(path.join(dir, 'commit-probe-'));
  const db = new SQLite(path.join(work, 'probe.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, email TEXT NOT NULL)');
    db.exec('CREATE UNIQUE INDEX t_email ON t (lower(email))');
    const insert = db.prepare('INSERT INTO t (email) VALUES (?)');
    const times: number[] = [];
    const started = performance.now();
    while (performance.now() - started < seconds * 1000 || times.length < 20) {
      const at = performance.now();
      insert.run(`probe-${times.length}@example.com`);
      times.push(performance.now() - at);
    }
    const elapsed = (performance.now() - started) / 1000;
    times.sort((a, b) => a - b);
    return {
      perSecond: times.length / elapsed,
      medianMs: times[Math.floor(times.length / 2)]!,
      p99Ms: times[Math.min(times.length - 1, Math.floor(times.length * 0.99))]!,
    };
  } finally {
    db.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
}
