// The production server's entry. The heap is configured before the server's modules are loaded
// (runtime/heap.ts); serve.ts then starts the server, listens and handles signals. In the production
// build serve.js is the bundled server (scripts/bundle-server.ts); this file is not bundled.
import { configureHeap, heapLoaded } from './runtime/heap.js';

configureHeap();
try {
  await import('./serve.js');
} finally {
  heapLoaded();
}
