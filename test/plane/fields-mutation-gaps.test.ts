import { afterEach, describe, expect, it } from 'vitest';

import { KEYS_AUDIT_TENANT } from '../../src/core/identifiers.js';
import { RUN_STATUSES } from '../../src/store/types.js';
import { ALICE, failure, type MemoryPlane, memoryPlane } from './plane-fixtures.js';

// Fields the plane's own checks name before any store call, and small plane rules only a direct
// plane call reaches.

let fixture: MemoryPlane;
afterEach(async () => {
  await fixture.close();
});

describe('fields the plane names', () => {
  it('dispatch names a bad epoch, and a lease without an epoch in full', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    const pass = await plane.admit({ tenant: 'acme', run: 'run-a' });
    if (!pass.ok) throw new Error('refused');
    const base = { tenant: 'acme', run: 'run-a', grant: 'tool://x/y', dispatch: 'k1' };
    expect((await failure(plane.dispatch({ ...base, epoch: 0, leaseMs: 1000 }))).details.field).toBe('epoch');
    expect((await failure(plane.dispatch({ ...base, leaseMs: 1000 }))).message).toBe(
      'leaseMs: renews the lease of the pass named by epoch; give epoch too, or drop leaseMs',
    );
  });

  it('settle and release name a bad operator under by', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.admit({ tenant: 'acme', run: 'run-a' });
    const badBy = { actor: '', basis: 'asserted' } as never;
    const settle = await failure(plane.settle({ tenant: 'acme', run: 'run-a', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true, by: badBy }));
    expect(settle.details.field).toBe('by.actor');
    expect((await failure(plane.release({ tenant: 'acme', run: 'run-a', by: badBy }))).details.field).toBe('by.actor');
  });

  it('runs lists the statuses it accepts when given an unknown one', async () => {
    fixture = await memoryPlane();
    const error = await failure(fixture.plane.runs({ tenant: 'acme', statuses: ['running', 'asleep' as never] }));
    expect(error.message).toBe(`statuses[1]: must be one of ${RUN_STATUSES.join(', ')}, got "asleep"`);
  });

  it('auditLog names a bad action filter', async () => {
    fixture = await memoryPlane();
    expect((await failure(fixture.plane.auditLog({ tenant: 'acme', action: '' }))).details.field).toBe('action');
  });

  it('halt says what it got for a scope that is neither text nor a scope object', async () => {
    fixture = await memoryPlane();
    const error = await failure(fixture.plane.halt({ tenant: 'acme', scope: 5 as never, reason: 'r', by: ALICE }));
    expect(error.details.field).toBe('scope');
    expect(error.message).toMatch(/, got 5$/);
  });
});

describe('plane.tenants', () => {
  it('leaves out the chain that audits keys for every tenant', async () => {
    fixture = await memoryPlane();
    const { plane, store } = fixture;
    await plane.admit({ tenant: 'acme', run: 'run-a' });
    await store.tenant(KEYS_AUDIT_TENANT).appendAudit({ atMs: 1, by: ALICE, action: 'key.create', subject: 'key_x', detail: {} });
    expect(await store.tenants()).toContain(KEYS_AUDIT_TENANT);
    expect(await plane.tenants()).toEqual(['acme']);
  });
});
