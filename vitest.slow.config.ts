import { defineConfig } from 'vitest/config';
import unit, { SLOW_TESTS } from './vitest.config.js';

/** The exhaustive sweeps (`npm run test:slow`): the `*.slow.test.ts` files, with the unit suites' setup. */
export default defineConfig({
  ...unit,
  test: { ...unit.test, include: [SLOW_TESTS], exclude: ['node_modules/**', 'dist/**'], testTimeout: 180_000 },
});
