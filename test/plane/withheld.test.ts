import { afterEach, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import type { PassGrant } from '../../src/store/types.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { BACKENDS } from './backends.js';
import { ALICE, BOB, T0, type MemoryPlane } from './plane-fixtures.js';

const tokens = (n: number) => ({ tokens: n, minorUnits: 0 });
const CHAIN = ['alice@example.com', 'svc-billing'];
const GRANT = 'tool://payments/refund';

let fixture: MemoryPlane;
afterEach(async () => {
  await fixture.close();
});

function admitted(answer: { ok: boolean; message?: string }): PassGrant {
  if (!answer.ok) throw new Error(`refused: ${answer.message ?? ''}`);
  return answer as PassGrant;
}

describe.each(BACKENDS)('a subject halt reaches running work on $name (docs/design/decisions.md "Subject halts reach running work")', ({ fresh }) => {
  // A plane on a fresh store of this backend, with a manual clock at T0.
  async function backendPlane(): Promise<MemoryPlane> {
    const shared = await fresh('withheld');
    const store = await openStore(shared.url, shared.options);
    const clock = new ManualClock(T0);
    const plane = createPlane({ store, clock });
    return {
      plane,
      store,
      clock,
      handle: (tenant) => store.tenant(tenant),
      close: async () => {
        await store.close();
        await shared.remove();
      },
    };
  }

  it('withholds a running run at its next heartbeat; the run pauses, and a resume after the lift continues it', async () => {
    fixture = await backendPlane();
    const { plane, clock, handle } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 100_000 }, { newTenant: true });
    const pass = admitted(await plane.admit({ tenant: 'acme', run: 'run-a', chain: CHAIN, budget: { maxTokens: 1000, maxCallTokens: 100 } }));
    clock.advance(1000);
    expect(await plane.heartbeat({ tenant: 'acme', run: 'run-a', epoch: pass.epoch })).toEqual({
      ok: true,
      run: 'run-a',
      epoch: 1,
      leaseExpiresAtMs: T0 + 1000 + 60_000,
    });

    const halt = await plane.halt({ tenant: 'acme', scope: 'subject:svc-billing', reason: 'credential leaked', by: BOB });
    expect(halt.reach).toBe('admission and running work');
    clock.advance(1000);
    const beat = await plane.heartbeat({ tenant: 'acme', run: 'run-a', epoch: 1 });
    expect(beat).toEqual({
      ok: false,
      refusal: { code: 'Withheld', tenant: 'acme', subject: 'svc-billing', scope: 'subject:svc-billing', reason: 'credential leaked' },
      message:
        "tenant 'acme': authority of 'svc-billing' was withdrawn by an operator: credential leaked; " +
        'pause the run (settle without concluding) and resume it after the halt is lifted',
    });
    const dispatched = await plane.dispatch({ tenant: 'acme', run: 'run-a', grant: GRANT, dispatch: 'k1', ceilings: [], epoch: 1 });
    expect(dispatched).toMatchObject({ ok: false, refusal: { code: 'Withheld', subject: 'svc-billing' } });
    expect(await handle('acme').rateRoom(GRANT, [{ count: 0, windowSeconds: 60 }], clock.nowMs())).toMatchObject({ refusal: { reached: 0 } });

    // Attention lists it with the remedy that ends it.
    const attention = await plane.attention({ tenant: 'acme' });
    expect(attention.conditions).toEqual([
      expect.objectContaining({
        kind: 'run.withheld',
        run: 'run-a',
        halt: 'subject:svc-billing',
        sinceMs: T0 + 2000,
        ageMs: 0,
        remedy: expect.objectContaining({ cli: ['quotaplane lift subject:svc-billing --tenant acme', 'quotaplane release run-a --tenant acme'] }),
      }),
    ]);

    // The caller pauses by settling without concluding: the slot goes back, the hold stays.
    await plane.settle({ tenant: 'acme', run: 'run-a', epoch: 1, spend: tokens(30), concludes: false });
    expect((await plane.runs({ tenant: 'acme' })).runs[0]).toMatchObject({ run: 'run-a', status: 'withheld', holdsSlot: false });
    expect(await plane.resume({ tenant: 'acme', run: 'run-a' })).toMatchObject({ ok: false, refusal: { code: 'Withheld' } });

    // Workload halts never reach it; lifting the subject halt lets the resume continue.
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'maintenance', by: ALICE });
    expect(await plane.lift({ tenant: 'acme', scope: 'subject:svc-billing', by: ALICE })).toEqual({ wasStanding: true, removed: true });
    clock.advance(1000);
    const resumed = admitted(await plane.resume({ tenant: 'acme', run: 'run-a' }));
    expect(resumed).toMatchObject({ epoch: 2, hold: tokens(1070) });
    expect(await plane.heartbeat({ tenant: 'acme', run: 'run-a', epoch: 2 })).toMatchObject({ ok: true, epoch: 2 });
    expect(await plane.dispatch({ tenant: 'acme', run: 'run-a', grant: GRANT, dispatch: 'k1', ceilings: [], epoch: 2 })).toEqual({ ok: true });
    expect((await plane.runs({ tenant: 'acme' })).runs[0]).toMatchObject({ status: 'running' });
    expect((await plane.attention({ tenant: 'acme' })).conditions).toEqual([]);
  });

  it('C44 C45 an agent halt thrown with reachesRunning withholds the running runs of that agent, counted in its answer; a run of another agent runs on; the lift lets it heartbeat again', async () => {
    fixture = await backendPlane();
    const { plane, clock } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 5 }, { newTenant: true });
    const clerk = { name: 'clerk', digest: 'c'.repeat(64) };
    admitted(await plane.admit({ tenant: 'acme', run: 'run-c1', agent: clerk }));
    admitted(await plane.admit({ tenant: 'acme', run: 'run-c2', agent: clerk }));
    admitted(await plane.admit({ tenant: 'acme', run: 'run-t', agent: { name: 'triage', digest: 'd'.repeat(64) } }));
    admitted(await plane.admit({ tenant: 'acme', run: 'run-p', agent: clerk }));
    await plane.settle({ tenant: 'acme', run: 'run-p', epoch: 1, spend: tokens(0), concludes: false });

    const halt = await plane.halt({ tenant: 'acme', scope: 'agent:clerk', reason: 'loops on refunds', by: BOB, reachesRunning: true });
    expect(halt).toMatchObject({ scope: 'agent:clerk', reach: 'admission and running work', reachesRunning: true, running: 2 });
    expect((await plane.halts('acme'))[0]).toMatchObject({ scope: { kind: 'agent', name: 'clerk' }, reachesRunning: true });
    clock.advance(1000);
    const beat = await plane.heartbeat({ tenant: 'acme', run: 'run-c1', epoch: 1 });
    expect(beat).toEqual({
      ok: false,
      refusal: { code: 'Withheld', tenant: 'acme', scope: 'agent:clerk', reason: 'loops on refunds' },
      message:
        "tenant 'acme': running work of agent 'clerk' was halted by an operator: loops on refunds; " +
        'pause the run (settle without concluding) and resume it after the halt is lifted',
    });
    expect(await plane.dispatch({ tenant: 'acme', run: 'run-c2', grant: GRANT, dispatch: 'k1', ceilings: [], epoch: 1 })).toMatchObject({
      ok: false,
      refusal: { code: 'Withheld', scope: 'agent:clerk' },
    });
    expect(await plane.resume({ tenant: 'acme', run: 'run-p' })).toMatchObject({ ok: false, refusal: { code: 'Withheld', scope: 'agent:clerk' } });
    expect(await plane.heartbeat({ tenant: 'acme', run: 'run-t', epoch: 1 })).toMatchObject({ ok: true });
    const attention = await plane.attention({ tenant: 'acme' });
    expect(attention.conditions.filter((condition) => condition.kind === 'run.withheld').map((condition) => [condition.run, condition.halt])).toEqual([
      ['run-c1', 'agent:clerk'],
      ['run-c2', 'agent:clerk'],
      ['run-p', 'agent:clerk'],
    ]);

    expect(await plane.lift({ tenant: 'acme', scope: 'agent:clerk', by: ALICE })).toEqual({ wasStanding: true, removed: true });
    clock.advance(1000);
    expect(await plane.heartbeat({ tenant: 'acme', run: 'run-c1', epoch: 1 })).toMatchObject({ ok: true });
    expect(admitted(await plane.resume({ tenant: 'acme', run: 'run-p' }))).toMatchObject({ epoch: 2 });
    expect((await plane.runs({ tenant: 'acme' })).runs.find((run) => run.run === 'run-c1')).toMatchObject({ status: 'running' });
  });

  it('C46 C45 a halt thrown without reachesRunning stops new admissions only: its answer counts the running runs that continue', async () => {
    fixture = await backendPlane();
    const { plane, clock } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 5 }, { newTenant: true });
    const clerk = { name: 'clerk', digest: 'c'.repeat(64) };
    admitted(await plane.admit({ tenant: 'acme', run: 'run-c1', agent: clerk }));
    const halt = await plane.halt({ tenant: 'acme', scope: 'agent:clerk', reason: 'no new refunds', by: BOB });
    expect(halt).toMatchObject({ reach: 'admission', reachesRunning: false, running: 1 });
    clock.advance(1000);
    expect(await plane.heartbeat({ tenant: 'acme', run: 'run-c1', epoch: 1 })).toMatchObject({ ok: true });
    expect(await plane.admit({ tenant: 'acme', run: 'run-c2', agent: clerk })).toMatchObject({ ok: false, refusal: { code: 'Halted', scope: 'agent:clerk' } });
    await expect(plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'x', by: BOB, reachesRunning: 'yes' as unknown as boolean })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { field: 'reachesRunning' },
    });
  });

  it('C49 C50 C51 C45 the plane-wide halt refuses admissions in two tenants, counts their running runs, withholds them when it reaches running work, is audited on quotaplane:plane, and lifts', async () => {
    fixture = await backendPlane();
    const { plane, clock, handle } = fixture;
    admitted(await plane.admit({ tenant: 'acme', run: 'run-a' }));
    admitted(await plane.admit({ tenant: 'globex', run: 'run-g' }));
    const quiet = await plane.haltPlane({ reason: 'provider outage', by: BOB });
    expect(quiet).toEqual({ scope: 'plane', reason: 'provider outage', by: BOB, atMs: T0, reach: 'admission', reachesRunning: false, running: 2 });
    for (const tenant of ['acme', 'globex']) {
      expect(await plane.admit({ tenant, run: `new-${tenant}` })).toMatchObject({ ok: false, refusal: { code: 'Halted', tenant, scope: 'plane', reason: 'provider outage' } });
    }
    expect(await plane.heartbeat({ tenant: 'acme', run: 'run-a', epoch: 1 })).toMatchObject({ ok: true });
    expect((await plane.planeStatus()).halt).toEqual({ reason: 'provider outage', by: BOB, atMs: T0, reachesRunning: false });
    expect(await plane.halts('acme')).toEqual([]);

    clock.advance(1000);
    const reaching = await plane.haltPlane({ reason: 'stop everything', by: BOB, reachesRunning: true });
    expect(reaching).toMatchObject({ reach: 'admission and running work', reachesRunning: true, running: 2 });
    expect(await plane.heartbeat({ tenant: 'globex', run: 'run-g', epoch: 1 })).toMatchObject({
      ok: false,
      refusal: { code: 'Withheld', tenant: 'globex', scope: 'plane', reason: 'stop everything' },
    });
    expect((await plane.attention({ tenant: 'globex' })).conditions).toEqual([
      expect.objectContaining({ kind: 'run.withheld', run: 'run-g', halt: 'plane', remedy: expect.objectContaining({ cli: ['quotaplane lift plane', 'quotaplane release run-g --tenant globex'] }) }),
    ]);
    const audit = await handle('quotaplane:plane').auditLog({ limit: 10 });
    expect(audit.map((row) => [row.action, row.subject, row.detail])).toEqual([
      ['plane.halt', 'plane', { reason: 'stop everything', reachesRunning: true, replaced: { reason: 'provider outage', thrownBy: 'ops-bob', thrownBasis: 'authenticated', thrownAtMs: T0 } }],
      ['plane.halt', 'plane', { reason: 'provider outage', replaced: null }],
    ]);

    clock.advance(1000);
    expect(await plane.liftPlaneHalt({ by: ALICE })).toEqual({ wasStanding: true, removed: true });
    expect(await plane.liftPlaneHalt({ by: ALICE })).toEqual({ wasStanding: false, removed: false });
    expect((await handle('quotaplane:plane').auditLog({ limit: 1 }))[0]).toMatchObject({ action: 'plane.lift', by: ALICE, detail: { reason: 'stop everything', reachesRunning: true } });
    expect(await plane.planeHalt()).toBeNull();
    admitted(await plane.admit({ tenant: 'acme', run: 'after-lift' }));
    expect(await plane.heartbeat({ tenant: 'globex', run: 'run-g', epoch: 1 })).toMatchObject({ ok: true });
  });

  it('a stale epoch is told that a newer pass exists', async () => {
    fixture = await backendPlane();
    const { plane } = fixture;
    admitted(await plane.admit({ tenant: 'acme', run: 'run-b' }));
    admitted(await plane.resume({ tenant: 'acme', run: 'run-b' }));
    await expect(plane.heartbeat({ tenant: 'acme', run: 'run-b', epoch: 1 })).rejects.toMatchObject({
      code: 'CONFLICT',
      details: { latestEpoch: 2 },
      message: expect.stringContaining('a newer pass (epoch 2) of the run exists'),
    });
    await expect(
      plane.dispatch({ tenant: 'acme', run: 'run-b', grant: GRANT, dispatch: 'k', ceilings: [], epoch: 1 }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('validates heartbeat and dispatch lease inputs, naming the field', async () => {
    fixture = await backendPlane();
    const { plane } = fixture;
    await expect(plane.heartbeat({ tenant: 'acme', run: 'run-c', epoch: 0 })).rejects.toMatchObject({ details: { field: 'epoch' } });
    await expect(plane.heartbeat({ tenant: 'acme', run: 'run-c', epoch: 1, leaseMs: 0 })).rejects.toMatchObject({ details: { field: 'leaseMs' } });
    await expect(
      plane.dispatch({ tenant: 'acme', run: 'run-c', grant: GRANT, dispatch: 'k', ceilings: [], leaseMs: 5 }),
    ).rejects.toMatchObject({ details: { field: 'leaseMs' } });
  });
});
