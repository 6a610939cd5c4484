import { defineConfig } from 'vitest/config';
import unit, { SLOW_TESTS } from './vitest.config.js';

/**
 * The exhaustive sweeps (`npm run test:slow`): the `*.slow.test.ts` files, with the unit suites' setup,
 * each file in a fresh process (some sweep formatDateJoined from an empty cache), one per core.
 */
export default defineConfig({
  ...unit,
  test: { ...unit.test, include: [SLOW_TESTS], exclude: ['node_modules/**', 'dist/**'], testTimeout: 180_000, isolate: true, maxWorkers: 2 },
});
