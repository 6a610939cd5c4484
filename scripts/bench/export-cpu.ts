/**
 * Export All's server side without a browser: the production build's POST …/export (zstd, as
 * Chromium asks) read and discarded by a plain HTTP client, N times, on a seeded database that is
 * kept between runs; prints each export's wall time, the server's CPU (all threads) and its main
 * thread's CPU, and V8's young generation size after. Several --root builds alternate per round.
 *
 *   npx tsx scripts/bench/export-cpu.ts --db sqlite|postgres [--entries 1000000] [--runs 4] [--root DIR]... [--node-args "--trace-gc"]
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { freshPostgresDatabase, seedPostgres, seedSqlite } from './lib/admin-data.js';
import { DEFAULT_POSTGRES } from './lib/harness.js';
import { freePort, startServer, stopServer } from './lib/servers.js';
import { ADMIN_EXPORT_PATH } from '../../src/shared/admin/waitlist-api.js';

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    entries: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '4' },
    root: { type: 'string', multiple: true, default: ['.'] },
    'node-args': { type: 'string', default: '' },
    work: { type: 'string', default: '/tmp/exbench/data' },
  },
});
const kind = values.db as 'sqlite' | 'postgres';
const entries = Number(values.entries);
const runs = Number(values.runs);
const roots = values.root.map((r) => path.resolve(r));
const workDir = values.work;
fs.mkdirSync(workDir, { recursive: true });
const admin = { email: 'bench-admin@example.com', password: 'correct horse battery staple 42' };

async function database(): Promise<string> {
  const plan = { entries, deleteCount: Math.min(100_000, Math.floor(entries / 10)), now: Date.UTC(2026, 10, 28) };
  const mark = path.join(workDir, `${kind}-${entries}.seeded`);
  if (kind === 'sqlite') {
    const file = path.join(workDir, `waitlist-${entries}.db`);
    if (!fs.existsSync(mark)) {
      await seedSqlite(file, plan);
      fs.writeFileSync(mark, '');
    }
    return `file:${file}`;
  }
  const name = `waitlist_export_cpu_${entries}`;
  const url = new URL(DEFAULT_POSTGRES);
  url.pathname = `/${name}`;
  if (!fs.existsSync(mark)) {
    const scratch = await freshPostgresDatabase(DEFAULT_POSTGRES, name);
    await seedPostgres(scratch.url, plan);
    fs.writeFileSync(mark, '');
  }
  return url.toString();
}

function request(port: number, method: string, pathName: string, headers: Record<string, string>, body: string): Promise<{ status: number; bytes: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: pathName, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      let bytes = 0;
      let text = '';
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (text.length < 4096) text += chunk.toString('utf8');
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** utime + stime of the process (all threads) and of its main thread, in ms. */
function cpuMs(pid: number): { all: number; main: number } {
  const read = (file: string) => {
    const fields = fs.readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  };
  return { all: read(`/proc/${pid}/stat`), main: read(`/proc/${pid}/task/${pid}/stat`) };
}

const url = await database();
const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', HOST: '127.0.0.1', LOG_LEVEL: 'warn', AUTH_SECRET_KEY: randomBytes(32).toString('base64'), DATABASE_URL: url };
const created = spawnSync(process.execPath, [path.join(roots[0]!, 'dist/server/cli/admin.js'), 'create', admin.email], { env, input: `${admin.password}\n`, encoding: 'utf8' });
if (created.status !== 0 && !/exists|already/i.test(created.stdout + created.stderr)) throw new Error(created.stdout + created.stderr);

for (let round = 0; round < runs; round++) {
  for (const root of roots) {
    const port = await freePort();
    const nodeArgs = [...values['node-args'].split(' ').filter(Boolean), path.join(root, 'dist/server/main.js')];
    const server = await startServer({ name: 'product', nodeArgs, env, port, cwd: root, stdoutFile: path.join(workDir, 'server.log') });
    try {
      const token = await request(port, 'POST', '/auth/v1/token?grant_type=password', { 'content-type': 'application/json' }, JSON.stringify(admin));
      const accessToken = (JSON.parse(token.text) as { access_token: string }).access_token;
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${accessToken}`, 'accept-encoding': 'zstd, br, gzip' };
      const line: string[] = [];
      // Two exports per server: a fresh server's first, and a warm one.
      for (let i = 0; i < 2; i++) {
        fs.appendFileSync(path.join(workDir, 'server.log'), `=== export ${i + 1} start\n`);
        const before = cpuMs(server.pid);
        const started = performance.now();
        const answer = await request(port, 'POST', ADMIN_EXPORT_PATH, headers, '{}');
        const wall = performance.now() - started;
        const after = cpuMs(server.pid);
        fs.appendFileSync(path.join(workDir, 'server.log'), `=== export ${i + 1} end\n`);
        if (answer.status !== 200) throw new Error(`export answered ${answer.status}: ${answer.text.slice(0, 300)}`);
        line.push(`wall ${(wall / 1000).toFixed(2)} s, cpu ${((after.all - before.all) / 1000).toFixed(2)} s (main ${((after.main - before.main) / 1000).toFixed(2)}), ${(answer.bytes / 1e6).toFixed(1)} MB`);
      }
      console.log(`${kind} ${path.basename(root)} round ${round + 1}: ${line.join(' | ')} | load ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    } finally {
      await stopServer(server, 'SIGTERM');
    }
  }
}
