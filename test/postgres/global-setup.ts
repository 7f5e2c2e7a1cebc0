import pg from 'pg';
import type { TestProject } from 'vitest/node';

import { startEmbeddedServer, type EmbeddedServer } from './embedded-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the PostgreSQL server the Postgres test files share; each file works in its own schema. */
    quotaplanePgUrl: string;
    /** Why there is no server, when the setup could not start or reach one (then the URL is empty). */
    quotaplanePgError: string;
  }
}

/** Environment variable naming an existing server to test against instead of starting one. */
export const TEST_PG_URL_ENV = 'QUOTAPLANE_TEST_PG_URL';

/**
 * Vitest global setup: one PostgreSQL server for the whole test run (issue #3). With
 * `QUOTAPLANE_TEST_PG_URL` set, that server is used and none is started. Otherwise an embedded
 * server is started in a fresh temp directory on a fresh port; the returned teardown stops it and
 * kills it by PID, and exit/signal hooks do the same if the run dies first.
 *
 * A server that cannot be started or reached must fail the run loudly, never skip the Postgres
 * suite. Throwing here would not do it (vitest 4 reports a global-setup error but exits 0), so the
 * reason is provided instead, and every Postgres test file fails on it: `testPgUrl()` throws it,
 * and `server.test.ts` fails as a test of its own.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  project.provide('quotaplanePgError', '');
  const given = process.env[TEST_PG_URL_ENV];
  if (given !== undefined && given !== '') {
    const problem = await unreachable(given);
    project.provide('quotaplanePgUrl', problem === null ? given : '');
    if (problem !== null) project.provide('quotaplanePgError', `${TEST_PG_URL_ENV} names a server that does not answer: ${problem}`);
    return async () => {};
  }
  let server: EmbeddedServer;
  try {
    server = await startEmbeddedServer('run');
  } catch (error) {
    project.provide('quotaplanePgUrl', '');
    project.provide('quotaplanePgError', error instanceof Error ? error.message : String(error));
    return async () => {};
  }
  const problem = await unreachable(server.url);
  project.provide('quotaplanePgUrl', problem === null ? server.url : '');
  if (problem !== null) project.provide('quotaplanePgError', `the embedded PostgreSQL started but does not answer: ${problem}`);
  return () => server.dispose();
}

// One query before any test file runs; the driver's message when it fails, else null.
async function unreachable(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}
