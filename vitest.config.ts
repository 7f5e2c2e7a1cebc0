import { defineConfig } from 'vitest/config';
import type { TestProjectInlineConfiguration } from 'vitest/config';

import {
  BACKEND_FILES,
  BROWSER_FILES,
  MOCK_FILES,
  POSTGRES_FILES,
  PROCESS_FILES,
  SERVICE_FILES,
  UNIT_FILES,
} from './test/suite-projects.js';
import { ALL_TEST_BACKENDS, selectedTestBackends } from './test/test-backends.js';

// The whole suite (`npm test`), as projects that share one pool of workers: vitest runs them in
// name order, the longest files of each first. docs/testing.md says what each holds, and how to
// run one (`--project`) or one backend (QUOTAPLANE_TEST_BACKENDS).

// Files of a backend QUOTAPLANE_TEST_BACKENDS leaves out.
const backends = selectedTestBackends();
const leftOut = ALL_TEST_BACKENDS.filter((backend) => !backends.has(backend)).flatMap((backend) => BACKEND_FILES[backend]);

// One PostgreSQL server per run (embedded, or QUOTAPLANE_TEST_PG_URL), shared by the projects naming it.
const POSTGRES_SERVER = ['test/postgres/global-setup.ts'];

function project(
  name: string,
  include: readonly string[],
  options: { exclude?: readonly string[]; isolate?: boolean; postgres?: boolean } = {},
): TestProjectInlineConfiguration {
  return {
    extends: true,
    test: {
      name,
      include: [...include],
      exclude: ['**/node_modules/**', ...leftOut, ...(options.exclude ?? [])],
      isolate: options.isolate ?? true,
      ...(options.postgres === true ? { globalSetup: POSTGRES_SERVER } : {}),
    },
  };
}

export default defineConfig({
  test: {
    // CI must never pass because a stray `.only` narrowed the run.
    allowOnly: !process.env.CI,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores on every machine here: more workers only fight over them.
    maxWorkers: 2,
    projects: [
      // The dashboard in Chromium: one long file, started first.
      project('browser', BROWSER_FILES),
      // Files that replace a module with vi.mock: each needs a fresh module graph.
      project('mocks', MOCK_FILES),
      // The PostgreSQL store in process; the files that stop or freeze a server start their own.
      project('postgres', POSTGRES_FILES, { exclude: PROCESS_FILES, isolate: false, postgres: true }),
      // Races between OS processes, crash tests, the built bin: each file in a fresh worker.
      project('processes', PROCESS_FILES, { postgres: true }),
      // The service, its client, the adapters and the CLI in process: one module graph per worker.
      project('service', SERVICE_FILES, { exclude: PROCESS_FILES, isolate: false, postgres: true }),
      // Pure rules, the plane and the SQLite store in process: one module graph per worker.
      project('unit', UNIT_FILES, { exclude: [...PROCESS_FILES, ...MOCK_FILES], isolate: false, postgres: true }),
    ],
  },
});
