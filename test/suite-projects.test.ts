import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import { describe, expect, it } from 'vitest';
import { createVitest } from 'vitest/node';

import { selectedTestBackends, TEST_BACKENDS_ENV } from './test-backends.js';

// The suite's layout (test/suite-projects.ts): vitest itself resolves both configurations here,
// so what is checked is what `npm test` and `npm run mutate` run.

const ROOT = join(import.meta.dirname, '..');

/** Every test file of the repository, relative to its root. */
function testFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.test.ts')) found.push(path);
    }
  };
  walk('src');
  walk('test');
  return found.sort();
}

/** Which projects of `configFile` run each file, with whether that project isolates its files. */
async function projectsOf(configFile: string, env: Record<string, string | undefined>): Promise<Map<string, { name: string; isolate: boolean }[]>> {
  const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  const apply = (values: Record<string, string | undefined>): void => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  apply(env);
  const vitest = await createVitest('test', { config: join(ROOT, configFile), root: ROOT, watch: false }, {}, { stdout: process.stdout, stderr: process.stderr });
  try {
    const projects = new Map<string, { name: string; isolate: boolean }[]>();
    for (const spec of await vitest.globTestSpecifications()) {
      const file = relative(ROOT, spec.moduleId);
      projects.set(file, [...(projects.get(file) ?? []), { name: spec.project.name, isolate: spec.project.config.isolate }]);
    }
    return projects;
  } finally {
    await vitest.close();
    apply(saved);
  }
}

// A file that replaces a module: vi.mock, vi.doMock (vi.spyOn only wraps a method and is restored).
const MOCKS_A_MODULE = /\bvi\.(do)?mock\(/;

describe('the projects of npm test (vitest.config.ts)', () => {
  it('run every test file exactly once, with both backends, and a file that mocks a module only isolated', async () => {
    const projects = await projectsOf('vitest.config.ts', { [TEST_BACKENDS_ENV]: undefined });
    const files = testFiles();
    expect(files.filter((file) => (projects.get(file) ?? []).length !== 1)).toEqual([]);
    expect([...projects.keys()].filter((file) => !files.includes(file))).toEqual([]);
    const mocking = files.filter((file) => MOCKS_A_MODULE.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(mocking.length).toBeGreaterThan(0);
    expect(mocking.filter((file) => projects.get(file)?.some((project) => !project.isolate))).toEqual([]);
  }, 120_000);

  it('with QUOTAPLANE_TEST_BACKENDS=sqlite run no file of test/postgres, and with =postgres none of test/sqlite', async () => {
    const sqliteOnly = [...(await projectsOf('vitest.config.ts', { [TEST_BACKENDS_ENV]: 'sqlite' })).keys()];
    expect(sqliteOnly.filter((file) => file.startsWith('test/postgres/'))).toEqual([]);
    expect(sqliteOnly).toContain('test/conformance-sqlite.test.ts');
    const postgresOnly = [...(await projectsOf('vitest.config.ts', { [TEST_BACKENDS_ENV]: 'postgres' })).keys()];
    expect(postgresOnly.filter((file) => file.startsWith('test/sqlite/') || file === 'test/conformance-sqlite.test.ts')).toEqual([]);
    expect(postgresOnly).toContain('test/postgres/conformance-postgres.test.ts');
  }, 120_000);
});

describe('the per-mutant test set of npm run mutate (vitest.mutate.config.ts)', () => {
  it('runs on SQLite only, never a file that starts processes or needs PostgreSQL, and a file that mocks a module only isolated', async () => {
    const projects = await projectsOf('vitest.mutate.config.ts', {});
    const files = [...projects.keys()];
    expect(files.length).toBeGreaterThan(50);
    expect(files.filter((file) => file.startsWith('test/postgres/'))).toEqual([]);
    for (const file of ['test/sqlite/sqlite-races.test.ts', 'test/plane/crash-recovery-kill.test.ts', 'test/plane/prune-race.test.ts']) expect(files).not.toContain(file);
    const mocking = files.filter((file) => MOCKS_A_MODULE.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(mocking.length).toBeGreaterThan(0);
    expect(mocking.filter((file) => projects.get(file)?.some((project) => !project.isolate))).toEqual([]);
    // Each worker of the run gets QUOTAPLANE_TEST_BACKENDS=sqlite, so no test asks for a server.
    const source = readFileSync(join(ROOT, 'vitest.mutate.config.ts'), 'utf8');
    expect(source).toMatch(/env: \{ QUOTAPLANE_TEST_BACKENDS: 'sqlite' \}/);
  }, 120_000);
});

describe('QUOTAPLANE_TEST_BACKENDS', () => {
  it('selects both backends when unset or empty, one or both by name, and refuses a name that is no backend', () => {
    expect([...selectedTestBackends({})]).toEqual(['sqlite', 'postgres']);
    expect([...selectedTestBackends({ [TEST_BACKENDS_ENV]: ' ' })]).toEqual(['sqlite', 'postgres']);
    expect([...selectedTestBackends({ [TEST_BACKENDS_ENV]: 'sqlite' })]).toEqual(['sqlite']);
    expect([...selectedTestBackends({ [TEST_BACKENDS_ENV]: ' Postgres ' })]).toEqual(['postgres']);
    expect([...selectedTestBackends({ [TEST_BACKENDS_ENV]: 'postgres,sqlite' })].sort()).toEqual(['postgres', 'sqlite']);
    expect(() => selectedTestBackends({ [TEST_BACKENDS_ENV]: 'mysql' })).toThrow(/QUOTAPLANE_TEST_BACKENDS=mysql .*mysql.*sqlite, postgres or sqlite,postgres/);
    expect(() => selectedTestBackends({ [TEST_BACKENDS_ENV]: ',' })).toThrow(/QUOTAPLANE_TEST_BACKENDS/);
  });
});
