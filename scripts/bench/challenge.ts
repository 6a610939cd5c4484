/**
 * The signup challenge's costs (issue 28 point 4, decision 053):
 *
 * 1. The browser's: the production build's solver (the form's worker, pow-worker.ts) in Chromium with
 *    the CPU slowed down 4× through CDP (Emulation.setCPUThrottlingRate, Lighthouse's mobile
 *    slowdown), on challenges the production server issues at each difficulty. Each solve's time and
 *    the number it found give a rate (numbers tried per second); the worst case at a difficulty is
 *    that difficulty over the rate (the number is uniform in 1..maxnumber, so the mean is half of it).
 * 2. The server's: the verification of a solution (pow.ts; altcha-lib's own beside it), what a
 *    signup with the setting on adds before its write, in µs per signup, on this machine's CPU, sequentially.
 *
 *   npm run build && npx tsx scripts/bench/challenge.ts      # CHALLENGE_SOLVES=10 CHALLENGE_DIFFICULTIES=20000,50000,100000
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { chromium } from '@playwright/test';
import { buildSync } from 'esbuild';
import { createChallenge, solveChallenge, verifySolution } from 'altcha-lib/v1';
import { solutionVerifier } from '../../src/server/challenge/pow.js';
import { findChromium } from '../ensure-chromium.mjs';
import { freePort, scratchSqlite, startServer, stopServer } from './lib/servers.js';

const SOLVES = Number(process.env.CHALLENGE_SOLVES ?? 10);
const DIFFICULTIES = (process.env.CHALLENGE_DIFFICULTIES ?? '20000,50000,100000').split(',').map(Number);
const THROTTLE = 4;
const projectRoot = process.cwd();
const worker = fs.readdirSync(path.join(projectRoot, 'dist/web/assets')).find((f) => /^pow-worker-.*\.js$/.test(f));
if (!worker) {
  console.error('Run `npm run build` first (no dist/web/assets/pow-worker-*.js).');
  process.exit(1);
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const ms = (n: number) => `${n.toFixed(0)} ms`;

/** The search (pow-search.ts) as a script for the page's main thread: `window.PowSearch.searchRange`. */
const searchScript = buildSync({ entryPoints: ['src/web/waitlist/pow-search.ts'], bundle: true, format: 'iife', globalName: 'PowSearch', write: false }).outputFiles[0]!.text;

type Run = { ms: number; number: number };

function report(difficulty: number, where: string, runs: Run[]): void {
  // Numbers tried per second over all the solves (starting the worker included, for the worker).
  const speed = runs.reduce((s, r) => s + r.number + 1, 0) / (runs.reduce((s, r) => s + r.ms, 0) / 1000);
  const times = runs.map((r) => r.ms).sort((a, b) => a - b);
  console.log(
    `maxnumber ${difficulty}, ${where}: ${runs.length} solves, median ${ms(quantile(times, 0.5))}, slowest ${ms(times[times.length - 1]!)}; ` +
      `${Math.round(speed).toLocaleString('en-US')} numbers/s → mean ${ms((difficulty / 2 / speed) * 1000)}, worst ${ms((difficulty / speed) * 1000)}`,
  );
}

