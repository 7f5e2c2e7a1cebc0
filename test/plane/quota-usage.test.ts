import { afterEach, describe, expect, it } from 'vitest';

import { ALICE, memoryPlane, T0, type MemoryPlane } from './plane-fixtures.js';

const ZERO = { tokens: 0, minorUnits: 0 };

let fixture: MemoryPlane;
afterEach(async () => {
  await fixture.close();
});

describe('plane quota and usage on SQLite', () => {
  it('setQuota stores the normalised quota and audits quota.set with the old and the new quota', async () => {
    fixture = await memoryPlane();
    const { plane, clock, handle } = fixture;
    expect(await plane.getQuota('acme')).toBeNull();

    // The period may be left out (TenantQuotaInput): the quota answered names it.
    const first = await plane.setQuota('acme', { maxConcurrentRuns: 4 }, { newTenant: true });
    expect(first).toEqual({ period: 'monthly', maxConcurrentRuns: 4 });
    clock.advance(1000);
    await plane.setQuota('acme', { period: 'daily', maxTokensPerPeriod: 5000 }, ALICE);

    expect(await plane.getQuota('acme')).toEqual({ period: 'daily', maxTokensPerPeriod: 5000 });
    const audit = await handle('acme').auditLog({ limit: 10, action: 'quota.set' });
    expect(audit.map(({ atMs, by, action, subject, detail }) => ({ atMs, by, action, subject, detail }))).toEqual([
      {
        atMs: T0 + 1000,
        by: ALICE,
        action: 'quota.set',
        subject: 'quota',
        detail: { old: { period: 'monthly', maxConcurrentRuns: 4 }, new: { period: 'daily', maxTokensPerPeriod: 5000 } },
      },
      {
        atMs: T0,
        by: { actor: 'library', basis: 'asserted' },
        action: 'quota.set',
        subject: 'quota',
        detail: { old: null, new: { period: 'monthly', maxConcurrentRuns: 4 } },
      },
    ]);
  });

  it('usage reports spent, reserved, running and the quota for the current period of the quota', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'daily', maxTokensPerPeriod: 10_000, maxMinorUnitsPerPeriod: 500_000 }, { newTenant: true });
    const budget = { maxTokens: 1000, maxCallTokens: 100, maxMinorUnits: 20_000, maxCallMinorUnits: 1000 };
    const a = await plane.admit({ tenant: 'acme', budget, width: 2 });
    const b = await plane.admit({ tenant: 'acme', budget, width: 0 });
    if (!a.ok || !b.ok) throw new Error('admission refused');
    await plane.settle({ tenant: 'acme', run: a.run, epoch: 1, spend: { tokens: 250, minorUnits: 7000 }, concludes: true });

    expect(await plane.usage({ tenant: 'acme' })).toEqual({
      tenant: 'acme',
      period: '2026-01-05',
      spent: { tokens: 250, minorUnits: 7000 },
      reserved: { tokens: 1000, minorUnits: 20_000 },
      running: 1,
      quota: { period: 'daily', maxTokensPerPeriod: 10_000, maxMinorUnitsPerPeriod: 500_000 },
      queue: { depth: 0, oldestWaitMs: null },
    });
    expect(await plane.usage({ tenant: 'acme', period: '2026-01-04' })).toMatchObject({ period: '2026-01-04', spent: ZERO, reserved: ZERO, running: 1 });
  });

  it('a tenant with no quota reports monthly periods, zero figures and quota null', async () => {
    fixture = await memoryPlane();
    expect(await fixture.plane.usage({ tenant: 'globex' })).toEqual({
      tenant: 'globex',
      period: '2026-01',
      spent: ZERO,
      reserved: ZERO,
      running: 0,
      quota: null,
      queue: { depth: 0, oldestWaitMs: null },
    });
  });

  it('usage of one tenant never counts another tenant', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.admit({ tenant: 'acme' });
    await plane.admit({ tenant: 'acme' });
    await plane.admit({ tenant: 'globex' });
    expect((await plane.usage({ tenant: 'acme' })).running).toBe(2);
    expect((await plane.usage({ tenant: 'globex' })).running).toBe(1);
  });
});
