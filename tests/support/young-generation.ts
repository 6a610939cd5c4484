/**
 * Prints (as JSON) the size V8 reports for the young generation before and after a stream of
 * short-lived allocations, in a process that has started a worker thread as the server does. Run by
 * tests/server/runtime/heap.test.ts in a process of its own, since V8's flags are the whole process's.
 *
 *   node --import tsx tests/support/young-generation.ts configured|loading|default|bulk [turns|sync]
 *
 * configured: configureHeap() first and heapLoaded() once the worker is up, as the server's entry
 * does around loading the server; loading: configureHeap() only and no worker, as while the server's
 * modules load; default: V8's own settings; bulk: configured, with the allocations made while
 * allowLargeYoungGeneration() holds (as an export does) and then again after it ended (`bulk` is
 * the size at its end).
 * turns (the default): the allocations in turns of the event loop, as requests make them;
 * sync: all in one synchronous stretch, as evaluating a bundle of modules is.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { allowLargeYoungGeneration, configureHeap, heapLoaded, youngGenerationBytes } from '../../src/server/runtime/heap.js';
import { startModuleWorker } from '../../src/server/runtime/module-worker.js';

const mode = process.argv[2];
const stretch = process.argv[3] ?? 'turns';
/** The size before the allocations (tsx loading this script may already have grown it). */
const before = youngGenerationBytes();
if (mode === 'configured' || mode === 'loading' || mode === 'bulk') configureHeap();
// The server starts its worker threads once loaded (loading: none yet). Under tsx this thread starts
// another of its own (the module loader's), each with a heap.
const worker = mode === 'loading' ? null : startModuleWorker(import.meta.url, 'idle-worker');
// Loaded, so every thread it starts (tsx's module loader included) has set up its heap.
if (worker) await new Promise((resolve) => worker.once('message', resolve));
if (mode === 'configured' || mode === 'bulk') heapLoaded();

// Garbage as requests make it: many small objects, a few surviving a while.
async function allocate(): Promise<void> {
  let kept: object[] = [];
  for (let turn = 0; turn < 300; turn++) {
    for (let i = 0; i < 10_000; i++) {
      kept.push({ turn, i, text: `entry-${turn}-${i}` });
      if (kept.length > 20_000) kept = [];
    }
    if (stretch === 'turns') await nextTurn();
  }
}
let bulk: number | undefined;
if (mode === 'bulk') {
  const holdAgain = allowLargeYoungGeneration();
  await allocate();
  bulk = youngGenerationBytes();
  holdAgain();
}
await allocate();
const young = youngGenerationBytes();
await worker?.terminate();
process.stdout.write(`${JSON.stringify({ before, young, bulk })}\n`);
