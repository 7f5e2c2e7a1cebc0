import { basename } from 'node:path';

import type { RefusalCounts, ReplayReport, WaitFigures } from './replay-types.js';

const REFUSAL_CODES: readonly (keyof RefusalCounts)[] = ['TooManyRuns', 'SpentOut', 'Unbounded', 'Halted'];

/** Renders a replay report as the plain-text table `replay` prints without `--json`. */
export function renderReplayTable(report: ReplayReport): string {
  const { options, totals, timing, invariants } = report;
  const lines: string[] = [];
  lines.push(
    `replay of ${basename(report.trace)}: ${totals.rows} rows over ${options.tenants} tenant(s) ` +
      `(Zipf exponent ${options.zipfExponent}, seed ${options.seed})`,
  );
  lines.push(
    `quota of every tenant: ${ceiling(options.maxConcurrent, 'concurrent runs')}, ` +
      `${ceiling(options.tokensPerPeriod, 'tokens')} and ${ceiling(options.minorUnitsPerPeriod, 'minor units')} ` +
      `per ${options.period === 'daily' ? 'UTC day' : 'UTC month'}`,
  );
  if (options.planeMaxConcurrent !== undefined) {
    lines.push(`plane-wide ceiling: ${options.planeMaxConcurrent} concurrent runs across every tenant`);
  }
  const where = report.store.temporary ? (report.store.kept ? 'temporary, kept' : 'temporary, removed') : 'given';
  lines.push(`store: ${report.store.url} (${where})`);
  lines.push('');

  const header = ['tenant', 'admitted', ...REFUSAL_CODES, 'settled tokens', 'settled minor units', 'peak running'];
  const rows = report.tenants.map((tenant) => [
    tenant.tenant,
    String(tenant.admitted),
    ...REFUSAL_CODES.map((code) => String(tenant.refused[code])),
    String(tenant.settled.tokens),
    String(tenant.settled.minorUnits),
    String(tenant.peakRunning),
  ]);
  const total = [
    'total',
    String(totals.admitted),
    ...REFUSAL_CODES.map((code) => String(totals.refused[code])),
    String(totals.settled.tokens),
    String(totals.settled.minorUnits),
    '',
  ];
  lines.push(...table(header, rows, total));
  lines.push('');
  if (totals.wait !== undefined) {
    lines.push(`waiting admissions (each may wait ${options.waitMs ?? 0} virtual ms for a slot):`);
    const waitHeader = ['tenant', 'waited', 'granted', 'timed out', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'];
    const waitRow = (name: string, wait: WaitFigures): string[] => [
      name,
      String(wait.waited),
      String(wait.granted),
      String(wait.timedOut),
      ...[wait.p50Ms, wait.p90Ms, wait.p99Ms, wait.maxMs].map((ms) => (ms === null ? '-' : String(ms))),
    ];
    const waitRows = report.tenants.flatMap((tenant) => (tenant.wait === undefined ? [] : [waitRow(tenant.tenant, tenant.wait)]));
    lines.push(...table(waitHeader, waitRows, waitRow('total', totals.wait)));
    lines.push('');
  }
  lines.push(
    `wall time ${(timing.wallMs / 1000).toFixed(1)} s, ${timing.requestsPerSecond} requests/s ` +
      `(then ${(timing.verifyMs / 1000).toFixed(1)} s measuring the invariants from the store)`,
  );
  lines.push('');
  lines.push('invariants (measured from the store):');
  const width = Math.max(...Object.keys(invariants).map((name) => name.length));
  for (const [name, holds] of Object.entries(invariants)) lines.push(`  ${name.padEnd(width)}  ${String(holds)}`);
  lines.push(report.ok ? 'every invariant holds' : 'an invariant is FALSE: the books are not exact');
  if (!invariants.slotsHeldWhileRunning) {
    lines.push(
      'slotsHeldWhileRunning is false: something freed a slot before the replay settled its run. Most likely a sweeper: ' +
        "a server's sweeper judges the replay's past leases by the wall clock. Every server on this store must run with " +
        '--sweep-interval-ms 0 (QUOTAPLANE_SWEEP_INTERVAL_MS=0) while a replay goes through it.',
    );
  }
  return `${lines.join('\n')}\n`;
}

function ceiling(value: number | null, unit: string): string {
  return value === null ? `unlimited ${unit}` : `${value} ${unit}`;
}

/** Left-aligns the first column and right-aligns the numbers, with a rule above the total line. */
function table(header: readonly string[], rows: readonly string[][], total: readonly string[]): string[] {
  const all = [header, ...rows, total];
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? '').length)));
  const render = (row: readonly string[]): string =>
    row
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [render(header), ...rows.map(render), rule, render(total)];
}
