import { afterEach, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import type { QuotaStore } from '../../src/store/store.js';
import { ALICE, failure, type MemoryPlane, memoryPlane, T0 } from './plane-fixtures.js';

// `plane.updateQuota` on SQLite in this process: the merge patch, its audit
// row and its refusals. The HTTP and CLI suites reach it too, but `npm run mutate` runs neither.

let fixture: MemoryPlane;
afterEach(async () => {
  await fixture.close();
});

describe('plane.updateQuota', () => {
  it('merges the patch into the stored quota, stores it and audits quota.update with old, new and patch', async () => {
    fixture = await memoryPlane();
    const { plane, clock, handle } = fixture;
    await plane.setQuota('acme', { period: 'daily', maxConcurrentRuns: 4, maxTokensPerPeriod: 5000 }, { newTenant: true });
    clock.advance(1000);

    const next = await plane.updateQuota('acme', { maxConcurrentRuns: null, maxMinorUnitsPerPeriod: 900 }, ALICE);
    expect(next).toEqual({ period: 'daily', maxTokensPerPeriod: 5000, maxMinorUnitsPerPeriod: 900 });
    expect(await plane.getQuota('acme')).toEqual(next);

    const [row] = await handle('acme').auditLog({ limit: 1 });
    expect(row).toMatchObject({
      atMs: T0 + 1000,
      by: ALICE,
      action: 'quota.update',
      subject: 'quota',
      detail: {
        old: { period: 'daily', maxConcurrentRuns: 4, maxTokensPerPeriod: 5000 },
        new: { period: 'daily', maxTokensPerPeriod: 5000, maxMinorUnitsPerPeriod: 900 },
        patch: { maxConcurrentRuns: null, maxMinorUnitsPerPeriod: 900 },
      },
    });
  });

  it('patches a tenant with no quota as one with no ceilings, and names the library when no operator is given', async () => {
    fixture = await memoryPlane();
    const { plane, handle } = fixture;
    expect(await plane.updateQuota('globex', { maxConcurrentRuns: 2 }, { newTenant: true })).toEqual({ period: 'monthly', maxConcurrentRuns: 2 });
    const [row] = await handle('globex').auditLog({ limit: 5 });
    expect(row).toMatchObject({
      by: { actor: 'library', basis: 'asserted' },
      action: 'quota.update',
      detail: { old: null, new: { period: 'monthly', maxConcurrentRuns: 2 }, patch: { maxConcurrentRuns: 2 } },
    });
  });

  it('refuses a bad tenant, patch or operator, naming the field, and writes nothing', async () => {
    fixture = await memoryPlane();
    const { plane, handle } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 4 }, { newTenant: true });
    const before = await handle('acme').auditLog({ limit: 10 });

    expect((await failure(plane.updateQuota('*', { maxConcurrentRuns: 1 }))).details.field).toBe('tenant');
    expect((await failure(plane.updateQuota('acme', 'not a patch' as never))).details.field).toBe('patch');
    expect((await failure(plane.updateQuota('acme', { maxConcurrentRuns: -1 }))).details.field).toBe('patch.maxConcurrentRuns');
    const badBy = await failure(plane.updateQuota('acme', { maxConcurrentRuns: 1 }, { actor: '', basis: 'asserted' }));
    expect(String(badBy.details.field)).toMatch(/^by\b/);

    expect(await plane.getQuota('acme')).toEqual({ period: 'monthly', maxConcurrentRuns: 4 });
    expect(await handle('acme').auditLog({ limit: 10 })).toEqual(before);
  });

  it('lets a store fault through as STORE_UNAVAILABLE naming the call', async () => {
    fixture = await memoryPlane();
    for (const method of ['getQuota', 'setQuota'] as const) {
      const store: QuotaStore = {
        ...fixture.store,
        backend: fixture.store.backend,
        tenant: (tenant) => {
          const handle = fixture.store.tenant(tenant);
          return new Proxy(handle, {
            get: (target, property) => {
              if (property === method) return async () => Promise.reject(new Error('disk gone'));
              const value = Reflect.get(target, property) as unknown;
              return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
            },
          });
        },
      };
      const error = await failure(createPlane({ store, clock: fixture.clock }).updateQuota('acme', { maxConcurrentRuns: 1 }, { newTenant: true }));
      expect(error.code).toBe('STORE_UNAVAILABLE');
      expect(error.details).toEqual({ operation: method });
    }
    expect(await fixture.plane.getQuota('acme')).toBeNull();
  });
});
