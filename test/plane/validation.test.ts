import { describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { MAX_LEASE_MS } from '../../src/store/store-arguments.js';
import type { Plane } from '../../src/plane/plane.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';

// A store that records any call: a rejected input must be refused at the plane boundary, before
// the store is asked anything.
function recordingStore(): { store: QuotaStore; calls: string[] } {
  const calls: string[] = [];
  const handle = new Proxy({} as TenantStore, {
    get(_target, property) {
      return async () => {
        calls.push(String(property));
        throw new Error(`the store was asked ${String(property)}`);
      };
    },
  });
  const store: QuotaStore = {
    backend: 'recording',
    tenant: () => {
      calls.push('tenant');
      return handle;
    },
    tenants: async () => [],
    close: async () => {},
  };
  return { store, calls };
}

const operator = { actor: 'ops-alice', basis: 'asserted' } as const;
const run = 'run_01JB0000000000000000000000';
const digest = 'ab'.repeat(32);

async function invalidField(call: (plane: Plane) => Promise<unknown>): Promise<{ field: unknown; message: string }> {
  const { store, calls } = recordingStore();
  const plane = createPlane({ store, clock: { nowMs: () => 1_760_000_000_000 } });
  const error = await call(plane).then(
    () => {
      throw new Error('expected INVALID_ARGUMENT');
    },
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(QuotaError);
  expect((error as QuotaError).code).toBe('INVALID_ARGUMENT');
  expect(calls).toEqual([]);
  return { field: (error as QuotaError).details.field, message: (error as QuotaError).message };
}

describe('plane: validation errors name the field and reach no store', () => {
  it.each([
    ['tenant', (p: Plane) => p.admit({ tenant: '' })],
    ['tenant', (p: Plane) => p.admit({ tenant: 'a\nb' })],
    ['run', (p: Plane) => p.admit({ tenant: 'acme', run: ' ' })],
    ['agent.name', (p: Plane) => p.admit({ tenant: 'acme', agent: { name: '', digest } })],
    ['agent.digest', (p: Plane) => p.admit({ tenant: 'acme', agent: { name: 'clerk', digest: 'abc' } })],
    ['chain', (p: Plane) => p.admit({ tenant: 'acme', chain: 'user:alice' as unknown as string[] })],
    ['chain[1]', (p: Plane) => p.admit({ tenant: 'acme', chain: ['user:alice', ''] })],
    ['budget.maxTokens', (p: Plane) => p.admit({ tenant: 'acme', budget: { maxTokens: -1 } })],
    ['budget.maxTokenz', (p: Plane) => p.admit({ tenant: 'acme', budget: { maxTokenz: 1 } as never })],
    ['width', (p: Plane) => p.admit({ tenant: 'acme', width: 1.5 })],
    ['atMs', (p: Plane) => p.admit({ tenant: 'acme', atMs: -1 })],
    ['leaseMs', (p: Plane) => p.admit({ tenant: 'acme', leaseMs: 0 })],
    ['leaseMs', (p: Plane) => p.admit({ tenant: 'acme', leaseMs: Number.MAX_SAFE_INTEGER })],
    ['leaseMs', (p: Plane) => p.admit({ tenant: 'acme', leaseMs: MAX_LEASE_MS + 1 })],
    ['leaseMs', (p: Plane) => p.resume({ tenant: 'acme', run, leaseMs: MAX_LEASE_MS + 1 })],
    ['leaseMs', (p: Plane) => p.heartbeat({ tenant: 'acme', run, epoch: 1, leaseMs: MAX_LEASE_MS + 1 })],
    ['leaseMs', (p: Plane) => p.dispatch({ tenant: 'acme', run, grant: 'tool://a/b', dispatch: 'k', ceilings: [], epoch: 1, leaseMs: MAX_LEASE_MS + 1 })],
    ['epoch', (p: Plane) => p.settle({ tenant: 'acme', run, epoch: 0, spend: { tokens: 0, minorUnits: 0 }, concludes: true })],
    ['spend.minorUnits', (p: Plane) => p.settle({ tenant: 'acme', run, epoch: 1, spend: { tokens: 0 } as never, concludes: true })],
    ['concludes', (p: Plane) => p.settle({ tenant: 'acme', run, epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: 'yes' as never })],
    ['run', (p: Plane) => p.resume({ tenant: 'acme', run: '' })],
    ['grant', (p: Plane) => p.dispatch({ tenant: 'acme', run, grant: '', dispatch: 'k', ceilings: [] })],
    ['dispatch', (p: Plane) => p.dispatch({ tenant: 'acme', run, grant: 'tool://a/b', dispatch: '', ceilings: [] })],
    ['ceilings[0].count', (p: Plane) => p.dispatch({ tenant: 'acme', run, grant: 'tool://a/b', dispatch: 'k', ceilings: [{ count: -1, windowSeconds: 60 }] })],
    ['exempt', (p: Plane) => p.dispatch({ tenant: 'acme', run, grant: 'tool://a/b', dispatch: 'k', ceilings: [], exempt: 1 as never })],
    ['quota.maxConcurrentRuns', (p: Plane) => p.setQuota('acme', { period: 'monthly', maxConcurrentRuns: -2 })],
    ['quota.period', (p: Plane) => p.setQuota('acme', { period: 'weekly' as never })],
    ['by.actor', (p: Plane) => p.setQuota('acme', { period: 'monthly' }, { actor: '', basis: 'asserted' })],
    // A misspelt member is refused by its name, never ignored (an ignored budget or waitMs changes the decision).
    ['waitMS', (p: Plane) => p.admit({ tenant: 'acme', waitMS: 2000 } as never)],
    ['budgets', (p: Plane) => p.admit({ tenant: 'acme', budgets: { maxTokens: 10 } } as never)],
    ['concluded', (p: Plane) => p.settle({ tenant: 'acme', run, epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true, concluded: true } as never)],
    ['lease', (p: Plane) => p.heartbeat({ tenant: 'acme', run, epoch: 1, lease: 5 } as never)],
    ['leaseMS', (p: Plane) => p.resume({ tenant: 'acme', run, leaseMS: 5 } as never)],
    ['ceiling', (p: Plane) => p.dispatch({ tenant: 'acme', run, grant: 'tool://a/b', dispatch: 'k', ceiling: [] } as never)],
    ['period', (p: Plane) => p.usage({ tenant: 'acme', period: '2026-13' })],
    ['period', (p: Plane) => p.usage({ tenant: 'acme', period: '2026-02-31' })],
    ['reason', (p: Plane) => p.halt({ tenant: 'acme', scope: 'tenant', reason: '   ', by: operator })],
    ['by.basis', (p: Plane) => p.halt({ tenant: 'acme', scope: 'tenant', reason: 'x', by: { actor: 'a', basis: 'sworn' as never } })],
    ['by', (p: Plane) => p.lift({ tenant: 'acme', scope: 'tenant', by: undefined as never })],
    ['tenant', (p: Plane) => p.halts('')],
    ['tenant', (p: Plane) => p.halt({ tenant: '*', scope: 'tenant', reason: 'x', by: operator })],
    ['tenant', (p: Plane) => p.admit({ tenant: '*' })],
    ['tenant', (p: Plane) => p.setQuota('*', { period: 'monthly' })],
    ['tenant', (p: Plane) => p.getQuota(42 as never)],
  ])('%s is named', async (field, call) => {
    expect((await invalidField(call)).field).toBe(field);
  });

  it.each([['Tenant'], ['agent:'], ['revision:abc'], ['subject:'], ['everything']])(
    'an invalid halt scope %j is INVALID_ARGUMENT listing the scope forms',
    async (scope) => {
      const { field, message } = await invalidField((p) => p.halt({ tenant: 'acme', scope, reason: 'x', by: operator }));
      expect(field).toBe('scope');
      expect(message).toContain(
        "'tenant', 'agent:<metadata.name>', 'revision:<manifest digest>', 'subject:<principal on the chain>'",
      );
    },
  );

  it('a malformed HaltScope value is refused the same way as a malformed key', async () => {
    const { field } = await invalidField((p) =>
      p.lift({ tenant: 'acme', scope: { kind: 'agent', name: '' } as never, by: operator }),
    );
    expect(field).toBe('scope');
    const other = await invalidField((p) => p.lift({ tenant: 'acme', scope: { kind: 'constructor' } as never, by: operator }));
    expect(other.field).toBe('scope');
  });

  it('a request that is not an object is refused, not a TypeError', async () => {
    expect((await invalidField((p) => p.admit(undefined as never))).field).toBe('request');
  });

  it('an invalid clock reading is named instead of reaching the store', async () => {
    const { store, calls } = recordingStore();
    const plane = createPlane({ store, clock: { nowMs: () => 1.5 } });
    await expect(plane.admit({ tenant: 'acme' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'clock.nowMs()' } });
    expect(calls).toEqual([]);
  });

  it('createPlane names a malformed option', () => {
    const { store } = recordingStore();
    expect(() => createPlane({ store: {} as never })).toThrow(expect.objectContaining({ details: { field: 'store' } }));
    expect(() => createPlane({ store, clock: {} as never })).toThrow(expect.objectContaining({ details: { field: 'clock' } }));
    expect(() => createPlane({ store, leaseMs: -5 })).toThrow(expect.objectContaining({ details: { field: 'leaseMs' } }));
    expect(() => createPlane({ store, leaseMs: MAX_LEASE_MS + 1 })).toThrow(expect.objectContaining({ details: { field: 'leaseMs' } }));
    expect(MAX_LEASE_MS).toBe(86_400_000);
  });
});
