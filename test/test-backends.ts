import { describe } from 'vitest';

/** A store backend the tests can run on. */
export type TestBackend = 'sqlite' | 'postgres';

/** Every backend, in the order the suites name them. */
export const ALL_TEST_BACKENDS: readonly TestBackend[] = ['sqlite', 'postgres'];

/**
 * Environment variable choosing the backends the store tests run on: `sqlite`, `postgres` or
 * `sqlite,postgres` (the default, both). `npm run test:fast` sets `sqlite`.
 */
export const TEST_BACKENDS_ENV = 'QUOTAPLANE_TEST_BACKENDS';

/**
 * The backends named by `QUOTAPLANE_TEST_BACKENDS` in `env` (comma-separated, case and spaces
 * ignored); both when it is unset or empty. Throws naming the variable on a name that is not a
 * backend, so a typo never silently runs nothing.
 */
export function selectedTestBackends(env: Readonly<Record<string, string | undefined>> = process.env): ReadonlySet<TestBackend> {
  const given = env[TEST_BACKENDS_ENV]?.trim() ?? '';
  if (given === '') return new Set(ALL_TEST_BACKENDS);
  const names = given.split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '');
  const unknown = names.filter((name) => !(ALL_TEST_BACKENDS as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length === 0) {
    throw new Error(`${TEST_BACKENDS_ENV}=${given} names no backend (${unknown.join(', ')}): give sqlite, postgres or sqlite,postgres`);
  }
  return new Set(names as TestBackend[]);
}

/** True when the store tests of `backend` run in this process (see {@link selectedTestBackends}). */
export function testsBackend(backend: TestBackend): boolean {
  return selectedTestBackends().has(backend);
}

/**
 * `describe(name, body)` when `backend` is selected, else nothing at all: the tests of a backend
 * left out are not registered (not skipped), so `npm test`'s count has no skipped test in it.
 */
export function describeOn(backend: TestBackend, name: string, body: () => void): void {
  if (testsBackend(backend)) describe(name, body);
}
