import { cpus, platform, arch } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import type { BenchContext, BenchRow } from './bench-types.js';
import { SECTIONS } from './sections.js';

// `npm run bench`: a benchmark, never part of `npm test`. Figures go to stdout (a table, or one
// JSON document with --json); progress goes to stderr.

const USAGE = 'usage: npm run bench -- [--json] [--quick] [--seconds <per loop, default 5; 1 with --quick>] [--only <section>]';

async function bench(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        json: { type: 'boolean', default: false },
        quick: { type: 'boolean', default: false },
        seconds: { type: 'string' },
        only: { type: 'string' },
      },
    }));
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  // --quick: a brief look (one second a loop, sections' longer variants left out), e.g. with --only.
  const seconds = Number(values.seconds ?? (values.quick ? '1' : '5'));
  if (!Number.isFinite(seconds) || seconds <= 0) {
    process.stderr.write(`error: --seconds must be a number greater than 0, got ${JSON.stringify(values.seconds)}\n${USAGE}\n`);
    return 2;
  }
  const sections = values.only === undefined ? SECTIONS : SECTIONS.filter((section) => section.name === values.only);
  if (sections.length === 0) {
    process.stderr.write(`error: --only must name a section: ${SECTIONS.map((s) => s.name).join(', ')}\n`);
    return 2;
  }

  const repoRoot = fileURLToPath(new URL('../', import.meta.url));
  const context: BenchContext = {
    loopMs: seconds * 1000,
    quick: values.quick,
    repoRoot,
    conversationTrace: join(repoRoot, 'data', 'azure-llm-2023', 'conv.csv'),
    log: (line) => process.stderr.write(`bench: ${line}\n`),
  };
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${platform()} ${arch()}`,
  };
  const rows: BenchRow[] = [];
  for (const section of sections) rows.push(...(await section.run(context)));

  if (values.json) {
    process.stdout.write(`${JSON.stringify({ machine, loopSeconds: seconds, rows }, null, 2)}\n`);
  } else {
    process.stdout.write(`quotaplane bench on ${machine.cpus} CPU(s) (${machine.cpuModel}), Node ${machine.node}, ${machine.platform}\n\n`);
    process.stdout.write(renderTable(rows));
  }
  return 0;
}

function renderTable(rows: readonly BenchRow[]): string {
  // Latency and per-decision columns only when some section measured them, so the other tables stay as they were.
  const latency = rows.some((row) => row.latency !== undefined);
  const costs = rows.some((row) => row.perDecision !== undefined);
  const header = [
    'section', 'measurement', 'operations', 'seconds', 'per second', 'µs each', 'commits each',
    ...(latency ? ['latency of', 'p50 ms', 'p99 ms'] : []),
    ...(costs ? ['server CPU µs/decision', 'WAL bytes/decision', 'statements/decision', 'Node CPU µs/decision'] : []),
    'note',
  ];
  const body = rows.map((row) => [
    row.section,
    row.name,
    String(row.operations),
    row.seconds.toFixed(2),
    String(row.perSecond),
    row.operations > 0 ? ((row.seconds * 1e6) / row.operations).toFixed(0) : '',
    row.commitsPerOperation === null ? '' : String(row.commitsPerOperation),
    ...(latency ? [row.latency?.of ?? '', row.latency?.p50Ms.toFixed(2) ?? '', row.latency?.p99Ms.toFixed(2) ?? ''] : []),
    ...(costs ? costCells(row) : []),
    row.note ?? '',
  ]);
  const widths = header.map((_, column) => Math.max(...[header, ...body].map((row) => (row[column] ?? '').length)));
  const first = latency ? 10 : 7;
  const numeric = new Set([2, 3, 4, 5, 6, ...(latency ? [8, 9] : []), ...(costs ? [first, first + 1, first + 2, first + 3] : [])]);
  const render = (row: readonly string[]): string =>
    row
      .map((cell, column) => (numeric.has(column) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[render(header), ...body.map(render)].join('\n')}\n`;
}

/** Per-decision cells; statements as `top-level (with nested)` when nested ones were counted. */
function costCells(row: BenchRow): string[] {
  const cost = row.perDecision;
  const fixed = (value: number | null | undefined, digits: number): string => (value === null || value === undefined ? '' : value.toFixed(digits));
  const statements = cost?.allStatements === null || cost?.allStatements === undefined
    ? fixed(cost?.statements, 2)
    : `${fixed(cost.statements, 2)} (${fixed(cost.allStatements, 1)})`;
  return [fixed(cost?.serverCpuUs, 0), fixed(cost?.walBytes, 0), statements, fixed(cost?.nodeCpuUs, 0)];
}

process.exitCode = await bench();
