import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { applyHeapFlags } from './heap.js';

/**
 * Starts the worker thread whose module is `name` (without extension) beside the module at
 * `callerUrl` (its import.meta.url). Compiled JavaScript runs the worker's .js as is; the TypeScript
 * sources (development, tests) run its .ts through tsx, registered in the worker first.
 */
export function startModuleWorker(callerUrl: string, name: string, options: WorkerOptions = {}): Worker {
  const worker = newModuleWorker(callerUrl, name, options);
  // V8 resets some of its flags as the thread sets up its heap: the server applies its settings again.
  worker.once('online', applyHeapFlags);
  return worker;
}

function newModuleWorker(callerUrl: string, name: string, options: WorkerOptions): Worker {
  if (fileURLToPath(callerUrl).endsWith('.js')) return new Worker(new URL(`./${name}.js`, callerUrl), options);
  const require = createRequire(callerUrl);
  const tsxPackage = require.resolve('tsx/package.json');
  const { exports } = JSON.parse(fs.readFileSync(tsxPackage, 'utf8')) as { exports: Record<string, { import?: { default?: string } }> };
  const api = exports['./esm/api']?.import?.default;
  if (!api) throw new Error("tsx has no './esm/api' export");
  const apiUrl = pathToFileURL(path.join(path.dirname(tsxPackage), api)).href;
  const entry = new URL(`./${name}.ts`, callerUrl).href;
  const code = `import(${JSON.stringify(apiUrl)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { ...options, eval: true });
}
