import { describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';

// A store whose every handle method fails the way an unclassified driver error would: a plain
// Error, not a QuotaError. The plane must turn it into STORE_UNAVAILABLE and never answer from it.
function brokenStore(fault: () => unknown): { store: QuotaStore; calls: string[] } {
  const calls: string[] = [];
  const handle = new Proxy({} as TenantStore, {
    get(_target, property) {
      if (property === 'tenant') return 'acme';
      return async () => {
        calls.push(String(property));
        throw fault();
      };
    },
  });
  // The store knows acme (rules.md#l95), so every verb reaches the handle's failing methods.
  const store: QuotaStore = {
    backend: 'broken',
    tenant: () => handle,
    tenants: async () => ['acme'],
    close: async () => {},
  };
  return { store, calls };
}

const clock = { nowMs: () => 1_760_000_000_000 };
const operator = { actor: 'ops-alice', basis: 'asserted' } as const;

async function expectUnavailable(promise: Promise<unknown>): Promise<QuotaError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the call to fail closed');
    },
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(QuotaError);
  expect((error as QuotaError).code).toBe('STORE_UNAVAILABLE');
  expect((error as QuotaError).retryable).toBe(true);
  return error as QuotaError;
}

describe('plane: a store that cannot answer fails closed (docs/design/decisions.md "Fail closed")', () => {
  it('an unclassified store error on admit becomes STORE_UNAVAILABLE with the cause kept, never an admission', async () => {
    const cause = new Error('connection reset by peer');
    const { store } = brokenStore(() => cause);
    const plane = createPlane({ store, clock });
    const error = await expectUnavailable(plane.admit({ tenant: 'acme' }));
    expect(error.cause).toBe(cause);
    expect(error.message).toContain('connection reset by peer');
  });

  it('every verb reports STORE_UNAVAILABLE when the store throws', async () => {
    const { store } = brokenStore(() => new Error('disk on fire'));
    const plane = createPlane({ store, clock });
    const run = 'run_01JB0000000000000000000000';
    await expectUnavailable(plane.settle({ tenant: 'acme', run, epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true }));
    await expectUnavailable(plane.resume({ tenant: 'acme', run }));
    await expectUnavailable(plane.dispatch({ tenant: 'acme', run, grant: 'tool://a/b', dispatch: 'k0', ceilings: [] }));
    await expectUnavailable(plane.setQuota('acme', { period: 'monthly' }));
    await expectUnavailable(plane.getQuota('acme'));
    await expectUnavailable(plane.usage({ tenant: 'acme' }));
    await expectUnavailable(plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident', by: operator }));
    await expectUnavailable(plane.lift({ tenant: 'acme', scope: 'tenant', by: operator }));
    await expectUnavailable(plane.halts('acme'));
  });

  it('a QuotaError from the store passes through with its own code', async () => {
    const corrupt = new QuotaError('STORE_CORRUPT', 'a halt row cannot be read');
    const { store } = brokenStore(() => corrupt);
    const plane = createPlane({ store, clock });
    await expect(plane.admit({ tenant: 'acme' })).rejects.toBe(corrupt);
  });

  it('a halt whose audit append fails is not written: the halt row is never touched', async () => {
    const { store, calls } = brokenStore(() => new Error('audit table locked'));
    // halts() must answer for the plane to reach the append; only the append and later calls fail.
    const handle = store.tenant('acme');
    const answering = new Proxy(handle, {
      get(target, property, receiver) {
        if (property === 'halts') {
          return async () => {
            calls.push('halts');
            return [];
          };
        }
        return Reflect.get(target, property, receiver);
      },
    });
    const plane = createPlane({ store: { ...store, tenant: () => answering }, clock });
    await expectUnavailable(plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident', by: operator }));
    expect(calls).toEqual(['halts', 'appendAudit']);
  });

  it('L95.1 a store that cannot say whether the tenant exists fails closed: the halt, lift, quota change and release are unavailable, never refused NOT_FOUND or done', async () => {
    const { store, calls } = brokenStore(() => new Error('disk on fire'));
    const unsure: QuotaStore = {
      ...store,
      hasTenant: async () => Promise.reject(new Error('disk on fire')),
      tenants: async () => Promise.reject(new Error('disk on fire')),
    };
    const plane = createPlane({ store: unsure, clock });
    const checks = [
      plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident', by: operator }),
      plane.lift({ tenant: 'acme', scope: 'tenant', by: operator }),
      plane.setQuota('acme', { period: 'monthly' }),
      plane.updateQuota('acme', { maxConcurrentRuns: 1 }),
      plane.release({ tenant: 'acme', run: 'run_01JB0000000000000000000000', by: operator }),
    ];
    for (const check of checks) expect((await expectUnavailable(check)).details).toEqual({ operation: 'hasTenant' });
    expect(calls).toEqual([]);
  });

  it('a store whose tenant() throws a plain error is unavailable too', async () => {
    const store: QuotaStore = {
      backend: 'broken',
      tenant: () => {
        throw new Error('pool exhausted');
      },
      tenants: async () => [],
      close: async () => {},
    };
    await expectUnavailable(createPlane({ store, clock }).halts('acme'));
  });
});
