import { afterEach, describe, expect, it } from 'vitest';

import { liftedHaltOf } from '../../src/plane/lifted-halts.js';
import { ALICE, BOB, HOUR_MS, memoryPlane, T0, type MemoryPlane } from './plane-fixtures.js';

// The plane's read-only listings, which only the HTTP and client suites reached: lifted
// halts read back from the audit log, slot holders, holds and the audit log, each paged by one
// row more than the page.

let fixture: MemoryPlane | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe('liftedHalts', () => {
  it('reads each lift back: scope, who lifted it and when, and the halt it ended', async () => {
    fixture = await memoryPlane();
    const { plane, clock } = fixture;
    await plane.halt({ tenant: 'acme', scope: 'agent:clerk', reason: 'looping', by: BOB, newTenant: true });
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 42', by: ALICE });
    clock.advance(HOUR_MS);
    await plane.lift({ tenant: 'acme', scope: 'agent:clerk', by: ALICE });
    clock.advance(HOUR_MS);
    await plane.lift({ tenant: 'acme', scope: 'tenant', by: BOB });

    const page = await plane.liftedHalts({ tenant: 'acme' });
    expect(page).toEqual({
      truncated: false,
      lifted: [
        { scope: 'tenant', by: BOB, liftedAtMs: T0 + 2 * HOUR_MS, reason: 'incident 42', thrownBy: ALICE, thrownAtMs: T0, seq: 4 },
        { scope: 'agent:clerk', by: ALICE, liftedAtMs: T0 + HOUR_MS, reason: 'looping', thrownBy: BOB, thrownAtMs: T0, seq: 3 },
      ],
    });
    const first = await plane.liftedHalts({ tenant: 'acme', limit: 1 });
    expect(first.truncated).toBe(true);
    expect(first.lifted.map((lift) => lift.scope)).toEqual(['tenant']);
    expect(await plane.liftedHalts({ tenant: 'globex' })).toEqual({ lifted: [], truncated: false });
  });

  it('a hand-written lift row with missing fields reads as empty, asserted and 0 instead of failing', () => {
    const lifted = liftedHaltOf({
      seq: 9,
      atMs: 5,
      by: BOB,
      action: 'lift',
      subject: 'tenant',
      detail: { reason: 7, thrownBy: null, thrownBasis: 'sworn', thrownAtMs: '5' },
      hash: '0'.repeat(64),
    });
    expect(lifted).toEqual({
      scope: 'tenant',
      by: BOB,
      liftedAtMs: 5,
      reason: '',
      thrownBy: { actor: '', basis: 'asserted' },
      thrownAtMs: 0,
      seq: 9,
    });
  });
});

describe('slotHolders, reservations and auditLog', () => {
  it('list slot holders and holds, paged with truncated as a fact', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1_000_000 }, { newTenant: true });
    for (const run of ['run-a', 'run-b']) {
      await plane.admit({ tenant: 'acme', run, budget: { maxTokens: 100, maxCallTokens: 10 } });
    }
    const holders = await plane.slotHolders({ tenant: 'acme' });
    expect(holders.truncated).toBe(false);
    expect(holders.runs).toEqual(['run-a', 'run-b']);
    const one = await plane.slotHolders({ tenant: 'acme', limit: 1 });
    expect(one.truncated).toBe(true);
    expect(one.runs.length).toBe(1);

    const holds = await plane.reservations({ tenant: 'acme' });
    expect(holds.truncated).toBe(false);
    expect(holds.holds.map((hold) => [hold.run, hold.remaining.tokens])).toEqual([
      ['run-a', 110],
      ['run-b', 110],
    ]);
    const cut = await plane.reservations({ tenant: 'acme', limit: 1 });
    expect(cut.truncated).toBe(true);
    expect(cut.holds.length).toBe(1);
  });

  it('lists the newest audit rows first, optionally of one action', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'daily' }, { by: ALICE, newTenant: true });
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident', by: BOB });
    await plane.lift({ tenant: 'acme', scope: 'tenant', by: BOB });
    const all = await plane.auditLog({ tenant: 'acme' });
    expect(all.truncated).toBe(false);
    expect(all.rows.map((row) => row.action)).toEqual(['lift', 'halt', 'quota.set']);
    const halts = await plane.auditLog({ tenant: 'acme', action: 'halt' });
    expect(halts.rows.map((row) => row.seq)).toEqual([2]);
    expect(halts.truncated).toBe(false);
    await plane.halt({ tenant: 'acme', scope: 'agent:clerk', reason: 'looping', by: BOB });
    const oneHalt = await plane.auditLog({ tenant: 'acme', action: 'halt', limit: 1 });
    expect(oneHalt).toMatchObject({ truncated: true });
    expect(oneHalt.rows.map((row) => row.subject)).toEqual(['agent:clerk']);
    await plane.lift({ tenant: 'acme', scope: 'agent:clerk', by: BOB });
    const newest = await plane.auditLog({ tenant: 'acme', limit: 2 });
    expect(newest).toMatchObject({ truncated: true });
    expect(newest.rows.map((row) => row.seq)).toEqual([5, 4]);
    expect(await plane.tenants()).toEqual(['acme']);
  });

  it('names the quota change with who made it, and the old quota beside the new', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { maxConcurrentRuns: 2 } as never, { newTenant: true });
    await plane.setQuota('acme', { period: 'daily', maxConcurrentRuns: 3 }, BOB);
    const rows = (await plane.auditLog({ tenant: 'acme' })).rows;
    expect(rows.map((row) => [row.by, row.subject, row.detail])).toEqual([
      [BOB, 'quota', { old: { period: 'monthly', maxConcurrentRuns: 2 }, new: { period: 'daily', maxConcurrentRuns: 3 } }],
      [{ actor: 'library', basis: 'asserted' }, 'quota', { old: null, new: { period: 'monthly', maxConcurrentRuns: 2 } }],
    ]);
    expect(await plane.getQuota('acme')).toEqual({ period: 'daily', maxConcurrentRuns: 3 });
    expect(await plane.getQuota('globex')).toBeNull();
  });

  it('usage defaults to the period the quota assigns to now, and reads a named one', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    expect((await plane.usage({ tenant: 'acme' })).period).toBe('2026-01');
    await plane.setQuota('acme', { period: 'daily' }, { newTenant: true });
    const today = await plane.usage({ tenant: 'acme' });
    expect(today).toMatchObject({ tenant: 'acme', period: '2026-01-05', running: 0, quota: { period: 'daily' } });
    await plane.admit({ tenant: 'acme', run: 'run-a' });
    await plane.settle({ tenant: 'acme', run: 'run-a', epoch: 1, spend: { tokens: 7, minorUnits: 3 }, concludes: true });
    expect(await plane.usage({ tenant: 'acme', period: '2026-01-05' })).toMatchObject({ spent: { tokens: 7, minorUnits: 3 } });
    expect(await plane.usage({ tenant: 'acme', period: '2026-01-06' })).toMatchObject({ spent: { tokens: 0, minorUnits: 0 } });
  });
});
