import { afterEach, describe, expect, it } from 'vitest';

import { isQuotaError } from '../../src/core/errors.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { ALICE, memoryPlane, T0, type MemoryPlane } from './plane-fixtures.js';

let fixture: MemoryPlane;
afterEach(async () => {
  await fixture.close();
});

async function refusal(action: Promise<unknown>): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  try {
    await action;
  } catch (error) {
    if (isQuotaError(error)) return { code: error.code, message: error.message, details: error.details };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('plane.deleteTenant', () => {
  it('L95.4: refuses while a run is running, naming it; deletes once it concluded, and the tenant is gone but its chain (L95.5, L95.6)', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1000 }, { newTenant: true });
    await plane.setQuota('globex', { period: 'monthly' }, { newTenant: true });
    const admitted = await plane.admit({ tenant: 'acme', run: 'run-1', budget: { maxTokens: 100, maxCallTokens: 10 } });
    expect(admitted.ok).toBe(true);

    const refused = await refusal(plane.deleteTenant({ tenant: 'acme', by: ALICE, reason: 'customer left' }));
    expect(refused.code).toBe('CONFLICT');
    expect(refused.message).toMatch(/^tenant 'acme' cannot be deleted yet: 1 running run\(s\): .*; 1 hold\(s\) of spend not yet given back/);
    expect(refused.details).toMatchObject({ tenant: 'acme', running: 1, holds: 1 });
    expect(await plane.tenants()).toEqual(['acme', 'globex']);

    await plane.settle({ tenant: 'acme', run: 'run-1', epoch: 1, spend: { tokens: 40, minorUnits: 0 }, concludes: true });
    const answer = await plane.deleteTenant({ tenant: 'acme', by: ALICE, reason: 'customer left' });
    expect(answer).toMatchObject({ tenant: 'acme', keysDeleted: [], audit: { action: 'tenant.delete', subject: 'tenant', by: ALICE, atMs: T0 } });
    expect(answer.audit.detail).toEqual({ reason: 'customer left', quota: { period: 'monthly', maxTokensPerPeriod: 1000 }, keys: [] });
    expect(await plane.tenants()).toEqual(['globex']);
    // The chain stays, whole, and verifies.
    const verified = await plane.verifyAudit({ tenant: 'acme' });
    expect(verified.ok).toBe(true);
    const log = await plane.auditLog({ tenant: 'acme', limit: 10 });
    expect(log.rows.map((row) => row.action)).toEqual(['tenant.delete', 'quota.set']);

    // It no longer exists: an act on it is refused as on any unknown tenant, and names a deletion as nothing to do.
    const gone = await refusal(plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'x', by: ALICE }));
    expect(gone).toMatchObject({ code: 'NOT_FOUND', details: { field: 'tenant', tenant: 'acme' } });
    const again = await refusal(plane.deleteTenant({ tenant: 'acme', by: ALICE, reason: 'twice' }));
    expect(again.code).toBe('NOT_FOUND');
    expect(again.message).toMatch(/tenant 'acme' does not exist: it has no quota and no history, so there is nothing to delete/);
  });

  it("L95: a tenant known only by its model calls is listed, and deleted with its meters, its end users' included", async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.reserveCall({ tenant: 'acme', model: 'm', endUser: 'alice@example.com', callId: 'a', inputTokens: 1, maxOutputTokens: 1 });
    await plane.adjustCall({ tenant: 'acme', callId: 'a', usage: { inputTokens: 1, outputTokens: 1 } });
    expect(await plane.tenants()).toEqual(['acme']);
    expect((await plane.callStandings({ tenant: 'acme' })).map((standing) => standing.subject)).toContain('user:alice@example.com');
    await plane.deleteTenant({ tenant: 'acme', by: ALICE, reason: 'the customer asked' });
    expect(await plane.tenants()).toEqual([]);
    expect(await plane.callStandings({ tenant: 'acme' })).toEqual([expect.objectContaining({ subject: 'tenant' })]);
  });

  it('L95.4: a tenant with a model call in flight is not deleted, the refusal naming it and what ends it; released, it is', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setCallCeilings('acme', { tenant: [{ unit: 'requests', limit: 1, windowSeconds: 60 }] }, { newTenant: true });
    await plane.reserveCall({ tenant: 'acme', model: 'm', callId: 'a', inputTokens: 1, maxOutputTokens: 1 });
    const refused = await refusal(plane.deleteTenant({ tenant: 'acme', by: ALICE, reason: 'x' }));
    expect(refused.code).toBe('CONFLICT');
    expect(refused.message).toBe(
      "tenant 'acme' cannot be deleted yet: 1 model call(s) in flight: release them (quotaplane calls open acme lists them, quotaplane calls release acme <callId> frees one), or wait for their deadline",
    );
    expect(refused.details).toMatchObject({ tenant: 'acme', openCalls: 1 });
    expect((await plane.openCalls({ tenant: 'acme' })).map((call) => call.callId)).toEqual(['a']);
    await plane.releaseCall({ tenant: 'acme', callId: 'a' });
    await plane.deleteTenant({ tenant: 'acme', by: ALICE, reason: 'x' });
    expect(await plane.tenants()).toEqual([]);
  });

  it('L95.4: a model call past its deadline no longer stands in the way', async () => {
    fixture = await memoryPlane();
    const { plane, clock } = fixture;
    await plane.reserveCall({ tenant: 'acme', model: 'm', callId: 'a', inputTokens: 1, maxOutputTokens: 1, leaseMs: 1000 });
    expect((await refusal(plane.deleteTenant({ tenant: 'acme', by: ALICE, reason: 'x' }))).code).toBe('CONFLICT');
    clock.advance(1000);
    await plane.deleteTenant({ tenant: 'acme', by: ALICE, reason: 'x' });
    expect(await plane.tenants()).toEqual([]);
  });

  it('L95.7: of two deletions of one tenant at once, one deletes and the other finds nothing to delete, appending no second row', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1000 }, { newTenant: true });
    await plane.setQuota('acmes', { period: 'monthly' }, { newTenant: true });
    const results = await Promise.allSettled([
      plane.deleteTenant({ tenant: 'acme', by: ALICE, reason: 'first' }),
      plane.deleteTenant({ tenant: 'acme', by: ALICE, reason: 'second' }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected']);
    const second = await refusal(Promise.reject((results[1] as PromiseRejectedResult).reason));
    expect(second.code).toBe('NOT_FOUND');
    expect(second.message).toMatch(/tenant 'acme' does not exist: .*nothing to delete; did you mean 'acmes'\?/);
    const log = await plane.auditLog({ tenant: 'acme', limit: 10 });
    expect(log.rows.map((row) => [row.action, (row.detail as { reason?: string }).reason ?? null])).toEqual([
      ['tenant.delete', 'first'],
      ['quota.set', null],
    ]);
  });

  it('L95.7: refuses a missing reason, a quotaplane chain and a bad operator, naming the field', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'monthly' }, { newTenant: true });
    const blank = await refusal(plane.deleteTenant({ tenant: 'acme', by: ALICE, reason: '  ' }));
    expect(blank).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'reason' } });
    expect(blank.message).toMatch(/reason: is required: say why the tenant is deleted/);
    expect(await refusal(plane.deleteTenant({ tenant: 'acme', by: ALICE } as never))).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'reason' } });
    expect(await refusal(plane.deleteTenant({ tenant: 'quotaplane:plane', by: ALICE, reason: 'x' }))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { field: 'tenant' },
    });
    expect(await refusal(plane.deleteTenant({ tenant: 'acme', by: { actor: '' } as never, reason: 'x' }))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { field: expect.stringMatching(/^by/) },
    });
    expect(await plane.tenants()).toEqual(['acme']);
  });
});

describe('plane.deleteTenant on a store without the capability', () => {
  it('is refused STORE_MISCONFIGURED, naming the capability, and deletes nothing', async () => {
    fixture = await memoryPlane();
    const { store } = fixture;
    await fixture.plane.setQuota('acme', { period: 'monthly' }, { newTenant: true });
    // A third-party store's handles, without the optional deleteTenant.
    const bare = new Proxy(store, {
      get(target, name, receiver) {
        if (name !== 'tenant') return Reflect.get(target, name, receiver) as unknown;
        return (tenant: string) => ({ ...target.tenant(tenant), tenant, deleteTenant: undefined });
      },
    });
    const plane = createPlane({ store: bare, clock: fixture.clock });
    const refused = await refusal(plane.deleteTenant({ tenant: 'acme', by: ALICE, reason: 'left' }));
    expect(refused).toMatchObject({ code: 'STORE_MISCONFIGURED', details: { capability: 'deleteTenant' } });
    expect(refused.message).toMatch(/cannot delete tenants/);
    expect(await fixture.plane.tenants()).toEqual(['acme']);
  });
});
