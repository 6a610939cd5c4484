/**
 * Lighthouse (mobile, simulated throttling) on the landing page of the production build, side by side
 * with the floor: a bare Vite + React page (the create-vite React template) built here in a temporary
 * directory. Each round runs both, in a fresh Chromium each; the medians of the runs are printed: the
 * four category scores, LCP, FCP, TBT, CLS, and the bytes transferred.
 *
 *   npm run build && npm run bench:lighthouse      # LIGHTHOUSE_RUNS=5
 *
 * Nothing leaves the machine: the product runs as `node dist/server/main.js` on a free port of 127.0.0.1
 * with a temporary SQLite database, the floor is served from 127.0.0.1 too, and Chromium resolves no
 * host name but localhost (`--host-resolver-rules`). A run that still requested anything else fails.
 * Each run's report is written to bench-results/lighthouse/.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import react from '@vitejs/plugin-react';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import { build } from 'vite';
import { findChromium } from '../ensure-chromium.mjs';
import { median } from './lib/harness.js';

const RUNS = Number(process.env.LIGHTHOUSE_RUNS ?? 5);
const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'] as const;
const METRICS = [
  { id: 'largest-contentful-paint', label: 'LCP', unit: 'ms' },
  { id: 'first-contentful-paint', label: 'FCP', unit: 'ms' },
  { id: 'total-blocking-time', label: 'TBT', unit: 'ms' },
  { id: 'cumulative-layout-shift', label: 'CLS', unit: '' },
  { id: 'total-byte-weight', label: 'bytes transferred', unit: 'KB' },
] as const;
const CHROME_FLAGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  // Every host name but localhost fails to resolve: no request can leave the machine.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
];

const projectRoot = process.cwd();
if (!fs.existsSync(path.join(projectRoot, 'dist/server/main.js'))) {
  console.error('Run `npm run build` first.');
  process.exit(1);
}
const chromePath = process.env.CHROME_PATH ?? findChromium();
if (!chromePath) {
  console.error('No Chromium found: install Debian\'s chromium (/usr/bin/chromium) or set CHROME_PATH.');
  process.exit(1);
}
process.env.CHROME_PATH = chromePath;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-lighthouse-'));
const reportDir = path.join(projectRoot, 'bench-results/lighthouse');
fs.mkdirSync(reportDir, { recursive: true });

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function waitForOk(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const poll = () =>
      http
        .get(url, (res) => {
          res.resume();
          if (res.statusCode === 200) resolve();
          else if (Date.now() > deadline) reject(new Error(`${url} answered ${res.statusCode}`));
          else setTimeout(poll, 100);
        })
        .on('error', () => (Date.now() > deadline ? reject(new Error(`${url} did not come up`)) : setTimeout(poll, 100)));
    poll();
  });
}

/** The product's environment: its own SQLite database and secret key file (the server's and the admin CLI's). */
const productEnv = {
  ...process.env,
  DATABASE_URL: `file:${path.join(tmp, 'product.db')}`,
  AUTH_SECRET_KEY_FILE: path.join(tmp, 'secrets/auth-secret.key'),
  LOG_LEVEL: 'warn',
};

