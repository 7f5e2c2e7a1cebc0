import { existsSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { ReplayProgress } from '../../src/cli/replay/replay-progress.js';
import { runReplay } from '../../src/cli/replay/replay-run.js';
import type { ReplayOptions, ReplayReport } from '../../src/cli/replay/replay-types.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';
import { CapturedStream, HEADER, runCli, temporaryDirectory, writeTrace } from './cli-helpers.js';

let dir: { path: string; remove: () => void };
beforeEach(() => {
  dir = temporaryDirectory();
});
afterEach(() => dir.remove());

/**
 * Five rows for one tenant with one slot and 5000 tokens a day. A (ctx 100, gen 10) runs 0–450 ms;
 * B at 100 ms finds A's slot taken; C at 450 ms comes after A settles (A ends at C's instant);
 * D at 1000 ms needs a hold of 2 × (2000 + 1024) = 6048 > 5000 − 160 settled; E at the same
 * instant holds 2 × (0 + 1024) = 2048, which fits.
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

async function replayJson(args: readonly string[]): Promise<{ status: number; report: ReplayReport; stderr: string }> {
  const { status, stdout, stderr } = await runCli(['replay', ...args, '--json']);
  expect(stderr).toBe('');
  return { status, report: JSON.parse(stdout) as ReplayReport, stderr };
}

describe('quotaplane replay', () => {
  it('replays a small trace exactly: refusals by code, settled spend, peak running, all invariants', async () => {
    const { status, report } = await replayJson([smallTrace(), ...SMALL_FLAGS]);
    expect(status).toBe(0);
    expect(report.totals).toEqual({
      rows: 5,
      admitted: 3,
      refused: { TooManyRuns: 1, SpentOut: 1, Unbounded: 0, Halted: 0 },
      settled: { tokens: 110 + 50 + 5, minorUnits: 100 * 3 + 10 * 15 + 50 * 3 + 5 * 15 },
    });
    expect(report.tenants).toEqual([
      {
        tenant: 'tenant-1',
        admitted: 3,
        refused: { TooManyRuns: 1, SpentOut: 1, Unbounded: 0, Halted: 0 },
        settled: { tokens: 165, minorUnits: 675 },
        peakRunning: 1,
      },
    ]);
    expect(report.invariants).toEqual({
      settledWithinCeiling: true,
      runningWithinCeiling: true,
      slotsHeldWhileRunning: true,
      settledExactlyOnce: true,
      holdsReleased: true,
      slotsReleased: true,
    });
    expect(report.ok).toBe(true);
    expect(report.store.temporary).toBe(true);
  });

  it('prints the report as a table without --json', async () => {
    const { status, stdout } = await runCli(['replay', smallTrace(), ...SMALL_FLAGS]);
    expect(status).toBe(0);
    expect(stdout).toMatch(/^tenant-1 +3 +1 +1 +0 +0 +165 +675 +1$/m);
    expect(stdout).toMatch(/settledExactlyOnce +true/);
    expect(stdout).toMatch(/every invariant holds/);
  });

  it('declares minor units under a minor-unit ceiling, and a ceiling of 0 admits nothing', async () => {
    const { status, report } = await replayJson([smallTrace(), '--tenants', '1', '--minor-units-per-period', '0']);
    expect(status).toBe(0);
    expect(report.totals.admitted).toBe(0);
    expect(report.totals.refused).toEqual({ TooManyRuns: 0, SpentOut: 5, Unbounded: 0, Halted: 0 });
    expect(report.ok).toBe(true);
  });

  it('exits 2 for a malformed trace, naming the line and column', async () => {
    const path = writeTrace(dir.path, 'bad.csv', [HEADER, '2023-11-16 18:00:00.0,1,2', '2023-11-16 18:00:01.0,3,x']);
    const { status, stdout, stderr } = await runCli(['replay', path, '--json']);
    expect(status).toBe(2);
    expect(stdout).toBe('');
    // --json: the failure is JSON on stderr too.
    expect(JSON.parse(stderr)).toEqual({
      error: { code: 'USAGE', exitStatus: 2, message: 'bad.csv line 3, column 3 (GeneratedTokens): expected a non-negative integer, got "x"' },
    });
  });

  it('refuses a bad header before writing anything to a given store', async () => {
    const url = `sqlite:${join(dir.path, 'untouched.db')}`;
    const path = writeTrace(dir.path, 'header.csv', ['time,in,out', '2023-11-16 18:00:00.0,1,2']);
    const { status, stderr } = await runCli(['replay', path, '--store', url, '--tenants', '3']);
    expect(status).toBe(2);
    expect(stderr.trim()).toMatch(/^error: header\.csv line 1: the header must be TIMESTAMP,ContextTokens,GeneratedTokens/);
    const store = await openStore(url);
    try {
      expect(await store.tenants()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('exits 2 for --tenants above 100 000, naming the flag and the range, before reading the trace', async () => {
    const { status, stdout, stderr } = await runCli(['replay', smallTrace(), '--tenants', '100000000']);
    expect(status).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/--tenants <count>.*'100000000' is invalid\. Use a whole number from 1 to 100000\./);
  });

  it('exits 2 for a store URL it cannot read, naming --store', async () => {
    const { status, stderr } = await runCli(['replay', smallTrace(), '--store', 'mysql://db/quota']);
    expect(status).toBe(2);
    expect(stderr.trim()).toMatch(/^error: --store must name a store as 'sqlite:<path>', .*; got "mysql:\/\/db\/quota"$/);
  });

  it('exits 3 (configuration) when the store cannot be created where named, and says why', async () => {
    const { status, stdout, stderr } = await runCli(['replay', smallTrace(), '--store', `sqlite:${join(dir.path, 'no', 'such', 'dir.db')}`]);
    expect(status).toBe(3);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^error: configuration: cannot create .*its directory .* does not exist/);
  });

  it('isolates its tenants by a unique prefix in a given store, so a second replay is not skewed', async () => {
    const url = `sqlite:${join(dir.path, 'shared.db')}`;
    const first = await replayJson([smallTrace(), ...SMALL_FLAGS, '--store', url]);
    const second = await replayJson([smallTrace(), ...SMALL_FLAGS, '--store', url]);
    for (const { status, report } of [first, second]) {
      expect(status).toBe(0);
      expect(report.ok).toBe(true);
      expect(report.totals.admitted).toBe(3);
      expect(report.options.tenantPrefix).toMatch(/^replay-[0-9A-Z]{26}-$/);
      expect(report.tenants[0]?.tenant).toBe(`${report.options.tenantPrefix}tenant-1`);
    }
    expect(first.report.options.tenantPrefix).not.toBe(second.report.options.tenantPrefix);
    const store = await openStore(url);
    try {
      expect(await store.tenants()).toHaveLength(2);
    } finally {
      await store.close();
    }
  });

  it('keeps the temporary store with --keep-store', async () => {
    const { status, report } = await replayJson([smallTrace(), ...SMALL_FLAGS, '--keep-store']);
    expect(status).toBe(0);
    expect(report.store.kept).toBe(true);
    const path = report.store.url.slice('sqlite:'.length);
    try {
      expect(existsSync(path)).toBe(true);
      expect(basename(dirname(path))).toMatch(/^quotaplane-replay-/);
    } finally {
      rmSync(dirname(path), { recursive: true, force: true });
    }
  });

  // Stores that misreport one figure: the replay must read the store, not its own counters, so
  // exactly the invariants that rest on that figure come out false.
  it.each([
    ['running', ['runningWithinCeiling', 'slotsHeldWhileRunning', 'slotsReleased']],
    ['spent', ['settledWithinCeiling', 'settledExactlyOnce']],
    ['reserved', ['holdsReleased']],
  ] as const)('finds an invariant false when the store over-reports %s', async (figure, falseOnes) => {
    const real = await openStore(`sqlite:${join(dir.path, 'faulty.db')}`);
    try {
      const report = await runReplay(
        smallOptions(smallTrace()),
        { store: overReport(real, figure), url: 'faulty', temporary: false, kept: true, tenantPrefix: '' },
        null,
      );
      const expected = Object.fromEntries(Object.keys(report.invariants).map((name) => [name, !(falseOnes as readonly string[]).includes(name)]));
      expect(report.invariants).toEqual(expected);
      expect(report.ok).toBe(false);
    } finally {
      await real.close();
    }
  });

  // What a server's sweeper does to a past trace: a slot freed before its run settles. The store
  // then holds fewer slots than the replay's unsettled runs, and only this invariant can see it.
  it('finds slotsHeldWhileRunning false, and only it, when the store under-reports running', async () => {
    const real = await openStore(`sqlite:${join(dir.path, 'swept.db')}`);
    try {
      const report = await runReplay(
        smallOptions(smallTrace()),
        { store: underReportRunning(real), url: 'swept', temporary: false, kept: true, tenantPrefix: '' },
        null,
      );
      const expected = Object.fromEntries(Object.keys(report.invariants).map((name) => [name, name !== 'slotsHeldWhileRunning']));
      expect(report.invariants).toEqual(expected);
      expect(report.ok).toBe(false);
    } finally {
      await real.close();
    }
  });

  it('draws a progress bar on a terminal stderr and keeps stdout to the report', async () => {
    const store = await openStore(`sqlite:${join(dir.path, 'progress.db')}`);
    const stderr = new CapturedStream(true);
    try {
      const report = await runReplay(
        smallOptions(smallTrace()),
        { store, url: 'progress', temporary: false, kept: true, tenantPrefix: '' },
        new ReplayProgress(stderr, 0),
      );
      expect(report.ok).toBe(true);
      expect(stderr.text).toMatch(/replay \|/);
    } finally {
      await store.close();
    }
  });
});

function smallOptions(tracePath: string): ReplayOptions {
  return {
    tracePath,
    tenants: 1,
    seed: 1,
    zipfExponent: 1,
    maxConcurrent: 1,
    tokensPerPeriod: 5000,
    period: 'daily',
    priceIn: 3,
    priceOut: 15,
    maxOutputTokens: 1024,
    keepStore: false,
  };
}

/**
 * Wraps a store so that one read answers more than the truth: one more slot, one more reserved
 * token, or 5000 more settled tokens (which also takes the small trace's period past its ceiling).
 */
// Reports one slot fewer than held (never below 0), as if a sweeper had released a run early.
function underReportRunning(store: QuotaStore): QuotaStore {
  return {
    backend: store.backend,
    tenants: () => store.tenants(),
    close: () => store.close(),
    tenant(tenant: string): TenantStore {
      const handle = store.tenant(tenant);
      return new Proxy(handle, {
        get(target, property) {
          if (property === 'running') return async () => Math.max((await target.running()) - 1, 0);
          const value = Reflect.get(target, property, target) as unknown;
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
    },
  };
}

function overReport(store: QuotaStore, figure: 'running' | 'spent' | 'reserved'): QuotaStore {
  return {
    backend: store.backend,
    tenants: () => store.tenants(),
    close: () => store.close(),
    tenant(tenant: string): TenantStore {
      const handle = store.tenant(tenant);
      return new Proxy(handle, {
        get(target, property) {
          if (property === figure && figure === 'running') return async () => (await target.running()) + 1;
          if (property === figure && figure !== 'running') {
            return async (period: string) => {
              const real = await target[figure](period);
              return { ...real, tokens: real.tokens + (figure === 'spent' ? 5000 : 1) };
            };
          }
          const value = Reflect.get(target, property, target) as unknown;
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
    },
  };
}
