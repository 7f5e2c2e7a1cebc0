import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // CI must never pass because a stray `.only` narrowed the run.
    allowOnly: !process.env.CI,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores on every machine here: more workers only fight over them.
    maxWorkers: 2,
    // One PostgreSQL server per run (embedded, or QUOTAPLANE_TEST_PG_URL) for the Postgres suite.
    globalSetup: ['test/postgres/global-setup.ts'],
  },
});