/** The production server on a free port, with its own SQLite database and secret key file. */
async function startProduct(): Promise<{ url: string; server: ChildProcess }> {
  const port = await freePort();
  const server = spawn(process.execPath, ['dist/server/main.js'], {
    env: { ...productEnv, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitForOk(`http://127.0.0.1:${port}/healthz`);
  return { url: `http://127.0.0.1:${port}/`, server };
}

/** An open offering list (issue 31) on the product's database, made with the production admin CLI: its page's path. */
function openOfferingList(): string {
  const slug = 'bench-offering';
  const cli = (...args: string[]) => {
    const run = spawnSync(process.execPath, ['dist/server/cli/admin.js', 'lists', ...args], { env: productEnv, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`admin lists ${args[0]} failed:\n${run.stdout}${run.stderr}`);
  };
  cli('create', slug, '--name', 'Orbit Farms, Inc.', '--kind', 'testing-the-waters', '--description', 'Vertical farms for city rooftops.', '--bands', '1000,5000,25000');
  cli('open', slug);
  return `offerings/${slug}`;
}

// The create-vite React template (index.html, main.jsx, App.jsx, its two stylesheets, two logos).
const FLOOR_FILES: Record<string, string> = {
  'index.html': `<!doctype html>
<html lang="en">
  <head>
    <meta charset="UTF-8" />
    <link rel="icon" type="image/svg+xml" href="/vite.svg" />
    <meta name="viewport" content="width=device-width, initial-scale=1.0" />
    <title>Vite + React</title>
  </head>
  <body>
    <div id="root"></div>
    <script type="module" src="/src/main.jsx"></script>
  </body>
</html>
`,
  'src/main.jsx': `import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import './index.css'
import App from './App.jsx'

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <App />
  </StrictMode>,
)
`,
  'src/App.jsx': `import { useState } from 'react'
import reactLogo from './assets/react.svg'
import viteLogo from '/vite.svg'
import './App.css'

function App() {
  const [count, setCount] = useState(0)

  return (
    <>
      <div>
        <a href="https://vite.dev" target="_blank">
          <img src={viteLogo} className="logo" alt="Vite logo" />
        </a>
        <a href="https://react.dev" target="_blank">
          <img src={reactLogo} className="logo react" alt="React logo" />
        </a>
      </div>
      <h1>Vite + React</h1>
      <div className="card">
        <button onClick={() => setCount((count) => count + 1)}>
          count is {count}
        </button>
        <p>
          Edit <code>src/App.jsx</code> and save to test HMR
        </p>
      </div>
      <p className="read-the-docs">
        Click on the Vite and React logos to learn more
      </p>
    </>
  )
}

export default App
`,
  'src/index.css': `:root {
  font-family: system-ui, Avenir, Helvetica, Arial, sans-serif;
  line-height: 1.5;
  font-weight: 400;
  color-scheme: light dark;
  color: rgba(255, 255, 255, 0.87);
  background-color: #242424;
  font-synthesis: none;
  text-rendering: optimizeLegibility;
  -webkit-font-smoothing: antialiased;
  -moz-osx-font-smoothing: grayscale;
}
a { font-weight: 500; color: #646cff; text-decoration: inherit; }
a:hover { color: #535bf2; }
body { margin: 0; display: flex; place-items: center; min-width: 320px; min-height: 100vh; }
h1 { font-size: 3.2em; line-height: 1.1; }
button {
  border-radius: 8px; border: 1px solid transparent; padding: 0.6em 1.2em; font-size: 1em; font-weight: 500;
  font-family: inherit; background-color: #1a1a1a; cursor: pointer; transition: border-color 0.25s;
}
button:hover { border-color: #646cff; }
button:focus, button:focus-visible { outline: 4px auto -webkit-focus-ring-color; }
@media (prefers-color-scheme: light) {
  :root { color: #213547; background-color: #ffffff; }
  a:hover { color: #747bff; }
  button { background-color: #f9f9f9; }
}
`,
  'src/App.css': `#root { max-width: 1280px; margin: 0 auto; padding: 2rem; text-align: center; }
.logo { height: 6em; padding: 1.5em; will-change: filter; transition: filter 300ms; }
.logo:hover { filter: drop-shadow(0 0 2em #646cffaa); }
.logo.react:hover { filter: drop-shadow(0 0 2em #61dafbaa); }
@keyframes logo-spin { from { transform: rotate(0deg); } to { transform: rotate(360deg); } }
@media (prefers-reduced-motion: no-preference) { a:nth-of-type(2) .logo { animation: logo-spin infinite 20s linear; } }
.card { padding: 2em; }
.read-the-docs { color: #888; }
`,
  'public/vite.svg': `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 256 257"><defs><linearGradient id="a" x1="-.8%" x2="57.6%" y1="7.7%" y2="78.4%"><stop offset="0%" stop-color="#41D1FF"/><stop offset="100%" stop-color="#BD34FE"/></linearGradient><linearGradient id="b" x1="43.4%" x2="50.3%" y1="2.2%" y2="89%"><stop offset="0%" stop-color="#FFEA83"/><stop offset="8.3%" stop-color="#FFDD35"/><stop offset="100%" stop-color="#FFA800"/></linearGradient></defs><path fill="url(#a)" d="M255.2 37.9 134.4 254a6.6 6.6 0 0 1-11.4.1L.1 37.9a6.6 6.6 0 0 1 6.9-9.8l121 21.6a6.6 6.6 0 0 0 2.3 0l118.4-21.6a6.6 6.6 0 0 1 6.9 9.7Z"/><path fill="url(#b)" d="M185.4.1 96.1 17.6a3.3 3.3 0 0 0-2.6 3l-5.5 92.9a3.3 3.3 0 0 0 4 3.4l24.9-5.7a3.3 3.3 0 0 1 4 3.9l-7.4 36.2a3.3 3.3 0 0 0 4.2 3.8l15.4-4.7a3.3 3.3 0 0 1 4.2 3.8l-11.8 57.1c-.7 3.6 4 5.5 6 2.5l1.3-2 72.9-145.6a3.3 3.3 0 0 0-3.6-4.7l-25.6 5a3.3 3.3 0 0 1-3.8-4.2l16.7-58a3.3 3.3 0 0 0-3.8-4.2Z"/></svg>
`,
  'src/assets/react.svg': `<svg xmlns="http://www.w3.org/2000/svg" width="35.93" height="32" viewBox="0 0 256 228"><path fill="#00D8FF" d="M210.5 74c-2.7-1-5.5-1.8-8.4-2.6l1.4-6.2c6.4-31 2.2-55.9-12-64.1-13.7-7.9-36 .3-58.4 19.9-2.2 1.9-4.3 3.9-6.4 5.9a145 145 0 0 0-4.2-3.9C98.9 2.1 75.5-6.6 61.5 1.5 48 9.3 44 32.5 49.7 61.5l1.4 6.4c-3.3.9-6.5 2-9.5 3C14.2 80.4 0 95.7 0 111.5c0 16.4 15.6 32.8 43.9 42.5 2.3.8 4.6 1.5 7 2.2l-1.6 6.9c-5.4 28.3-1.2 50.8 12.1 58.5 13.8 8 37-.2 59.6-19.9l5.4-5 6.9 6.7c21.8 18.7 43.3 26.3 56.6 18.6 13.7-8 18.2-32 12.4-61.3l-1.3-5.3 5.5-1.7c29.4-9.8 46.6-25.9 46.6-42.2 0-15.8-16.4-31-43.3-40.3ZM128 192.3a95 95 0 0 1-12.5-16.3l-10-16.5-8.5-17.6 8.4-17.4 10-16.6c4-5.7 8.1-11.1 12.5-16.2 4.4 5.1 8.5 10.5 12.4 16.1l10 16.5 8.5 17.5-8.5 17.6-9.9 16.6A98 98 0 0 1 128 192.3Zm0-66.2a14.5 14.5 0 1 1 0 29 14.5 14.5 0 0 1 0-29Z"/></svg>
`,
};

/** Builds the floor page with this project's Vite and React (a `node_modules` link makes them resolvable). */
async function buildFloor(): Promise<string> {
  const root = path.join(tmp, 'floor');
  for (const [file, text] of Object.entries(FLOOR_FILES)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  fs.symlinkSync(path.join(projectRoot, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  const outDir = path.join(root, 'dist');
  await build({ root, configFile: false, logLevel: 'warn', plugins: [react()], build: { outDir, emptyOutDir: true } });
  return outDir;
}

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };

/** Serves the floor's build as the product is served: brotli or gzip, hashed assets cached for a year. */
async function serveFloor(dir: string): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    const file = path.join(dir, pathname === '/' ? 'index.html' : pathname);
    if (!file.startsWith(dir + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    const body = fs.readFileSync(file);
    const accepts = String(req.headers['accept-encoding'] ?? '');
    const headers: Record<string, string> = {
      'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
      'cache-control': pathname.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      vary: 'accept-encoding',
    };
    let payload = body;
    if (accepts.includes('br')) {
      payload = zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } });
      headers['content-encoding'] = 'br';
    } else if (accepts.includes('gzip')) {
      payload = zlib.gzipSync(body, { level: 9 });
      headers['content-encoding'] = 'gzip';
    }
    res.writeHead(200, headers).end(payload);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${port}/`, server };
}

type RunResult = Record<string, number>;

async function runLighthouse(url: string, name: string, round: number): Promise<RunResult> {
  const chrome = await chromeLauncher.launch({ chromePath: chromePath ?? undefined, chromeFlags: CHROME_FLAGS, logLevel: 'silent' });
  try {
    const result = await lighthouse(url, { port: chrome.port, output: 'json', logLevel: 'error', onlyCategories: [...CATEGORIES] });
    if (!result) throw new Error(`Lighthouse returned nothing for ${url}`);
    const { lhr } = result;
    fs.writeFileSync(path.join(reportDir, `${name}-${round}.json`), JSON.stringify(lhr));
    if (lhr.runtimeError) throw new Error(`Lighthouse: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);

    const requests = (lhr.audits['network-requests']?.details as { items?: Array<{ url: string }> } | undefined)?.items ?? [];
    const outside = requests.map((r) => r.url).filter((u) => !/^(https?:\/\/(127\.0\.0\.1|localhost)[:/]|data:|blob:)/.test(u));
    if (outside.length > 0) throw new Error(`${name} requested something outside this machine: ${outside.join(', ')}`);

    const values: RunResult = {};
    for (const id of CATEGORIES) values[id] = Math.round((lhr.categories[id]?.score ?? 0) * 100);
    for (const { id, unit } of METRICS) {
      const value = lhr.audits[id]?.numericValue ?? Number.NaN;
      values[id] = unit === 'KB' ? value / 1024 : value;
    }
    return values;
  } finally {
    chrome.kill();
  }
}

/** Lighthouse now and then fails to record a trace on a busy machine (NO_NAVSTART, NO_FCP): such a run is repeated. */
async function runWithRetries(url: string, name: string, round: number, attempts = 3): Promise<RunResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runLighthouse(url, name, round);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (attempt >= attempts || !message.startsWith('Lighthouse:')) throw error;
      console.log(`  run ${round} ${name}: ${message.split(' ').slice(0, 2).join(' ')}, again`);
    }
  }
}

