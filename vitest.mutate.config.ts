import { defineConfig } from 'vitest/config';

import { BACKEND_FILES, MOCK_FILES, MUTATION_EXCLUDED_FILES, MUTATION_FILES } from './test/suite-projects.js';

// The test set `npm run mutate` (Stryker, stryker.config.mjs) runs once per mutant. It keeps only
// what runs in this process and quickly, so that each of the ~2,000 mutants costs seconds, not minutes:
//
//  - in:  the pure unit tests beside the code (src/**/*.test.ts), the plane scenarios on SQLite
//         (test/plane), the SQLite adapter's own tests (test/sqlite) and the conformance suite on
//         SQLite (test/conformance-sqlite.test.ts);
//  - out: everything that needs PostgreSQL (test/postgres, and the PostgreSQL half of the plane
//         scenarios that run on both backends: QUOTAPLANE_TEST_BACKENDS=sqlite below leaves them
//         unregistered, so no server is needed or started),
//         tests that fork or spawn OS processes (SQLite and PostgreSQL races, the ceiling,
//         waiting and prune races, the SIGKILL crash test, the CLI's bin and serve tests, the
//         API-key first-key race), and the HTTP, client and CLI suites (they reach the plane
//         through a server or a command and add minutes per run for little the plane's own tests
//         miss).
//
// Nothing here is skipped in `npm test`: that runs the whole suite with vitest.config.ts, whose
// `unit` project runs these files (but the process ones) the same way, one module graph per worker.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
    // Set in every worker: the suites written for both backends register only their SQLite half.
    env: { QUOTAPLANE_TEST_BACKENDS: 'sqlite' },
    projects: [
      {
        extends: true,
        test: {
          name: 'mutate',
          include: [...MUTATION_FILES],
          exclude: ['**/node_modules/**', ...BACKEND_FILES.postgres, ...MUTATION_EXCLUDED_FILES, ...MOCK_FILES],
          // One module graph per worker instead of one per file: the ~35 files load once, so a
          // mutant's run costs seconds instead of a minute. Every test builds its own store.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          // A file that replaces a module with vi.mock needs a module graph of its own: in a shared
          // one the real module is already loaded and the mock silently changes nothing.
          name: 'mutate-mocks',
          include: [...MOCK_FILES],
          isolate: true,
        },
      },
    ],
  },
});
