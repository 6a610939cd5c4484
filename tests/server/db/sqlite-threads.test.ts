import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startInstance, stopInstance, waitHealthy } from '../../support/server-process.js';

/**
 * better-sqlite3 12 on Node 24 aborted the process when a statement was collected after its thread's
 * environment was gone (`Assertion failed: (env) != nullptr` in RemoveEnvironmentCleanupHook). The server
 * opens SQLite on the main thread and in worker threads (the WAL checkpointer), so a child process does
 * both, leaves statements to the collector, and must exit cleanly with nothing on stderr.
 */
const script = String.raw`
const { Worker, isMainThread, workerData } = require('node:worker_threads');
const Database = require('better-sqlite3');
function use(file, rows) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('create table if not exists t (id integer primary key, v text)');
  const insert = db.prepare('insert into t (v) values (?)');
  db.transaction(() => { for (let i = 0; i < rows; i++) insert.run('row ' + i); })();
  for (let i = 0; i < 50; i++) db.prepare('select count(*) as n from t where v like ?').get('%' + i);
  const n = db.prepare('select count(*) as n from t').get().n;
  db.close();
  return n;
}
if (isMainThread) {
  const file = process.argv[2];
  use(file, 10);
  let done = 0;
  const workers = 4;
  for (let w = 0; w < workers; w++) {
    const worker = new Worker(__filename, { workerData: { file } });
    worker.on('message', (n) => { if (n < 10) { console.error('worker saw', n); process.exit(3); } });
    worker.on('error', (e) => { console.error(e); process.exit(4); });
    worker.on('exit', (code) => {
      if (code !== 0) process.exit(5);
      if (++done === workers) {
        // A statement left to the collector after the workers are gone, then a last use on the main thread.
        new Database(file).prepare('select 1').get();
        globalThis.gc?.();
        console.log('total', use(file, 1));
      }
    });
  }
} else {
  const { parentPort } = require('node:worker_threads');
  // Statements left open on purpose: the thread ends without closing them.
  const db = new Database(workerData.file);
  db.prepare('select count(*) from t').get();
  parentPort.postMessage(use(workerData.file, 25));
}
`;

describe('SQLite in worker threads and the main thread', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sqlite-threads-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('opens, uses and closes databases on every thread and the process exits cleanly', () => {
    const file = path.join(dir, 'threads.cjs');
    writeFileSync(file, script);
    const result = spawnSync(process.execPath, ['--expose-gc', file, path.join(dir, 'db.sqlite')], {
      cwd: process.cwd(),
      encoding: 'utf8',
      env: { ...process.env, NODE_PATH: path.join(process.cwd(), 'node_modules') },
    });
    expect(result.stderr).toBe('');
    expect(result.signal).toBeNull();
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(`total ${10 + 4 * 25 + 1}`);
  });

  // better-sqlite3 12 aborted the production server on Node 24.21 within a second of starting, on every start
  // (a Statement collected where V8 had no environment); the server runs SQLite on the main thread and its
  // checkpoint thread. It must start, store a signup, and exit 0 on SIGTERM.
  it('the production server starts, stores a signup and exits 0', async () => {
    const instance = startInstance('server', { DATABASE_URL: `file:${path.join(dir, 'server.sqlite')}`, LOG_LEVEL: 'info' }, { build: true });
    try {
      await waitHealthy(instance);
      const response = await fetch(`${instance.base}/api/waitlist`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'threads@example.com' }),
      });
      expect(response.status).toBe(201);
      const exited = new Promise<number | null>((resolve) => instance.child.once('exit', (code) => resolve(code)));
      instance.child.kill('SIGTERM');
      expect(await exited, instance.output()).toBe(0);
      expect(instance.output()).toContain('shutdown complete');
      expect(instance.output()).not.toContain('Assertion failed');
    } finally {
      await stopInstance(instance);
    }
  });
});