function format(id: string, value: number): string {
  const metric = METRICS.find((m) => m.id === id);
  if (!metric) return String(Math.round(value));
  if (metric.unit === 'ms') return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`;
  if (metric.unit === 'KB') return `${value.toFixed(1)} KB`;
  return value.toFixed(3);
}

let product: { url: string; server: ChildProcess } | undefined;
let floor: { url: string; server: http.Server } | undefined;
try {
  const floorDir = await buildFloor();
  product = await startProduct();
  floor = await serveFloor(floorDir);
  // The landing page, an offering list's page (issue 31: no script of its own) and the floor.
  const targets = [
    { name: 'product', url: product.url },
    { name: 'offering', url: `${product.url}${openOfferingList()}` },
    { name: 'floor', url: floor.url },
  ];
  const results: Record<string, RunResult[]> = { product: [], offering: [], floor: [] };
  console.log(`Lighthouse ${RUNS}× mobile: product ${product.url} and an offering page vs floor (bare Vite + React) ${floor.url}`);
  for (let round = 1; round <= RUNS; round++) {
    for (const target of targets) {
      const values = await runWithRetries(target.url, target.name, round);
      results[target.name]!.push(values);
      console.log(
        `  run ${round} ${target.name.padEnd(8)} ` +
          `perf ${values.performance} · LCP ${format('largest-contentful-paint', values['largest-contentful-paint']!)} · ` +
          `FCP ${format('first-contentful-paint', values['first-contentful-paint']!)} · TBT ${format('total-blocking-time', values['total-blocking-time']!)}`,
      );
    }
  }

  const rows: Array<[string, string]> = [
    ...CATEGORIES.map((id) => [id, id] as [string, string]),
    ...METRICS.map(({ id, label }) => [id, label] as [string, string]),
  ];
  console.log(`\nmedian of ${RUNS} runs           product   offering      floor`);
  for (const [id, label] of rows) {
    const cells = targets.map((t) => format(id, median(results[t.name]!.map((r) => r[id]!))).padStart(10));
    console.log(`${label.padEnd(26)}${cells.join(' ')}`);
  }
  console.log(`\nreports: ${path.relative(projectRoot, reportDir)}/`);
} finally {
  product?.server.kill('SIGTERM');
  floor?.server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
