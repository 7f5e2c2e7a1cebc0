import { decodeTime } from 'ulid';
import { afterEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { DEFAULT_LEASE_MS } from '../../src/plane/create-plane.js';
import { memoryPlane, T0, type MemoryPlane } from './plane-fixtures.js';

// Run-lifecycle details of the plane that mutation testing found unasserted.

let fixture: MemoryPlane | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const GRANT = 'tool://mail/send';

describe('run ids and leases', () => {
  it('an admission at instant 0 gets an id whose time is 1 ms, never the wall clock', async () => {
    fixture = await memoryPlane();
    const pass = await fixture.plane.admit({ tenant: 'acme', atMs: 0 });
    if (!pass.ok) throw new Error('refused');
    expect(decodeTime(pass.run.slice('run_'.length))).toBe(1);
    expect(pass.leaseExpiresAtMs).toBe(DEFAULT_LEASE_MS);
  });

  it('the plane default lease is 60 s, and a plane-wide lease applies to admit, resume and heartbeat', async () => {
    expect(DEFAULT_LEASE_MS).toBe(60_000);
    fixture = await memoryPlane({ leaseMs: 5000 });
    const { plane } = fixture;
    expect(await plane.admit({ tenant: 'acme', run: 'run-a' })).toMatchObject({ leaseExpiresAtMs: T0 + 5000 });
    expect(await plane.heartbeat({ tenant: 'acme', run: 'run-a', epoch: 1, atMs: T0 + 1000 })).toMatchObject({
      ok: true,
      leaseExpiresAtMs: T0 + 6000,
    });
    await plane.settle({ tenant: 'acme', run: 'run-a', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: false });
    expect(await plane.resume({ tenant: 'acme', run: 'run-a', atMs: T0 + 2000 })).toMatchObject({ ok: true, epoch: 2, leaseExpiresAtMs: T0 + 7000 });
    expect(await plane.resume({ tenant: 'acme', run: 'run-a', atMs: T0 + 3000, leaseMs: 100 })).toMatchObject({ epoch: 3, leaseExpiresAtMs: T0 + 3100 });
  });
});

describe('dispatch', () => {
  it('renews the named pass by the plane default when no leaseMs is given, and by leaseMs when it is', async () => {
    fixture = await memoryPlane({ leaseMs: 5000 });
    const { plane, store } = fixture;
    await plane.admit({ tenant: 'acme', run: 'run-a' });
    expect(await plane.dispatch({ tenant: 'acme', run: 'run-a', grant: GRANT, dispatch: 'k1', ceilings: [], epoch: 1, atMs: T0 + 4000 })).toEqual({ ok: true });
    const beat = await store.tenant('acme').unsettledPasses({ atMs: T0 + 8999, limit: 10 });
    expect(beat).toEqual([]);
    expect((await store.tenant('acme').unsettledPasses({ atMs: T0 + 9000, limit: 10 })).map((pass) => pass.leaseExpiresAtMs)).toEqual([T0 + 9000]);
    await plane.dispatch({ tenant: 'acme', run: 'run-a', grant: GRANT, dispatch: 'k2', ceilings: [], epoch: 1, leaseMs: 20_000, atMs: T0 + 5000 });
    expect((await store.tenant('acme').unsettledPasses({ atMs: T0 + 25_000, limit: 10 })).map((pass) => pass.leaseExpiresAtMs)).toEqual([T0 + 25_000]);
  });

  it('without an epoch renews nothing, and leaseMs without an epoch is refused', async () => {
    fixture = await memoryPlane({ leaseMs: 5000 });
    const { plane, store } = fixture;
    await plane.admit({ tenant: 'acme', run: 'run-a' });
    expect(await plane.dispatch({ tenant: 'acme', run: 'run-a', grant: GRANT, dispatch: 'k1', ceilings: [], atMs: T0 + 4000 })).toEqual({ ok: true });
    expect((await store.tenant('acme').unsettledPasses({ atMs: T0 + 5000, limit: 10 })).length).toBe(1);
    const refused = await plane
      .dispatch({ tenant: 'acme', run: 'run-a', grant: GRANT, dispatch: 'k2', ceilings: [], leaseMs: 1000 })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(QuotaError);
    expect((refused as QuotaError).details.field).toBe('leaseMs');
  });

  it('is not exempt unless told: a full window refuses the next call, and the refusal has its message', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.admit({ tenant: 'acme', run: 'run-a' });
    const ceilings = [{ count: 1, windowSeconds: 60 }];
    expect(await plane.dispatch({ tenant: 'acme', run: 'run-a', grant: GRANT, dispatch: 'k1', ceilings })).toEqual({ ok: true });
    const refused = await plane.dispatch({ tenant: 'acme', run: 'run-a', grant: GRANT, dispatch: 'k2', ceilings });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.refusal).toMatchObject({ code: 'RateLimited', grant: GRANT });
    expect(refused.message).toContain(GRANT);
  });
});

describe('settle and release answers', () => {
  it('settle answers settled with the receipt, then already-settled for the identical retry', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.admit({ tenant: 'acme', run: 'run-a' });
    const request = { tenant: 'acme', run: 'run-a', epoch: 1, spend: { tokens: 4, minorUnits: 2 }, concludes: true };
    const first = await plane.settle(request);
    expect(first).toEqual({
      ok: true,
      outcome: 'settled',
      receipt: { run: 'run-a', epoch: 1, period: '2026-01', spend: { tokens: 4, minorUnits: 2 }, releaseSlot: true, concludes: true },
      // A run that held no spend has nothing to run over.
      overrun: { tokens: 0, minorUnits: 0 },
    });
    expect(await plane.settle(request)).toEqual({ ...first, outcome: 'already-settled' });
  });

  it('an operator settle is audited with the operator; a runner settle is not', async () => {
    fixture = await memoryPlane();
    const { plane, handle } = fixture;
    await plane.admit({ tenant: 'acme', run: 'run-a' });
    await plane.admit({ tenant: 'acme', run: 'run-b' });
    await plane.settle({ tenant: 'acme', run: 'run-a', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });
    const ops = { actor: 'ops-carol', basis: 'authenticated' } as const;
    await plane.settle({ tenant: 'acme', run: 'run-b', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true, by: ops });
    const rows = await handle('acme').auditLog({ limit: 10 });
    expect(rows.map((row) => [row.action, row.subject, row.by])).toEqual([['run.settle', 'run-b', ops]]);
  });

  it('release gives back the slot and closes the run, audited with the operator', async () => {
    fixture = await memoryPlane();
    const { plane, handle } = fixture;
    await plane.admit({ tenant: 'acme', run: 'run-a' });
    const ops = { actor: 'ops-carol', basis: 'asserted' } as const;
    const released = await plane.release({ tenant: 'acme', run: 'run-a', by: ops, atMs: T0 + 10 });
    expect(released).toMatchObject({ outcome: 'released', run: 'run-a', previousStatus: 'running', slotReleased: true, holdReleased: null });
    expect((await plane.slotHolders({ tenant: 'acme' })).runs).toEqual([]);
    expect((await handle('acme').auditLog({ limit: 1 }))[0]).toMatchObject({ action: 'run.release', subject: 'run-a', by: ops, atMs: T0 + 10 });
  });
});
