import { afterEach } from 'vitest';
import { postgresTestEnded } from './databases.js';

// Run before every test file (vitest.config.ts's setupFiles). Its hook is the outermost: the test's
// own clean-ups, which give databases back, have run before it.
afterEach(() => postgresTestEnded());
