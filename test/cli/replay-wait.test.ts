import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { ReplayReport } from '../../src/cli/replay/replay-types.js';
import { HEADER, runCli, temporaryDirectory, writeTrace } from './cli-helpers.js';

// `replay --wait MS` replays waiting admissions in the trace's virtual time.

let dir: { path: string; remove: () => void };
beforeEach(() => {
  dir = temporaryDirectory();
});
afterEach(() => dir.remove());

/**
 * The small trace of replay.test.ts: one tenant, one slot, 5000 tokens a day. A (ctx 100, gen 10)
 * runs 0–450 ms; B (7, 7; 390 ms) arrives at 100; C (50, 0; 250 ms) at 450; D (2000, 100) and
 * E (0, 5; 350 ms) at 1000. D's hold (6048) never fits the day.
 */
function smallTrace(): string {
  return writeTrace(dir.path, 'small.csv', [
    HEADER,
    '2023-11-16 18:00:00.0000000,100,10',
    '2023-11-16 18:00:00.1000000,7,7',
    '2023-11-16 18:00:00.4500000,50,0',
    '2023-11-16 18:00:01.0000000,2000,100',
    '2023-11-16 18:00:01.0000000,0,5',
  ]);
}

const SMALL_FLAGS = ['--tenants', '1', '--max-concurrent', '1', '--tokens-per-period', '5000', '--period', 'daily'];

async function replayJson(args: readonly string[]): Promise<{ status: number; report: ReplayReport }> {
  const { status, stdout, stderr } = await runCli(['replay', ...args, '--json']);
  expect(stderr).toBe('');
  return { status, report: JSON.parse(stdout) as ReplayReport };
}

describe('quotaplane replay --wait', () => {
  it('W40: waiting requests start when granted and keep their duration; SpentOut never waits', async () => {
    // B waits 100 → 450 (A's end), C 450 → 840 (B's end), E 1000 → 1090 (C's end); D is SpentOut at once.
    const { status, report } = await replayJson([smallTrace(), ...SMALL_FLAGS, '--wait', '1000']);
    expect(status).toBe(0);
    expect(report.tenants).toEqual([
      {
        tenant: 'tenant-1',
        admitted: 4,
        refused: { TooManyRuns: 0, SpentOut: 1, Unbounded: 0, Halted: 0 },
        settled: { tokens: 110 + 14 + 50 + 5, minorUnits: 450 + 126 + 150 + 75 },
        peakRunning: 1,
        wait: { waited: 3, granted: 3, timedOut: 0, p50Ms: 350, p90Ms: 390, p99Ms: 390, maxMs: 390 },
      },
    ]);
    expect(report.options.waitMs).toBe(1000);
    expect(report.ok).toBe(true);
    expect(Object.values(report.invariants).every(Boolean)).toBe(true);
  });

  it('W41: a wait too short to be granted times out as the TooManyRuns refusal it would have had', async () => {
    const { report } = await replayJson([smallTrace(), ...SMALL_FLAGS, '--wait', '100']);
    expect(report.totals).toMatchObject({
      admitted: 3,
      refused: { TooManyRuns: 1, SpentOut: 1, Unbounded: 0, Halted: 0 },
      wait: { waited: 1, granted: 0, timedOut: 1, p50Ms: null, p90Ms: null, p99Ms: null, maxMs: null },
    });
    expect(report.ok).toBe(true);
  });

  it('prints the waits as a table, and refuses --wait through a server', async () => {
    const { status, stdout } = await runCli(['replay', smallTrace(), ...SMALL_FLAGS, '--wait', '1000']);
    expect(status).toBe(0);
    expect(stdout).toMatch(/^tenant-1 +3 +3 +0 +350 +390 +390 +390$/m);
    const remote = await runCli(['replay', smallTrace(), '--wait', '10', '--url', 'http://127.0.0.1:1', '--key', 'k']);
    expect(remote.status).toBe(2);
    expect(remote.stderr).toContain('--wait');
  });

  it('refuses a --wait longer than a waiter can be leased (24 hours less 1 ms), naming --wait', async () => {
    // A waiter's place is leased for the wait and 1 ms more, and no lease is longer than 24 hours.
    const store = `sqlite:${dir.path}/too-long.db`;
    const { status, stdout, stderr } = await runCli(['replay', smallTrace(), ...SMALL_FLAGS, '--store', store, '--wait', '86400000', '--json']);
    expect(status).toBe(2);
    expect(JSON.parse(stdout || stderr)).toMatchObject({ error: { code: 'USAGE', message: expect.stringContaining("'--wait <ms>'") } });
    const longest = await replayJson([smallTrace(), ...SMALL_FLAGS, '--wait', '86399999']);
    expect(longest.report.ok).toBe(true);
  });
});

describe('quotaplane replay --plane-max-concurrent', () => {
  // Six rows at one instant, 250 ms each, spread over three tenants without tenant ceilings.
  function burst(): string {
    return writeTrace(dir.path, 'burst.csv', [HEADER, ...Array.from({ length: 6 }, () => '2023-11-16 18:00:00.0000000,10,0')]);
  }

  it('W42: the plane-wide ceiling applies: without --wait the rows beyond it are refused, with --wait they start in turn', async () => {
    const refused = await replayJson([burst(), '--tenants', '3', '--plane-max-concurrent', '2']);
    expect(refused.report.options.planeMaxConcurrent).toBe(2);
    expect(refused.report.totals).toMatchObject({ admitted: 2, refused: { TooManyRuns: 4, SpentOut: 0, Unbounded: 0, Halted: 0 } });
    expect(refused.report.ok).toBe(true);
    const waited = await replayJson([burst(), '--tenants', '3', '--plane-max-concurrent', '2', '--wait', '10000']);
    expect(waited.report.totals).toMatchObject({
      admitted: 6,
      refused: { TooManyRuns: 0, SpentOut: 0, Unbounded: 0, Halted: 0 },
      wait: { waited: 4, granted: 4, timedOut: 0, p50Ms: 250, maxMs: 500 },
    });
    expect(waited.report.ok).toBe(true);
  });
});
