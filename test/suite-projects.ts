/*
 * Which vitest project each test file runs in (vitest.config.ts), and the per-mutant test set of
 * `npm run mutate` (vitest.mutate.config.ts). Paths are relative to the repository root.
 * test/suite-projects.test.ts checks that every test file is in exactly one project, and that a
 * file which replaces a module with `vi.mock` only ever runs isolated.
 */

/**
 * Files that start OS processes (fork, spawn, a `quotaplane serve`, a SIGKILL): the races between
 * processes, the crash tests and the built bin. Each runs isolated in the `processes` project.
 */
export const PROCESS_FILES: readonly string[] = [
  'test/adapters/optional-peers.test.ts',
  'test/cli/bin.test.ts',
  'test/cli/cli-behaviour.test.ts',
  'test/cli/package-contents.test.ts',
  'test/cli/serve.test.ts',
  'test/http/lock-wait.test.ts',
  'test/plane/crash-recovery-kill.test.ts',
  'test/plane/prune-race.test.ts',
  'test/plane/wait-fifo-processes.test.ts',
  'test/postgres/ceiling-races.test.ts',
  'test/postgres/lost-reply.test.ts',
  'test/postgres/postgres-api-keys.test.ts',
  'test/postgres/postgres-batch.test.ts',
  'test/postgres/races.test.ts',
  'test/postgres/serve-operations.test.ts',
  'test/sqlite/sqlite-api-keys.test.ts',
  'test/sqlite/sqlite-ceiling-races.test.ts',
  'test/sqlite/sqlite-checkpointer.test.ts',
  'test/sqlite/sqlite-group-commit.test.ts',
  'test/sqlite/sqlite-races.test.ts',
  'test/sqlite/sweep-race.test.ts',
];

/**
 * Files that replace a module with `vi.mock`. A mock only reaches the modules a file loads after
 * it, so in a worker that already loaded the real module (`isolate: false`) it silently does
 * nothing: these files run isolated, in the `mocks` project, and in their own project under
 * `npm run mutate` too.
 */
export const MOCK_FILES: readonly string[] = ['test/sqlite/sqlite-checkpointer-start.test.ts', 'test/sqlite/sqlite-disk-full.test.ts'];

/** Files of one backend only: left out when `QUOTAPLANE_TEST_BACKENDS` leaves that backend out. */
export const BACKEND_FILES = {
  sqlite: ['test/sqlite/**/*.test.ts', 'test/conformance-sqlite.test.ts'],
  postgres: ['test/postgres/**/*.test.ts'],
} as const;

/** The pure tests, the plane's scenarios and the SQLite store in process: the `unit` project. */
export const UNIT_FILES: readonly string[] = [
  'src/**/*.test.ts',
  'test/*.test.ts',
  'test/break/**/*.test.ts',
  'test/docs/**/*.test.ts',
  'test/plane/**/*.test.ts',
  'test/schema/**/*.test.ts',
  'test/sqlite/**/*.test.ts',
  'test/store/**/*.test.ts',
];

/** The HTTP service, its client, the SDK adapters and the CLI in process: the `service` project. */
export const SERVICE_FILES: readonly string[] = [
  'test/http/**/*.test.ts',
  'test/client/**/*.test.ts',
  'test/adapters/**/*.test.ts',
  'test/cli/**/*.test.ts',
];

/** The PostgreSQL store in process, on the run's server (or a server of the file's own). */
export const POSTGRES_FILES: readonly string[] = ['test/postgres/**/*.test.ts'];

/** The dashboard in a real browser, against the built `quotaplane serve`. */
export const BROWSER_FILES: readonly string[] = ['test/web/**/*.test.ts'];

/**
 * The per-mutant test set of `npm run mutate`: what runs in this process, quickly, on SQLite (see
 * vitest.mutate.config.ts for why each part is in or out).
 */
export const MUTATION_FILES: readonly string[] = [
  'src/**/*.test.ts',
  'test/plane/**/*.test.ts',
  'test/sqlite/**/*.test.ts',
  'test/conformance-sqlite.test.ts',
  'test/break/**/*.test.ts',
];

/** Left out of the mutation set: files that fork or spawn OS processes, and the slow races. */
export const MUTATION_EXCLUDED_FILES: readonly string[] = [
  'test/plane/crash-recovery-kill.test.ts',
  'test/sqlite/sqlite-races.test.ts',
  'test/sqlite/sweep-race.test.ts',
  'test/sqlite/sqlite-api-keys.test.ts',
  'test/sqlite/sqlite-ceiling-races.test.ts',
  'test/plane/wait-fifo-processes.test.ts',
  'test/plane/prune-race.test.ts',
];
