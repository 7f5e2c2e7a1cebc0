import type { TestProject } from 'vitest/node';

import { startEmbeddedServer, type EmbeddedServer } from './embedded-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the PostgreSQL server the Postgres test files share; each file works in its own schema. */
    quotaplanePgUrl: string;
  }
}

/** Environment variable naming an existing server to test against instead of starting one. */
export const TEST_PG_URL_ENV = 'QUOTAPLANE_TEST_PG_URL';

/**
 * Vitest global setup: one PostgreSQL server for the whole test run (issue #3). With
 * `QUOTAPLANE_TEST_PG_URL` set, that server is used and none is started. Otherwise an embedded
 * server is started in a fresh temp directory on a fresh port; the returned teardown stops it and
 * kills it by PID, and exit/signal hooks do the same if the run dies first. A server that cannot
 * start fails the run loudly: the Postgres suite is never skipped.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env[TEST_PG_URL_ENV];
  if (given !== undefined && given !== '') {
    project.provide('quotaplanePgUrl', given);
    return async () => {};
  }
  const server: EmbeddedServer = await startEmbeddedServer('run');
  project.provide('quotaplanePgUrl', server.url);
  return () => server.dispose();
}
