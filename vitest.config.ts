import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';
import { useTmpfsForTestFiles } from './tests/support/tmpfs.js';

useTmpfsForTestFiles();

/** The exhaustive sweeps: their own project, `slow`. */
const SLOW_TESTS = '**/*.slow.test.ts';

/**
 * The sweeps first: they are few, long and small files (the default order, without timings from an
 * earlier run, is the largest file first), so none is left running alone at the end of the run.
 */
class SweepsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const slow = (file: TestSpecification) => file.moduleId.endsWith('.slow.test.ts');
    return [...sorted.filter(slow), ...sorted.filter((file) => !slow(file))];
  }
}

/**
 * Two projects, run together by `vitest run` (`npm test`), or alone: `npm run test:unit` (--project
 * unit) and `npm run test:slow` (--project slow, the `*.slow.test.ts` files).
 */
export default defineConfig({
  test: {
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // More processes than the two cores: much of a test's time is spent waiting (fsync, PostgreSQL,
    // child processes), not computing.
    maxWorkers: 3,
    sequence: { sequencer: SweepsFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['tests/**/*.test.ts', 'src/**/*.test.ts'],
          exclude: [
            'tests/e2e/**',
            'node_modules/**',
            'dist/**',
            SLOW_TESTS,
            // Two server processes on one PostgreSQL: only meaningful (and only collected) with one.
            ...(process.env.TEST_DATABASE_URL ? [] : ['tests/server/app/multi-instance.test.ts']),
          ],
          // Long-lived processes, each running test file after test file: a file's modules (Fastify, the
          // app, the drivers, the password dictionaries) are loaded and compiled once per process rather
          // than once per file, which was half of the suite's CPU time. What a test file starts it also
          // stops (apps, servers, databases; setup-file.ts hands PostgreSQL databases on), and no file
          // mocks modules.
          isolate: false,
          // The databases' templates, and PostgreSQL databases handed on from test to test.
          globalSetup: ['tests/support/global-setup.ts'],
          setupFiles: ['tests/support/setup-file.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'slow',
          include: [SLOW_TESTS],
          exclude: ['node_modules/**', 'dist/**'],
          testTimeout: 180_000,
          // Each file in a fresh process: some sweep formatDateJoined from an empty cache. No database.
          isolate: true,
        },
      },
    ],
  },
});
