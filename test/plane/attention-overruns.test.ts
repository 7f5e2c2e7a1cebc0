import { afterEach, describe, expect, it } from 'vitest';

import { memoryPlane, T0, type MemoryPlane } from './plane-fixtures.js';

// Issue 9 fault 2: a pass that ran over its hold and a period over its ceiling are in attention.

let fixture: MemoryPlane;
afterEach(async () => {
  await fixture.close();
});

describe('plane.attention reports overruns (issue 9 fault 2)', () => {
  it('maxTokens 20000 settling 90,000,000: run.overran names the pass, spend.overrun the period and by how much', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 2_000_000 });
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
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 2_000_000 });
    await plane.admit({ tenant: 'acme', run: 'run-ok', budget: { maxTokens: 20_000, maxCallTokens: 0 } });
    await plane.settle({ tenant: 'acme', run: 'run-ok', epoch: 1, spend: { tokens: 20_000, minorUnits: 0 }, concludes: true });
    const report = await plane.attention({ tenant: 'acme' });
    expect(report.conditions.filter((c) => c.kind === 'run.overran' || c.kind === 'spend.overrun')).toEqual([]);
  });
});
