import { cpus, platform, arch } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import type { BenchContext, BenchRow } from './bench-types.js';
import { SECTIONS } from './sections.js';

// `npm run bench`: a benchmark, never part of `npm test`. Figures go to stdout (a table, or one
// JSON document with --json); progress goes to stderr.

const USAGE = 'usage: npm run bench -- [--json] [--seconds <per loop, default 5>] [--only <section>]';

async function bench(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: { json: { type: 'boolean', default: false }, seconds: { type: 'string', default: '5' }, only: { type: 'string' } },
    }));
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const seconds = Number(values.seconds);
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
  // Latency columns only when some section measured latency, so the other tables stay as they were.
  const latency = rows.some((row) => row.latency !== undefined);
  const header = [
    'section', 'measurement', 'operations', 'seconds', 'per second', 'µs each', 'commits each',
    ...(latency ? ['latency of', 'p50 ms', 'p99 ms'] : []),
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
    row.note ?? '',
  ]);
  const widths = header.map((_, column) => Math.max(...[header, ...body].map((row) => (row[column] ?? '').length)));
  const numeric = new Set([2, 3, 4, 5, 6, ...(latency ? [8, 9] : [])]);
  const render = (row: readonly string[]): string =>
    row
      .map((cell, column) => (numeric.has(column) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[render(header), ...body.map(render)].join('\n')}\n`;
}

process.exitCode = await bench();
