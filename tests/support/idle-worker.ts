import { parentPort } from 'node:worker_threads';

// A worker thread that says it has loaded, then does nothing until it is terminated
// (tests/support/young-generation.ts).
parentPort?.on('message', () => {});
parentPort?.postMessage('loaded');
