import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts', 'src/**/*.test.ts'],
    exclude: [
      'tests/e2e/**',
      'node_modules/**',
      'dist/**',
      // Two server processes on one PostgreSQL: only meaningful (and only collected) with one.
      ...(process.env.TEST_DATABASE_URL ? [] : ['tests/server/multi-instance.test.ts']),
    ],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['tests/support/global-setup.ts'],
  },
});
