import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import type { ReplayReport } from '../../src/cli/replay/replay-types.js';
import { AZURE_TRACE_DIR, REPO_ROOT, runCli } from './cli-helpers.js';

// The real Azure LLM inference trace 2023, kept in data/azure-llm-2023/, replayed through the plane
// on a durable SQLite file. The figures of that run are pinned: the replay sends its calls without
// awaiting each one, so group commit batches them, and must still decide exactly as a sequential
// run does.
const PINNED: Record<string, { admitted: number; TooManyRuns: number; SpentOut: number; tokens: number; minorUnits: number }> = {
  'conv.csv': { admitted: 13_580, TooManyRuns: 2_475, SpentOut: 3_311, tokens: 18_657_043, minorUnits: 89_917_377 },
  'code.csv': { admitted: 7_018, TooManyRuns: 390, SpentOut: 1_411, tokens: 14_377_309, minorUnits: 45_493_275 },
};

const FLAGS = ['--tenants', '20', '--max-concurrent', '4', '--tokens-per-period', '2000000', '--period', 'daily', '--json'];

describe('replay of the Azure LLM inference trace 2023', () => {
  // conv.csv is replayed with no file argument: that is the bundled trace, so the same figures
  // prove `quotaplane replay` finds data/azure-llm-2023/conv.csv by itself.
  it.each([
    ['conv.csv', 19_366, []],
    ['code.csv', 8_819, [join(AZURE_TRACE_DIR, 'code.csv')]],
  ])('%s: exits 0, every invariant true, refusals of more than one code, admitted + refused = %i rows', async (file, rows, traceArgument) => {
    const { status, stdout, stderr } = await runCli(['replay', ...traceArgument, ...FLAGS]);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    const report = JSON.parse(stdout) as ReplayReport;
    expect(report.trace).toBe(join(AZURE_TRACE_DIR, file));
    expect(report.invariants).toEqual({
      settledWithinCeiling: true,
      runningWithinCeiling: true,
      slotsHeldWhileRunning: true,
      settledExactlyOnce: true,
      holdsReleased: true,
      slotsReleased: true,
    });
    expect(report.ok).toBe(true);
    const refused = Object.values(report.totals.refused).reduce((sum, n) => sum + n, 0);
    expect(report.totals.rows).toBe(rows);
    expect(report.totals.admitted + refused).toBe(rows);
    expect(Object.values(report.totals.refused).filter((n) => n > 0).length).toBeGreaterThan(1);
    const pinned = PINNED[file];
    expect(report.totals).toEqual({
      rows,
      admitted: pinned?.admitted,
      refused: { TooManyRuns: pinned?.TooManyRuns, SpentOut: pinned?.SpentOut, Unbounded: 0, Halted: 0 },
      settled: { tokens: pinned?.tokens, minorUnits: pinned?.minorUnits },
    });
    expect(report.tenants).toHaveLength(20);
    for (const tenant of report.tenants) {
      expect(tenant.peakRunning).toBeLessThanOrEqual(4);
      expect(tenant.settled.tokens).toBeLessThanOrEqual(2_000_000);
    }
  }, 300_000);
});

describe('the bundled trace', () => {
  it('the built CLI (what the bin runs) resolves it to data/azure-llm-2023/conv.csv of the package', async () => {
    const built = (await import(join(REPO_ROOT, 'dist', 'cli', 'replay', 'bundled-trace.js'))) as { BUNDLED_TRACE_PATH: string };
    expect(built.BUNDLED_TRACE_PATH).toBe(join(AZURE_TRACE_DIR, 'conv.csv'));
    expect(existsSync(built.BUNDLED_TRACE_PATH)).toBe(true);
  });
});
