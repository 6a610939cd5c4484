/**
 * Prints (as JSON) the size V8 reports for the young generation after a stream of short-lived
 * allocations, in a process that has started a worker thread as the server does. Run by
 * tests/server/heap.test.ts in a process of its own, since V8's flags are the whole process's.
 *
 *   node --import tsx tests/support/young-generation.ts configured|default
 *
 * configured: configureHeap() first, as the server's entry does; default: V8's own settings.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import v8 from 'node:v8';
import { configureHeap } from '../../src/server/runtime/heap.js';
import { startModuleWorker } from '../../src/server/runtime/module-worker.js';

const mode = process.argv[2];
if (mode === 'configured') configureHeap();
// Under tsx this thread starts another of its own (the module loader's), each with a heap.
const worker = startModuleWorker(import.meta.url, 'idle-worker');
// Loaded, so every thread it starts (tsx's module loader included) has set up its heap.
await new Promise((resolve) => worker.once('message', resolve));

// Garbage as requests make it: many small objects, a few surviving a while, in turns of the loop.
let kept: object[] = [];
for (let turn = 0; turn < 300; turn++) {
  for (let i = 0; i < 10_000; i++) {
    kept.push({ turn, i, text: `entry-${turn}-${i}` });
    if (kept.length > 20_000) kept = [];
  }
  await nextTurn();
}
const young = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!.space_size;
await worker.terminate();
process.stdout.write(`${JSON.stringify({ young })}\n`);
