import { defineConfig } from 'vitest/config';

// The test set `npm run mutate` (Stryker, stryker.config.mjs) runs once per mutant. It keeps only
// what runs in this process and quickly, so that each of the ~2,000 mutants costs seconds, not minutes:
//
//  - in:  the pure unit tests beside the code (src/**/*.test.ts), the plane scenarios on SQLite
//         (test/plane), the SQLite adapter's own tests (test/sqlite) and the conformance suite on
//         SQLite (test/conformance-sqlite.test.ts);
//  - out: everything that needs PostgreSQL (test/postgres, and the `on postgres` half of the
//         plane scenarios that run on both backends, "… on 'postgres' …": excluded by name below, so
//         no server is started),
//         tests that fork or spawn OS processes (SQLite and PostgreSQL races, the ceiling,
//         waiting and prune races, the SIGKILL crash test, the CLI's bin and serve tests, the
//         API-key first-key race), and the HTTP, client and CLI suites (they reach the plane
//         through a server or a command and add minutes per run for little the plane's own tests
//         miss).
//
// Nothing here is skipped in `npm test`: that runs the whole suite with vitest.config.ts.
export default defineConfig({
  test: {
    include: [
      'src/**/*.test.ts',
      'test/plane/**/*.test.ts',
      'test/sqlite/**/*.test.ts',
      'test/conformance-sqlite.test.ts',
    ],
    exclude: [
      'node_modules/**',
      'test/plane/crash-recovery-kill.test.ts',
      'test/sqlite/sqlite-races.test.ts',
      'test/sqlite/sweep-race.test.ts',
      'test/sqlite/sqlite-api-keys.test.ts',
      'test/sqlite/sqlite-ceiling-races.test.ts',
      'test/plane/wait-fifo-processes.test.ts',
      'test/plane/prune-race.test.ts',
    ],
    // Scenarios written for both backends name theirs ("… on postgres"): run only the SQLite half.
    testNamePattern: /^(?!.*\bon '?postgres\b)/,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
    // One module graph per worker instead of one per file: the ~35 files load once, so a mutant's run
    // costs seconds instead of a minute. The suite passes either way (every test builds its own store).
    isolate: false,
  },
});