async function browserSolves(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-challenge-'));
  const browser = await chromium.launch({ executablePath: findChromium() ?? undefined, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  try {
    for (const difficulty of DIFFICULTIES) {
      const port = await freePort();
      const server = await startServer({
        name: `challenge-${difficulty}`,
        nodeArgs: ['dist/server/main.js'],
        cwd: projectRoot,
        port,
        env: {
          ...process.env,
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          DATABASE_URL: scratchSqlite(tmp).url,
          AUTH_SECRET_KEY_FILE: path.join(tmp, `key-${difficulty}`),
          SIGNUP_CHALLENGE: 'proof-of-work',
          SIGNUP_CHALLENGE_MAX_NUMBER: String(difficulty),
          SIGNUP_RATE_LIMIT_MAX: '100000',
        },
      });
      try {
        // bypassCSP: the bench's own copy of the search is an inline script, which the site's CSP refuses.
        const page = await browser.newPage({ bypassCSP: true });
        await page.goto(`http://127.0.0.1:${port}/`);
        await page.addScriptTag({ content: searchScript });
        const cdp = await page.context().newCDPSession(page);
        for (const rate of [1, THROTTLE]) {
          await cdp.send('Emulation.setCPUThrottlingRate', { rate });
          const inWorker: Run[] = [];
          const onMain: Run[] = [];
          for (let i = 0; i < SOLVES; i++) {
            inWorker.push(
              await page.evaluate(async (workerUrl) => {
                const c = (await (await fetch('/api/signup/challenge')).json()) as { challenge: string; salt: string; maxnumber: number };
                const started = performance.now();
                const w = new Worker(workerUrl, { type: 'module' });
                const number = await new Promise<number>((resolve) => {
                  w.onmessage = (e: MessageEvent<number>) => resolve(e.data);
                  w.postMessage({ challenge: c.challenge, salt: c.salt, max: c.maxnumber });
                });
                const took = performance.now() - started;
                w.terminate();
                return { ms: took, number };
              }, `/assets/${worker}`),
            );
            // The same search on the page's main thread, which the CPU slowdown applies to for sure.
            onMain.push(
              await page.evaluate(async () => {
                const c = (await (await fetch('/api/signup/challenge')).json()) as { challenge: string; salt: string; maxnumber: number };
                const search = (window as unknown as { PowSearch: { searchRange(c: string, s: string, f: number, t: number): number } }).PowSearch;
                const started = performance.now();
                const number = search.searchRange(c.challenge, c.salt, 0, c.maxnumber);
                return { ms: performance.now() - started, number };
              }),
            );
          }
          report(difficulty, `worker, CPU slowdown ${rate}x`, inWorker);
          report(difficulty, `main thread, CPU slowdown ${rate}x`, onMain);
        }
        await page.close();
      } finally {
        await stopServer(server, 'SIGTERM');
      }
    }
  } finally {
    await browser.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function serverVerification(): Promise<void> {
  const hmacKey = 'k'.repeat(64);
  const difficulty = 1000;
  const payloads: string[] = [];
  for (let i = 0; i < 200; i++) {
    const c = await createChallenge({
      hmacKey,
      maxnumber: difficulty,
      expires: new Date(Date.now() + 600_000),
    });
    const solved = (await solveChallenge(c.challenge, c.salt, c.algorithm, difficulty).promise)!;
    payloads.push(
      Buffer.from(
        JSON.stringify({
          algorithm: c.algorithm,
          challenge: c.challenge,
          number: solved.number,
          salt: c.salt,
          signature: c.signature,
        }),
      ).toString('base64'),
    );
  }
  const verify = solutionVerifier(hmacKey, difficulty);
  for (const p of payloads) verify(p); // warm-up
  const rounds = 20;
  const n = rounds * payloads.length;
  let cpu = process.cpuUsage();
  let started = performance.now();
  for (let r = 0; r < rounds; r++) for (const p of payloads) if (!verify(p).ok) throw new Error('a solution failed');
  let wall = ((performance.now() - started) * 1000) / n;
  let used = process.cpuUsage(cpu);
  console.log(
    `server: solutionVerifier (shape, SHA-256, HMAC with node:crypto): ${((used.user + used.system) / n).toFixed(1)} µs CPU, ${wall.toFixed(1)} µs wall per signup (${n})`,
  );
  // The same check through altcha-lib's verifySolution (Web Crypto), for comparison.
  const parsed = payloads.map((p) => JSON.parse(Buffer.from(p, 'base64').toString()) as Parameters<typeof verifySolution>[0]);
  cpu = process.cpuUsage();
  started = performance.now();
  for (let r = 0; r < rounds; r++) for (const p of parsed) if (!(await verifySolution(p, hmacKey, false))) throw new Error('a solution failed');
  wall = ((performance.now() - started) * 1000) / n;
  used = process.cpuUsage(cpu);
  console.log(`server: altcha-lib verifySolution: ${((used.user + used.system) / n).toFixed(1)} µs CPU, ${wall.toFixed(1)} µs wall per signup (${n})`);
}

await serverVerification();
await browserSolves();
