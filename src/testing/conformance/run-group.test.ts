import assert from 'node:assert/strict';

import { describe, expect, it } from 'vitest';

import type { QuotaStore } from '../../store/store.js';
import { alwaysAdmitRateStore } from '../always-admit-rate-store.js';
import { conformanceGroups } from './groups.js';
import { EarlierStepFailed, runConformanceGroup } from './run-group.js';
import type { ConformanceGroup, StoreFactory } from './types.js';

// The runner and the battery's shape, without a backend: a stand-in store that only counts how
// often it was opened and closed (no step here touches it).
function countingFactory(): { factory: StoreFactory; opened: () => number; closed: () => number } {
  let opened = 0;
  let closed = 0;
  const store = { backend: 'none' } as unknown as QuotaStore;
  return {
    factory: async () => {
      opened += 1;
      return { store, close: async () => void (closed += 1) };
    },
    opened: () => opened,
    closed: () => closed,
  };
}

describe('runConformanceGroup', () => {
  it('runs steps in order on one store, records the first failure, fails the rest as EarlierStepFailed, and closes', async () => {
    const order: string[] = [];
    const seen = new Set<QuotaStore>();
    const boom = new assert.AssertionError({ message: 'S2 broke' });
    const group: ConformanceGroup = {
      title: 'three steps',
      steps: [
        { id: 'S1', title: 'passes', run: async ({ store }) => void (order.push('S1'), seen.add(store)) },
        { id: 'S2', title: 'fails', run: async ({ store }) => (order.push('S2'), seen.add(store), Promise.reject(boom)) },
        { id: 'S3', title: 'never runs', run: async () => void order.push('S3') },
      ],
    };
    const counting = countingFactory();
    const results = await runConformanceGroup(group, counting.factory);
    expect(order).toEqual(['S1', 'S2']);
    expect(seen.size).toBe(1);
    expect(results.map((r) => [r.id, 'error' in r])).toEqual([
      ['S1', false],
      ['S2', true],
      ['S3', true],
    ]);
    expect(results[1]?.error).toBe(boom);
    expect(results[2]?.error).toBeInstanceOf(EarlierStepFailed);
    expect((results[2]?.error as EarlierStepFailed).failedStep).toBe('S2');
    expect([counting.opened(), counting.closed()]).toEqual([1, 1]);
  });
});

describe('conformanceGroups', () => {
  it('names every battery case C1–C43 and G1–G5 exactly once, and no id twice', () => {
    const ids = conformanceGroups.flatMap((group) => group.steps.map((step) => step.id));
    expect(new Set(ids).size).toBe(ids.length);
    const required = [
      ...Array.from({ length: 43 }, (_, i) => `C${i + 1}`),
      ...Array.from({ length: 5 }, (_, i) => `G${i + 1}`),
    ];
    expect(required.filter((id) => !ids.includes(id))).toEqual([]);
  });

  it('gives every group and step a title', () => {
    for (const group of conformanceGroups) {
      expect(group.title.length).toBeGreaterThan(0);
      for (const step of group.steps) expect(step.title.length, step.id).toBeGreaterThan(0);
    }
  });
});

describe('alwaysAdmitRateStore', () => {
  it('answers ok for reserveRate and rateRoom without asking the inner store, and passes the rest through', async () => {
    const calls: string[] = [];
    const inner = {
      backend: 'fake',
      tenant: (tenant: string) =>
        new Proxy({ tenant } as Record<string, unknown>, {
          get: (target, prop) =>
            prop === 'tenant' ? target.tenant : async () => void calls.push(String(prop)),
        }),
      tenants: async () => ['acme'],
      close: async () => void calls.push('close'),
    } as unknown as QuotaStore;
    const wrapped = alwaysAdmitRateStore(inner);
    const handle = wrapped.tenant('acme');
    expect(handle.tenant).toBe('acme');
    const refusedEverywhere = { grant: 'g', run: 'r', dispatch: 'd', ceilings: [{ count: 0, windowSeconds: 60 }], atMs: 0, exempt: false };
    expect(await handle.reserveRate(refusedEverywhere)).toEqual({ ok: true });
    expect(await handle.rateRoom('g', [{ count: 0, windowSeconds: 60 }], 0)).toEqual({ ok: true });
    await handle.running();
    await handle.halts();
    expect(await wrapped.tenants()).toEqual(['acme']);
    await wrapped.close();
    expect(calls).toEqual(['running', 'halts', 'close']);
  });
});
