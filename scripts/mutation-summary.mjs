// Prints the mutation score of each area from Stryker's JSON report and exits 1 when an area is
// under its target (docs/testing.md, "Mutation testing"). Run by `npm run mutate` after Stryker.
//
// Score = (killed + timeout) / (killed + timeout + survived + no coverage); mutants Stryker could
// not compile or run (CompileError, RuntimeError, Ignored) are left out, as Stryker does.
// Usage: node scripts/mutation-summary.mjs [path/to/mutation.json]
import { readFileSync } from 'node:fs';

const reportPath = process.argv[2] ?? 'reports/mutation/mutation.json';

/** Areas in print order: a file belongs to the first whose prefix it starts with. */
const AREAS = [
  { name: 'core', prefix: 'src/core/', targetPercent: 95 },
  { name: 'plane', prefix: 'src/plane/', targetPercent: 90 },
  { name: 'store decisions', prefix: '', targetPercent: 95 },
];

let report;
try {
  report = JSON.parse(readFileSync(reportPath, 'utf8'));
} catch (error) {
  console.error(`mutation-summary: cannot read ${reportPath} (${error.message}); run \`npm run mutate\` first.`);
  process.exit(2);
}

const counts = new Map(AREAS.map((area) => [area.name, { killed: 0, timeout: 0, survived: 0, noCoverage: 0 }]));
for (const [file, { mutants }] of Object.entries(report.files)) {
  const path = file.replaceAll('\\', '/');
  const area = AREAS.find((candidate) => path.startsWith(candidate.prefix));
  const tally = counts.get(area.name);
  for (const { status } of mutants) {
    if (status === 'Killed') tally.killed += 1;
    else if (status === 'Timeout') tally.timeout += 1;
    else if (status === 'Survived') tally.survived += 1;
    else if (status === 'NoCoverage') tally.noCoverage += 1;
  }
}

const under = [];
for (const { name, targetPercent } of AREAS) {
  const { killed, timeout, survived, noCoverage } = counts.get(name);
  const total = killed + timeout + survived + noCoverage;
  if (total === 0) {
    console.log(`${name}: no mutants in this report`);
    continue;
  }
  const percent = ((killed + timeout) / total) * 100;
  // Compare the exact ratio, not the rounded figure, so 94.96 % does not pass as 95.0 %.
  const met = (killed + timeout) * 100 >= targetPercent * total;
  if (!met) under.push(`${name} (${percent.toFixed(1)} %, target ${targetPercent} %)`);
  console.log(
    `${name}: ${percent.toFixed(1)} % of ${total} (killed ${killed}, timeout ${timeout}, survived ${survived}, no coverage ${noCoverage})`,
  );
}
if (under.length > 0) {
  console.error(`under target: ${under.join(', ')}`);
  process.exit(1);
}
