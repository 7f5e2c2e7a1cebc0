import { afterEach, describe, expect, it } from 'vitest';

import type { PassGrant } from '../../src/store/types.js';
import { memoryPlane, T0, type MemoryPlane } from './plane-fixtures.js';

const REFUND = 'tool://payments/refund';

let fixture: MemoryPlane;
afterEach(async () => {
  await fixture.close();
});

async function openRun(): Promise<PassGrant> {
  const pass = await fixture.plane.admit({ tenant: 'acme' });
  if (!pass.ok) throw new Error(pass.message);
  return pass;
}

describe('plane.dispatch on SQLite', () => {
  it('a full window refuses RateLimited as a value; a retry of a counted dispatch is not judged again', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    const { run } = await openRun();
    const ceilings = [{ count: 2, windowSeconds: 3600 }];
    expect(await plane.dispatch({ tenant: 'acme', run, grant: REFUND, dispatch: 'k0', ceilings })).toEqual({ ok: true });
    expect(await plane.dispatch({ tenant: 'acme', run, grant: REFUND, dispatch: 'k1', ceilings })).toEqual({ ok: true });

    const refused = await plane.dispatch({ tenant: 'acme', run, grant: REFUND, dispatch: 'k2', ceilings });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.refusal).toMatchObject({ code: 'RateLimited', tenant: 'acme', grant: REFUND, ceiling: ceilings[0], reached: 2 });
    expect(refused.message).toContain('at most 2 per 3600 seconds');

    expect(await plane.dispatch({ tenant: 'acme', run, grant: REFUND, dispatch: 'k0', ceilings })).toEqual({ ok: true });
  });

  it('a dispatch without ceilings is counted against the quota’s configured ceilings for the grant', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'monthly', rateCeilings: { [REFUND]: [{ count: 1, windowSeconds: 60 }] } }, { newTenant: true });
    const { run } = await openRun();
    expect(await plane.dispatch({ tenant: 'acme', run, grant: REFUND, dispatch: 'k0' })).toEqual({ ok: true });
    const refused = await plane.dispatch({ tenant: 'acme', run, grant: REFUND, dispatch: 'k1' });
    expect(refused.ok === false && refused.refusal).toMatchObject({ code: 'RateLimited', ceiling: { count: 1, windowSeconds: 60 }, reached: 1 });
  });

  it('an uncountable window refuses UncountableRate', async () => {
    fixture = await memoryPlane();
    const { run } = await openRun();
    const answer = await fixture.plane.dispatch({ tenant: 'acme', run, grant: REFUND, dispatch: 'k0', ceilings: [{ count: 5, windowSeconds: 0 }] });
    expect(answer.ok === false && answer.refusal).toEqual({ code: 'UncountableRate', grant: REFUND, ceiling: { count: 5, windowSeconds: 0 } });
    expect(answer.ok === false && answer.message).toContain('2678400 seconds');
  });

  it('the tenant’s configured ceilings for the grant apply besides the caller’s (docs/design/decisions.md "Rate ceilings come from configuration and from the caller")', async () => {
    fixture = await memoryPlane();
    const { plane, clock } = fixture;
    await plane.setQuota('acme', { period: 'monthly', rateCeilings: { [REFUND]: [{ count: 1, windowSeconds: 60 }] } }, { newTenant: true });
    const { run } = await openRun();
    expect(await plane.dispatch({ tenant: 'acme', run, grant: REFUND, dispatch: 'k0', ceilings: [] })).toEqual({ ok: true });
    const refused = await plane.dispatch({ tenant: 'acme', run, grant: REFUND, dispatch: 'k1', ceilings: [{ count: 10, windowSeconds: 60 }] });
    expect(refused.ok === false && refused.refusal).toMatchObject({ code: 'RateLimited', ceiling: { count: 1, windowSeconds: 60 }, reached: 1 });
    // Other grants are not bound by it, and once the window has passed the grant has room again.
    expect(await plane.dispatch({ tenant: 'acme', run, grant: 'tool://search/lookup', dispatch: 'k1', ceilings: [] })).toEqual({ ok: true });
    clock.set(T0 + 60_001);
    expect(await plane.dispatch({ tenant: 'acme', run, grant: REFUND, dispatch: 'k1', ceilings: [] })).toEqual({ ok: true });
  });

  it('an exempt (compensating) dispatch is counted but never refused', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    const { run } = await openRun();
    const ceilings = [{ count: 1, windowSeconds: 60 }];
    expect(await plane.dispatch({ tenant: 'acme', run, grant: REFUND, dispatch: 'forward', ceilings })).toEqual({ ok: true });
    expect(await plane.dispatch({ tenant: 'acme', run, grant: REFUND, dispatch: 'undo', ceilings, exempt: true })).toEqual({ ok: true });
    const next = await plane.dispatch({ tenant: 'acme', run, grant: REFUND, dispatch: 'again', ceilings: [{ count: 2, windowSeconds: 60 }] });
    expect(next.ok === false && next.refusal).toMatchObject({ code: 'RateLimited', reached: 2 });
  });

  it('a dispatch for a run that was never admitted is NOT_FOUND', async () => {
    fixture = await memoryPlane();
    await expect(
      fixture.plane.dispatch({ tenant: 'acme', run: 'run_nobody', grant: REFUND, dispatch: 'k0', ceilings: [] }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('a closed store fails closed: admit and dispatch reject with STORE_UNAVAILABLE', async () => {
    fixture = await memoryPlane();
    const { run } = await openRun();
    await fixture.store.close();
    await expect(fixture.plane.admit({ tenant: 'acme' })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(fixture.plane.dispatch({ tenant: 'acme', run, grant: REFUND, dispatch: 'k0', ceilings: [] })).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
    });
  });
});
