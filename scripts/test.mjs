#!/usr/bin/env node
// Runs the whole suite with vitest and ends with the plain line CI reads: "N passed, N failed".
// Vitest's own summary is for people; the count here comes from its JSON report, and a test file
// that failed to load, a test that did not run, or a run with no test at all counts as a failure,
// so that a broken import or a failed global setup can never read as green.
//
// `--fast` (npm run test:fast) runs the pure tests, the plane and the SQLite store in process
// (the `unit` and `mocks` projects) on SQLite only, without building: none of them reads dist/.
// Any other argument goes to vitest (`npm test -- --project postgres`).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';

const fast = process.argv.includes('--fast');
const vitestArgs = process.argv.slice(2).filter((arg) => arg !== '--fast');
const env = { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' };
if (fast) {
  vitestArgs.unshift('--project', 'unit', '--project', 'mocks');
  env.QUOTAPLANE_TEST_BACKENDS = 'sqlite';
} else {
  // The CLI smoke tests run the built bin, so build first: a stale dist/ must never be what passes.
  // Incrementally: tsc compiles again only what changed since its record of the last build. It
  // trusts that record, not dist/, so when a source has no output in dist/ the record is dropped
  // and everything is built.
  const buildInfo = '.test-results/build.tsbuildinfo';
  if (!everySourceBuilt()) rmSync(buildInfo, { force: true });
  const build = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json', '--incremental', '--tsBuildInfoFile', buildInfo], { stdio: 'inherit' });
  if (build.status !== 0) {
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
  // The dashboard's browser tests drive the built assets (dist/web), so build those too.
  const webBuild = spawnSync('node', ['scripts/build-web.mjs'], { stdio: 'inherit' });
  if (webBuild.status !== 0) {
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
}

const reportPath = '.test-results/vitest.json';
mkdirSync('.test-results', { recursive: true });
rmSync(reportPath, { force: true });
// The entries the process tests compiled in earlier runs (test/compiled-entry.ts).
rmSync('.test-results/entries', { recursive: true, force: true });

const result = spawnSync(
  'npx',
  ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${reportPath}`, ...vitestArgs],
  { stdio: 'inherit', env },
);

let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync(reportPath)) {
  const report = JSON.parse(readFileSync(reportPath, 'utf8'));
  passed = report.numPassedTests ?? 0;
  failed = (report.numFailedTests ?? 0) + countBrokenFiles(report);
  skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  // Nothing in this project is skipped on purpose, so a skipped test means a hook failed before it
  // (vitest reports the tests of a file whose beforeAll threw as skipped): count those as failed.
  if (skipped > 0) {
    failed += skipped;
    console.error(`${skipped} test(s) did not run (a failing hook or a skip); counting them as failed`);
  }
  // A global setup that throws leaves vitest's report unsuccessful with no test counted at all.
  if (report.success === false && failed === 0) failed = 1;
  if (passed + failed === 0) {
    failed = 1;
    console.error('vitest ran no test; counting the run as failed');
  }
} else {
  failed = 1;
  console.error('vitest wrote no JSON report; counting the run as failed');
}

// True when every source file of the build (src/**/*.ts but tests) has its .js in dist/.
function everySourceBuilt() {
  return readdirSync('src', { recursive: true })
    .filter((path) => path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.endsWith('.d.ts'))
    .every((path) => existsSync(`dist/${path.replace(/\.ts$/, '.js')}`));
}

function countBrokenFiles(report) {
  return (report.testResults ?? []).filter(
    (file) => file.status === 'failed' && (file.assertionResults ?? []).length === 0,
  ).length;
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || result.status !== 0 ? 1 : 0);
