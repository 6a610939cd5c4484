// The production server's entry. The heap is configured before the server's modules are loaded
// (runtime/heap.ts); serve.ts then starts the server, listens and handles signals.
import { configureHeap } from './runtime/heap.js';

configureHeap();
await import('./serve.js');
