import { defineConfig } from 'vitest/config';
import { useTmpfsForTestFiles } from './tests/support/tmpfs.js';

useTmpfsForTestFiles();

/**
 * The unit and integration suites (`npm run test:unit`). The exhaustive sweeps, `*.slow.test.ts`,
 * run apart (`npm run test:slow`, vitest.slow.config.ts); `npm test` and CI run both.
 */
export const SLOW_TESTS = '**/*.slow.test.ts';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts', 'src/**/*.test.ts'],
    exclude: [
      'tests/e2e/**',
      'node_modules/**',
      'dist/**',
      SLOW_TESTS,
      // Two server processes on one PostgreSQL: only meaningful (and only collected) with one.
      ...(process.env.TEST_DATABASE_URL ? [] : ['tests/server/multi-instance.test.ts']),
    ],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A few long-lived processes, each running test file after test file: a file's modules (Fastify,
    // the app, the drivers) are loaded and compiled once per process rather than once per file, which
    // was half of the suite's CPU time. What a test file starts it also stops (apps, servers,
    // databases; setup-file.ts drops a file's PostgreSQL databases), and no file mocks modules.
    pool: 'forks',
    isolate: false,
    // More processes than the two cores: much of a test's time is spent waiting (fsync, PostgreSQL,
    // child processes), not computing.
    maxWorkers: 3,
    globalSetup: ['tests/support/global-setup.ts'],
    setupFiles: ['tests/support/setup-file.ts'],
  },
});
