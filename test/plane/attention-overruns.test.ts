import { afterEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import type { TenantQuota } from '../../src/core/quota.js';
import type { Spend } from '../../src/core/spend.js';
import { overranRuns, overrunPeriods } from '../../src/plane/attention-overruns.js';
import type { TenantStore } from '../../src/store/store.js';
import type { OverranPass } from '../../src/store/types.js';
import { memoryPlane, T0, type MemoryPlane } from './plane-fixtures.js';

// A pass that ran over its hold and a period over its ceiling are in attention.

let fixture: MemoryPlane;
afterEach(async () => {
  await fixture.close();
});

describe('plane.attention reports overruns', () => {
  it('maxTokens 20000 settling 90,000,000: run.overran names the pass, spend.overrun the period and by how much', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 2_000_000 }, { newTenant: true });
    await plane.admit({ tenant: 'acme', run: 'run-big', budget: { maxTokens: 20_000, maxCallTokens: 0 } });
    const settled = await plane.settle({ tenant: 'acme', run: 'run-big', epoch: 1, spend: { tokens: 90_000_000, minorUnits: 0 }, concludes: true });
    expect(settled.overrun).toEqual({ tokens: 89_980_000, minorUnits: 0 });

    const report = await plane.attention({ tenant: 'acme' });
    expect(report.needsAttention).toBe(true);
    const overran = report.conditions.filter((c) => c.kind === 'run.overran');
    expect(overran).toEqual([
      expect.objectContaining({ kind: 'run.overran', tenant: 'acme', run: 'run-big', epoch: 1, sinceMs: T0 }),
    ]);
    expect(overran[0]?.summary).toContain('over its hold by 89980000 tokens');
    const periods = report.conditions.filter((c) => c.kind === 'spend.overrun');
    expect(periods).toHaveLength(1);
    expect(periods[0]?.summary).toContain('period 2026-01');
    expect(periods[0]?.summary).toContain('over its ceiling by 88000000 tokens');
    expect(periods[0]?.summary).toContain('run-big');
  });

  it('nothing over its hold or its ceiling raises neither kind', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 2_000_000 }, { newTenant: true });
    await plane.admit({ tenant: 'acme', run: 'run-ok', budget: { maxTokens: 20_000, maxCallTokens: 0 } });
    await plane.settle({ tenant: 'acme', run: 'run-ok', epoch: 1, spend: { tokens: 20_000, minorUnits: 0 }, concludes: true });
    const report = await plane.attention({ tenant: 'acme' });
    expect(report.conditions.filter((c) => c.kind === 'run.overran' || c.kind === 'spend.overrun')).toEqual([]);
  });
});

