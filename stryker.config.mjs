// @ts-check
// Mutation testing (`npm run mutate`): Stryker changes one rule at a time in the code below and runs
// the tests that reach it (per-test coverage); a mutant no test notices "survives". See README.md,
// "Mutation testing". Stryker 9.6.1 is pinned: 10.x needs Node 22.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  // The per-mutant test set: in-process tests only (no PostgreSQL, no spawned processes); see there.
  vitest: { configFile: 'vitest.mutate.config.ts' },
  coverageAnalysis: 'perTest',
  mutate: [
    // core: every pure decision.
    'src/core/**/*.ts',
    '!src/core/**/*.test.ts',
    // store: the backend-neutral rules and argument checks, and the SQLite adapter's decisions
    // (reserve, settle, rate, the pass lifecycle, operator verbs). Not mutated: SQL text
    // (sqlite-queries.ts, sqlite-lease-queries.ts, sqlite-waiter-queries.ts,
    // sqlite-retention-queries.ts, schemas: a mutated statement fails to prepare,
    // which says nothing about a rule) and the PostgreSQL adapter, whose tests need a server; its
    // decisions are the core/lifecycle/ functions mutated above.
    'src/store/store-arguments.ts',
    'src/store/lifecycle-arguments.ts',
    'src/store/operator-arguments.ts',
    'src/store/halt-rows.ts',
    'src/store/rows.ts',
    'src/store/sqlite/sqlite-lifecycle.ts',
    'src/store/sqlite/sqlite-operator.ts',
    // waiting admissions and retention: their argument checks and the SQLite adapter's decisions.
    'src/store/waiters.ts',
    'src/store/retention.ts',
    'src/store/sqlite/sqlite-waiters.ts',
    'src/store/sqlite/sqlite-queue-books.ts',
    'src/store/sqlite/sqlite-retention.ts',
    // plane: the run lifecycle on top of the store.
    'src/plane/**/*.ts',
  ],
  // Two cores on the machines here; raise it where there are more.
  concurrency: 2,
  timeoutMS: 20_000,
  tempDirName: '.stryker-tmp',
  // A store file left by a run is not copied; the upgrade test's fixture is.
  ignorePatterns: ['dist', 'coverage', '.test-results', 'reports', 'bench', '*.db', '*.db-wal', '*.db-shm', '!test/fixtures/**/*.db'],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  thresholds: { high: 95, low: 90, break: null },
};
