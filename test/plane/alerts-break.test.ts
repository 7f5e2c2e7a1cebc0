import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { BACKENDS, type SharedStore } from './backends.js';
import { ALICE, BOB, observedStore, T0 } from './plane-fixtures.js';

// Attacks on the spend alerts and the event log (docs/design/rules.md#e1–#e9), on both backends.

describe.each(BACKENDS)('spend alerts under attack, on $name', ({ fresh }) => {
  let shared: SharedStore;
  let store: QuotaStore;
  let plane: Plane;
  let clock: ManualClock;

  beforeEach(async () => {
    shared = await fresh('alerts-break');
    store = await openStore(shared.url, shared.options);
    clock = new ManualClock(T0);
    plane = createPlane({ store, clock });
  });

  afterEach(async () => {
    await store.close();
    await shared.remove();
  });

  async function spend(tenant: string, run: string, tokens: number, agent?: string): Promise<void> {
    const admitted = await plane.admit({
      tenant,
      run,
      ...(agent === undefined ? {} : { agent: { name: agent, digest: 'ab'.repeat(32) } }),
      budget: { maxTokens: tokens, maxCallTokens: 0, maxMinorUnits: 0, maxCallMinorUnits: 0 },
    });
    if (!admitted.ok) throw new Error(JSON.stringify(admitted));
    const settled = await plane.settle({ tenant, run, epoch: 1, spend: { tokens, minorUnits: 0 }, concludes: true });
    expect(settled).toMatchObject({ ok: true });
  }

  const crossed = async (tenant?: string) =>
    (await plane.events(tenant === undefined ? {} : { tenant })).events
      .filter((event) => event.type === 'threshold.crossed' || event.type === 'ceiling.reached')
      .map((event) => `${event.tenant} ${event.type} ${JSON.stringify(event.data.threshold ?? null)} ${String(event.data.period)}`);

  it('smoke: one settle over 80 % and 100 % writes two crossings and ceiling.reached', async () => {
    await plane.setQuota('acme', { maxTokensPerPeriod: 1000 }, { by: ALICE, newTenant: true });
    await spend('acme', 'run-1', 1000);
    expect(await crossed()).toHaveLength(3);
  });

  it('E5.1 new plane-wide default thresholds fire at once for a tenant that has no quota and inherits them', async () => {
    // A tenant known without a quota (its halt made it known) spends: it inherits the plane default.
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'drill', by: ALICE, newTenant: true });
    await plane.lift({ tenant: 'acme', scope: 'tenant', by: ALICE });
    await spend('acme', 'run-1', 600);
    await plane.setPlaneCeiling({ alertThresholds: [{ tokens: 500 }] }, ALICE);
    // The threshold is already crossed: E5.1 fires it now; no later settle can (600 is past 500).
    await spend('acme', 'run-2', 10);
    expect(await crossed('acme')).toEqual(['acme threshold.crossed {"tokens":500} 2026-01']);
  });

  it('E4 a tenant deleted and made again in the same month is alerted when the new tenant crosses its thresholds', async () => {
    await plane.setQuota('acme', { maxTokensPerPeriod: 1000, alertThresholds: [{ percent: 50 }] }, { by: ALICE, newTenant: true });
    await spend('acme', 'run-1', 600);
    expect(await crossed('acme')).toHaveLength(1);
    await plane.deleteTenant({ tenant: 'acme', by: ALICE, reason: 'customer left' });
    clock.advance(3_600_000);
    await plane.setQuota('acme', { maxTokensPerPeriod: 1000, alertThresholds: [{ percent: 50 }] }, { by: ALICE, newTenant: true });
    expect((await plane.usage({ tenant: 'acme' })).spent.tokens).toBe(0);
    await spend('acme', 'run-2', 600);
    // The deleted tenant's event is retired: the log keeps it, the new tenant's reads start afresh.
    expect(await crossed('acme')).toHaveLength(1);
    const everything = (await plane.events({ limit: 1000 })).events.filter((event) => event.tenant === 'acme' && event.type === 'threshold.crossed');
    expect(everything).toHaveLength(2);
    expect(everything[0]?.id).toBe(everything[1]?.id);
  });

  it('E6 a re-created tenant reusing a run id gets its run.overran', async () => {
    await plane.setQuota('acme', { maxTokensPerPeriod: 100000 }, { by: ALICE, newTenant: true });
    const over = async () => {
      const admitted = await plane.admit({ tenant: 'acme', run: 'run-1', budget: { maxTokens: 10, maxCallTokens: 0, maxMinorUnits: 0, maxCallMinorUnits: 0 } });
      expect(admitted.ok).toBe(true);
      await plane.settle({ tenant: 'acme', run: 'run-1', epoch: 1, spend: { tokens: 50, minorUnits: 0 }, concludes: true });
    };
    await over();
    await plane.deleteTenant({ tenant: 'acme', by: ALICE, reason: 'customer left' });
    await plane.setQuota('acme', { maxTokensPerPeriod: 100000 }, { by: ALICE, newTenant: true });
    await over();
    expect((await plane.events({ tenant: 'acme' })).events.filter((event) => event.type === 'run.overran')).toHaveLength(1);
    expect((await plane.events({ limit: 1000 })).events.filter((event) => event.tenant === 'acme' && event.type === 'run.overran')).toHaveLength(2);
  });
  it('E6 a lift that a re-throw overtook removes nothing and must not write halt.lifted while the halt stands', async () => {
    await plane.setQuota('acme', { maxTokensPerPeriod: 1000 }, { by: ALICE, newTenant: true });
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 1', by: ALICE });
    // Another instance re-throws the halt after the lift read it standing, before its audit row.
    const observed = observedStore(store, {
      appendAudit: async () => {
        clock.advance(1);
        await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 2', by: ALICE });
      },
    });
    const lifting = createPlane({ store: observed.store, clock });
    const lifted = await lifting.lift({ tenant: 'acme', scope: 'tenant', by: ALICE });
    expect(lifted).toMatchObject({ wasStanding: true, removed: false });
    expect(await plane.halts('acme')).toHaveLength(1);
    // A reader of the event log must not be told the halt was lifted: it stands.
    const types = (await plane.events({ tenant: 'acme' })).events.map((event) => event.type);
    expect(types[types.length - 1]).toBe('halt.set');
  });

  it('E6 two lifts of one halt at once write one halt.lifted', async () => {
    await plane.setQuota('acme', { maxTokensPerPeriod: 1000 }, { by: ALICE, newTenant: true });
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 1', by: ALICE });
    const other = createPlane({ store, clock });
    // The second lift reads the halt standing before the first deletes it.
    const observed = observedStore(store, { liftHaltIf: async () => void (await other.lift({ tenant: 'acme', scope: 'tenant', by: BOB })) });
    await createPlane({ store: observed.store, clock }).lift({ tenant: 'acme', scope: 'tenant', by: ALICE });
    expect(await plane.halts('acme')).toHaveLength(0);
    expect((await plane.events({ tenant: 'acme' })).events.filter((event) => event.type === 'halt.lifted')).toHaveLength(1);
  });
  it('E9 settles of three tenants at once (one batch on PostgreSQL), each crossing 80 % and 100 %, write each tenant its own events once', async () => {
    const tenants = ['acme', 'globex', 'hooli'];
    for (const tenant of tenants) await plane.setQuota(tenant, { maxTokensPerPeriod: 1000 }, { by: ALICE, newTenant: true });
    const runs = tenants.flatMap((tenant) => Array.from({ length: 8 }, (_, i) => ({ tenant, run: `run-${i}` })));
    for (const { tenant, run } of runs) {
      const admitted = await plane.admit({ tenant, run, budget: { maxTokens: 125, maxCallTokens: 0, maxMinorUnits: 0, maxCallMinorUnits: 0 } });
      expect(admitted.ok).toBe(true);
    }
    await Promise.all(runs.map(({ tenant, run }) => plane.settle({ tenant, run, epoch: 1, spend: { tokens: 125, minorUnits: 0 }, concludes: true })));
    for (const tenant of tenants) expect(await crossed(tenant)).toHaveLength(3);
    const seqs = (await plane.events()).events.map((event) => event.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set((await plane.events()).events.map((event) => event.id)).size).toBe(9);
  });
});
