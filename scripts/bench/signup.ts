/**
 * Signup throughput benchmark: starts the production build on a fresh database and drives
 * `POST /api/waitlist` with unique addresses from a pool of keep-alive connections.
 *
 *   npm run bench:signup                           # SQLite
 *   BENCH_DATABASE_URLS="file:,postgres://postgres@127.0.0.1/test" npm run bench:signup   # each, in one run
 *
 * Options (env): BENCH_SECONDS (10), BENCH_CONNECTIONS (32).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const targets = (process.env.BENCH_DATABASE_URLS ?? 'file:').split(',').map((s) => s.trim()).filter(Boolean);

interface Result {
  database: string;
  /** Share of one core the server process used during the run (Linux /proc; null elsewhere). */
  serverCpu: string | null;
  requests: number;
  perSecond: number;
  statuses: Record<number, number>;
  p50: number;
  p99: number;
}

function startServer(databaseUrl: string, port: number): Promise<ChildProcess> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-bench-'));
  const url = databaseUrl === 'file:' ? `file:${path.join(dir, 'bench.db')}` : databaseUrl;
  const child = spawn(process.execPath, ['dist/server/main.js'], {
    env: { ...process.env, DATABASE_URL: url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', SIGNUP_RATE_LIMIT_MAX: '100000000' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 30_000;
    const poll = () => {
      http
        .get({ host: '127.0.0.1', port, path: '/healthz' }, (res) => {
          res.resume();
          if (res.statusCode === 200) resolve(child);
          else setTimeout(poll, 100);
        })
        .on('error', () => (Date.now() > deadline ? reject(new Error('server did not start')) : setTimeout(poll, 100)));
    };
    poll();
  });
}

/** User + system CPU seconds a process has used so far (Linux only). */
function cpuSeconds(pid: number | undefined): number | null {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

async function load(port: number, label: string, duration: number, serverPid?: number): Promise<Result> {
  const cpuBefore = cpuSeconds(serverPid);
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  const stopAt = Date.now() + duration * 1000;
  let counter = 0;
  const runId = Date.now().toString(36);

  const one = () =>
    new Promise<void>((resolve) => {
      const body = JSON.stringify({ email: `bench-${runId}-${counter++}@example.com` });
      const started = performance.now();
      const req = http.request(
        { host: '127.0.0.1', port, path: '/api/waitlist', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - started);
            statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
            resolve();
          });
        },
      );
      req.on('error', () => {
        statuses[0] = (statuses[0] ?? 0) + 1;
        resolve();
      });
      req.end(body);
    });

  const began = Date.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < stopAt) await one();
    }),
  );
  const elapsed = (Date.now() - began) / 1000;
  const cpuAfter = cpuSeconds(serverPid);
  const serverCpu = cpuBefore !== null && cpuAfter !== null ? `${Math.round(((cpuAfter - cpuBefore) / elapsed) * 100)}%` : null;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => Number((latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0).toFixed(1));
  return { database: label, serverCpu, requests: latencies.length, perSecond: Math.round(latencies.length / elapsed), statuses, p50: pct(0.5), p99: pct(0.99) };
}

if (!fs.existsSync('dist/server/main.js')) {
  console.error('Run `npm run build` first.');
  process.exit(1);
}

const results: Result[] = [];
let port = 4400;
for (const target of targets) {
  const server = await startServer(target, ++port);
  try {
    const label = target === 'file:' ? 'sqlite' : target.replace(/\/\/[^@]*@/, '//');
    await load(port, label, 2, server.pid); // warm-up, discarded
    results.push(await load(port, label, seconds, server.pid));
  } finally {
    server.kill('SIGTERM');
  }
}
console.log(`signup benchmark: ${connections} connections, ${seconds}s per database, ${os.cpus().length} cores`);
console.table(results.map((r) => ({ ...r, statuses: JSON.stringify(r.statuses) })));
