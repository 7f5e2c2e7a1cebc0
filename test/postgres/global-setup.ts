import pg from 'pg';
import type { TestProject } from 'vitest/node';

import { selectedTestBackends, TEST_BACKENDS_ENV } from '../test-backends.js';
import { startEmbeddedServer } from './embedded-server.js';

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

/** The server of the run, or why there is none: the URL is empty exactly when `error` is not. */
interface RunServer {
  readonly url: string;
  readonly error: string;
  dispose(): Promise<void>;
}

/**
 * What the projects of one run share: the server's start (one, whichever project asks first) and
 * how many projects still use it. Every project of vitest.config.ts that needs PostgreSQL names
 * this setup, and vitest loads a project's global setup in that project's own module graph, so the
 * share lives on `globalThis` of the main process, where every global setup runs.
 */
interface Shared {
  server: Promise<RunServer> | null;
  users: number;
}

const SHARED_KEY = Symbol.for('quotaplane.test.postgres-server');

function shared(): Shared {
  const holder = globalThis as { [SHARED_KEY]?: Shared };
  holder[SHARED_KEY] ??= { server: null, users: 0 };
  return holder[SHARED_KEY];
}

/**
 * Vitest global setup: one PostgreSQL server for the whole test run, shared by every
 * project that names this file and stopped when the last of them tears down. With
 * `QUOTAPLANE_TEST_PG_URL` set, that server is used and none is started. Otherwise an embedded
 * server is started in a fresh temp directory on a fresh port; the teardown stops it and kills it
 * by PID, and exit/signal hooks do the same if the run dies first. With `QUOTAPLANE_TEST_BACKENDS`
 * leaving PostgreSQL out, no server is started and none is asked for.
 *
 * A server that cannot be started or reached must fail the run loudly, never skip the Postgres
 * suite. Throwing here would not do it (vitest 4 reports a global-setup error but exits 0), so the
 * reason is provided instead, and every Postgres test file fails on it: `testPgUrl()` throws it,
 * and `server.test.ts` fails as a test of its own.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (!selectedTestBackends().has('postgres')) {
    project.provide('quotaplanePgUrl', '');
    project.provide('quotaplanePgError', `${TEST_BACKENDS_ENV} leaves PostgreSQL out, so no server was started: register a test that needs one with describeOn('postgres', …) (test/test-backends.ts)`);
    return async () => {};
  }
  const share = shared();
  share.server ??= runServer();
  share.users += 1;
  const server = await share.server;
  project.provide('quotaplanePgUrl', server.url);
  project.provide('quotaplanePgError', server.error);
  return async () => {
    share.users -= 1;
    if (share.users > 0) return;
    share.server = null;
    await server.dispose();
  };
}

// The given server or a started one, checked with one query before any test file runs.
async function runServer(): Promise<RunServer> {
  const given = process.env[TEST_PG_URL_ENV];
  if (given !== undefined && given !== '') {
    const problem = await unreachable(given);
    return problem === null
      ? { url: given, error: '', dispose: async () => {} }
      : { url: '', error: `${TEST_PG_URL_ENV} names a server that does not answer: ${problem}`, dispose: async () => {} };
  }
  try {
    const server = await startEmbeddedServer('run');
    const problem = await unreachable(server.url);
    return problem === null
      ? { url: server.url, error: '', dispose: () => server.dispose() }
      : { url: '', error: `the embedded PostgreSQL started but does not answer: ${problem}`, dispose: () => server.dispose() };
  } catch (error) {
    return { url: '', error: error instanceof Error ? error.message : String(error), dispose: async () => {} };
  }
}

// One query; the driver's message when it fails, else null.
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