// The two overrun kinds on their own, over a handle that answers fixed rows, so every figure and
// filter of the conditions is pinned.
describe('overranRuns and overrunPeriods over fixed store answers', () => {
  const pass = (run: string, period: string | null, settledAtMs = T0): OverranPass => ({
    run,
    epoch: 2,
    period,
    spend: { tokens: 150, minorUnits: 70 },
    hold: { tokens: 100, minorUnits: 50 },
    overrun: { tokens: 50, minorUnits: 20 },
    settledAtMs,
  });
  const remedy = {
    text: 'check the runs that reported more than their per-call bound; raise the ceiling or lower the budgets if the spend was expected',
    cli: ['quotaplane status --tenant acme', 'quotaplane attention --tenant acme'],
    http: ['GET /v1/tenants/acme/usage'],
  };
  function handleWith(answers: { quota: TenantQuota | null; spent?: Spend; passes: OverranPass[] }) {
    const asked: unknown[] = [];
    const handle = {
      overranPasses: async (request: unknown) => {
        asked.push(['overranPasses', request]);
        return answers.passes;
      },
      getQuota: async () => answers.quota,
      spent: async (period: string) => {
        asked.push(['spent', period]);
        return answers.spent ?? { tokens: 0, minorUnits: 0 };
      },
    } as unknown as TenantStore;
    return { handle, asked };
  }

  it('run.overran: each pass with its age, figures and remedy', async () => {
    const { handle, asked } = handleWith({ quota: null, passes: [pass('run-a', '2026-01'), pass('run-b', null, T0 + 9000)] });
    const conditions = await overranRuns('acme', handle, 7, T0 + 5000);
    expect(asked).toEqual([['overranPasses', { limit: 7 }]]);
    expect(conditions).toEqual([
      {
        kind: 'run.overran',
        tenant: 'acme',
        run: 'run-a',
        epoch: 2,
        halt: null,
        sinceMs: T0,
        ageMs: 5000,
        summary: "pass 2 of run 'run-a' (tenant 'acme') settled 150 tokens and 70 minor units in 2026-01, over its hold by 50 tokens and 20 minor units",
        remedy,
      },
      {
        kind: 'run.overran',
        tenant: 'acme',
        run: 'run-b',
        epoch: 2,
        halt: null,
        sinceMs: T0 + 9000,
        ageMs: 0,
        summary: "pass 2 of run 'run-b' (tenant 'acme') settled 150 tokens and 70 minor units in no period, over its hold by 50 tokens and 20 minor units",
        remedy,
      },
    ]);
  });

  it('spend.overrun: the period over a ceiling, by how much in each unit, naming the runs that overran in it once each', async () => {
    const { handle, asked } = handleWith({
      quota: { period: 'monthly', maxTokensPerPeriod: 1000, maxMinorUnitsPerPeriod: 500 },
      spent: { tokens: 1200, minorUnits: 400 },
      passes: [pass('run-a', '2026-01'), pass('run-a', '2026-01-05'), pass('run-b', '2025-12'), pass('run-c', null), pass('run-d', '2026-01-07')],
    });
    const conditions = await overrunPeriods('acme', handle, 3, T0 + 5000);
    expect(asked).toEqual([
      ['spent', '2026-01'],
      ['overranPasses', { limit: 20 }],
    ]);
    expect(conditions).toEqual([
      {
        kind: 'spend.overrun',
        tenant: 'acme',
        run: 'run-a',
        epoch: null,
        halt: null,
        sinceMs: T0 + 5000,
        ageMs: 0,
        summary: "period 2026-01 of tenant 'acme' is over its ceiling by 200 tokens and 0 minor units; runs that overran their hold: run-a, run-d",
        remedy,
      },
    ]);
  });

  it('spend.overrun in minor units alone, with no run to name', async () => {
    const { handle } = handleWith({
      quota: { period: 'daily', maxTokensPerPeriod: 5000, maxMinorUnitsPerPeriod: 500 },
      spent: { tokens: 1200, minorUnits: 501 },
      passes: [pass('run-b', '2026-01-04')],
    });
    const [condition] = await overrunPeriods('acme', handle, 1, T0);
    expect(condition).toMatchObject({ run: '', summary: "period 2026-01-05 of tenant 'acme' is over its ceiling by 0 tokens and 1 minor units" });
  });

  it('nothing when none is wanted, no quota is set, or no ceiling is passed; a unit without a ceiling is never over', async () => {
    const over = { quota: { period: 'monthly' as const, maxTokensPerPeriod: 10 }, spent: { tokens: 11, minorUnits: 0 }, passes: [] };
    const none = handleWith(over);
    expect(await overrunPeriods('acme', none.handle, 0, T0)).toEqual([]);
    expect(none.asked).toEqual([]);
    expect(await overrunPeriods('acme', handleWith(over).handle, 1, T0)).toHaveLength(1);
    expect(await overrunPeriods('acme', handleWith({ ...over, quota: null }).handle, 1, T0)).toEqual([]);
    const exact = { period: 'monthly' as const, maxTokensPerPeriod: 11, maxMinorUnitsPerPeriod: 9 };
    expect(await overrunPeriods('acme', handleWith({ ...over, quota: exact, spent: { tokens: 11, minorUnits: 9 } }).handle, 1, T0)).toEqual([]);
    // Spend in a unit the quota does not bound is not an overrun of it.
    const tokensOnly = { period: 'monthly' as const, maxTokensPerPeriod: 100 };
    expect(await overrunPeriods('acme', handleWith({ ...over, quota: tokensOnly, spent: { tokens: 5, minorUnits: 999 } }).handle, 1, T0)).toEqual([]);
    const minorOnly = { period: 'monthly' as const, maxMinorUnitsPerPeriod: 100 };
    expect(await overrunPeriods('acme', handleWith({ ...over, quota: minorOnly, spent: { tokens: 999, minorUnits: 5 } }).handle, 1, T0)).toEqual([]);
  });
});

describe('overrun conditions name the store read that failed', () => {
  it.each([
    ['overranPasses', () => overranRuns('acme', failingHandle('overranPasses'), 5, T0)],
    ['getQuota', () => overrunPeriods('acme', failingHandle('getQuota'), 5, T0)],
    ['spent', () => overrunPeriods('acme', failingHandle('spent'), 5, T0)],
    ['overranPasses', () => overrunPeriods('acme', failingHandle('overranPasses'), 5, T0)],
  ])('%s', async (operation, read) => {
    const error = await read().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(QuotaError);
    expect((error as QuotaError).details).toEqual({ operation });
  });

  // Every read answers a quota over its ceiling, except `failing`, which rejects as a driver would.
  function failingHandle(failing: string): TenantStore {
    const answers: Record<string, () => Promise<unknown>> = {
      overranPasses: async () => [],
      getQuota: async () => ({ period: 'monthly', maxTokensPerPeriod: 1 }),
      spent: async () => ({ tokens: 5, minorUnits: 0 }),
    };
    answers[failing] = async () => Promise.reject(new Error('disk gone'));
    return answers as unknown as TenantStore;
  }
});
