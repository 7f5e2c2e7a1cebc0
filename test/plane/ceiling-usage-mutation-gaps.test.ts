import { afterEach, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import type { QuotaStore } from '../../src/store/store.js';
import { failure, memoryPlane, type MemoryPlane } from './plane-fixtures.js';

// Plane-wide and per-agent ceiling code the mutation run found unreached in process (README,
// "Mutation testing"): the per-agent figures of `usage`, and a store that cannot keep a plane-wide
// ceiling.

const DIGEST = 'b'.repeat(64);

let fixture: MemoryPlane | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe('usage with per-agent ceilings', () => {
  it("lists each ceilinged agent's running slots, spend and ceilings; a quota without agents has no agents member", async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    const ceilings = { maxConcurrentRuns: 2, maxTokensPerPeriod: 1000 };
    await plane.setQuota('acme', { period: 'monthly', agents: { 'refund-bot': ceilings } }, { newTenant: true });
    const pass = await plane.admit({ tenant: 'acme', run: 'r1', agent: { name: 'refund-bot', digest: DIGEST }, budget: { maxTokens: 100, maxCallTokens: 0 } });
    expect(pass.ok).toBe(true);
    const usage = await plane.usage({ tenant: 'acme' });
    expect(usage.agents).toEqual([
      { agent: 'refund-bot', running: 1, spent: { tokens: 0, minorUnits: 0 }, reserved: { tokens: 100, minorUnits: 0 }, ceilings },
    ]);
    await plane.setQuota('globex', { period: 'monthly', maxConcurrentRuns: 3 }, { newTenant: true });
    expect(Object.keys(await plane.usage({ tenant: 'globex' }))).not.toContain('agents');
  });
});

describe('a store without plane-wide methods', () => {
  // The real store with one plane-wide method hidden.
  function without(store: QuotaStore, hidden: string): QuotaStore {
    return new Proxy(store, {
      get(target, property) {
        if (property === hidden) return undefined;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  it('refuses plane-wide calls with STORE_MISCONFIGURED naming its backend, whichever method it lacks (one without a reader reads null)', async () => {
    fixture = await memoryPlane();
    expect(await createPlane({ store: without(fixture.store, 'getPlaneCeiling') }).getPlaneCeiling()).toBeNull();
    for (const hidden of ['getPlaneCeiling', 'setPlaneCeiling', 'planeUsage']) {
      const plane = createPlane({ store: without(fixture.store, hidden) });
      const calls: (() => Promise<unknown>)[] = [() => plane.setPlaneCeiling({ maxConcurrentRuns: 1 }), () => plane.planeStatus()];
      if (hidden !== 'getPlaneCeiling') calls.push(() => plane.getPlaneCeiling());
      for (const call of calls) {
        const error = await failure(call());
        expect(error.code, hidden).toBe('STORE_MISCONFIGURED');
        expect(error.details).toEqual({ backend: 'sqlite' });
        expect(error.message).toBe(
          'the sqlite store keeps no plane-wide ceiling, so it cannot enforce one; use the sqlite or postgres store',
        );
      }
    }
    expect(await createPlane({ store: fixture.store }).getPlaneCeiling()).toBeNull();
  });
});
