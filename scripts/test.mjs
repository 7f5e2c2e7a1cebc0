#!/usr/bin/env node
// Runs the whole suite with vitest and ends with the plain line CI reads: "N passed, N failed".
// Vitest's own summary is for people; the count here comes from its JSON report, and a test file
// that failed to load counts as a failure so that a broken import can never read as green.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';

const reportPath = '.test-results/vitest.json';
mkdirSync('.test-results', { recursive: true });
rmSync(reportPath, { force: true });

const result = spawnSync(
  'npx',
  ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${reportPath}`, ...process.argv.slice(2)],
  { stdio: 'inherit', env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' } },
);

let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync(reportPath)) {
  const report = JSON.parse(readFileSync(reportPath, 'utf8'));
  passed = report.numPassedTests ?? 0;
  failed = (report.numFailedTests ?? 0) + countBrokenFiles(report);
  skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
} else {
  failed = 1;
  console.error('vitest wrote no JSON report; counting the run as failed');
}

function countBrokenFiles(report) {
  return (report.testResults ?? []).filter(
    (file) => file.status === 'failed' && (file.assertionResults ?? []).length === 0,
  ).length;
}

console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || result.status !== 0 ? 1 : 0);
