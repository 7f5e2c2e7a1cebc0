import { afterEach, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import { ALICE, BOB, HOUR_MS, memoryPlane, observedStore, T0, type MemoryPlane } from './plane-fixtures.js';

const DIGEST = 'ab'.repeat(32);

let fixture: MemoryPlane;
afterEach(async () => {
  await fixture.close();
});

describe('plane halts and lifts on SQLite', () => {
  it('halt answers the standing halt and what it reaches: admission, or admission and running work for a subject', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    const tenant = await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 42', by: ALICE, newTenant: true });
    expect(tenant).toEqual({ scope: 'tenant', reason: 'incident 42', by: ALICE, atMs: T0, reach: 'admission', reachesRunning: false, running: 0 });
    const agent = await plane.halt({ tenant: 'acme', scope: { kind: 'agent', name: 'clerk' }, reason: 'looping', by: ALICE });
    expect(agent).toMatchObject({ scope: 'agent:clerk', reach: 'admission' });
    const revision = await plane.halt({ tenant: 'acme', scope: `revision:${DIGEST.toUpperCase()}`, reason: 'bad deploy', by: ALICE });
    expect(revision).toMatchObject({ scope: `revision:${DIGEST}`, reach: 'admission' });
    const subject = await plane.halt({ tenant: 'acme', scope: 'subject:user:alice', reason: 'laptop lost', by: BOB, atMs: T0 + 5 });
    expect(subject).toEqual({
      scope: 'subject:user:alice',
      reason: 'laptop lost',
      by: BOB,
      atMs: T0 + 5,
      reach: 'admission and running work',
      reachesRunning: true,
      running: 0,
    });

    const standing = await plane.halts('acme');
    expect(standing.map((halt) => [halt.scope, halt.reason])).toEqual([
      [{ kind: 'agent', name: 'clerk' }, 'looping'],
      [{ kind: 'revision', digest: DIGEST }, 'bad deploy'],
      [{ kind: 'subject', principal: 'user:alice' }, 'laptop lost'],
      [{ kind: 'tenant' }, 'incident 42'],
    ]);
  });

  it('the halt audit row is appended before the halt row is written, and names the halt it replaced', async () => {
    fixture = await memoryPlane();
    const { store, clock, handle } = fixture;
    const observed = observedStore(store);
    const plane = createPlane({ store: observed.store, clock });

    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 42', by: ALICE, newTenant: true });
    expect(observed.calls).toEqual(['halts', 'appendAudit', 'setHalt', 'runs']);
    clock.advance(60_000);
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 43', by: BOB });

    const audit = await handle('acme').auditLog({ limit: 10 });
    expect(audit.map(({ seq, atMs, by, action, subject, detail }) => ({ seq, atMs, by, action, subject, detail }))).toEqual([
      {
        seq: 2,
        atMs: T0 + 60_000,
        by: BOB,
        action: 'halt',
        subject: 'tenant',
        detail: {
          reason: 'incident 43',
          replaced: { reason: 'incident 42', thrownBy: 'ops-alice', thrownBasis: 'asserted', thrownAtMs: T0 },
        },
      },
      { seq: 1, atMs: T0, by: ALICE, action: 'halt', subject: 'tenant', detail: { reason: 'incident 42', replaced: null } },
    ]);
    expect((await plane.halts('acme')).map((halt) => halt.reason)).toEqual(['incident 43']);
  });

  it('a lift is audited first, then compare-and-deleted; the audit row names the halt it ended', async () => {
    fixture = await memoryPlane();
    const { store, clock, handle } = fixture;
    const observed = observedStore(store);
    const plane = createPlane({ store: observed.store, clock });
    await plane.halt({ tenant: 'acme', scope: 'agent:clerk', reason: 'agent 12 is looping', by: ALICE, newTenant: true });
    observed.calls.length = 0;
    clock.advance(HOUR_MS);

    const lifted = await plane.lift({ tenant: 'acme', scope: 'agent:clerk', by: BOB });

    expect(lifted).toEqual({ wasStanding: true, removed: true });
    expect(observed.calls).toEqual(['halts', 'appendAudit', 'liftHaltIf']);
    const [row] = await handle('acme').auditLog({ limit: 1, action: 'lift' });
    expect(row).toMatchObject({
      atMs: T0 + HOUR_MS,
      by: BOB,
      action: 'lift',
      subject: 'agent:clerk',
      detail: { reason: 'agent 12 is looping', thrownBy: 'ops-alice', thrownBasis: 'asserted', thrownAtMs: T0 },
    });
    expect(await plane.halts('acme')).toEqual([]);
  });

  it('a lift of a scope that is not standing answers wasStanding false and writes nothing; L95.1 of a tenant that does not exist, NOT_FOUND', async () => {
    fixture = await memoryPlane();
    const { plane, handle } = fixture;
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 42', by: ALICE, newTenant: true });
    const auditBefore = await handle('acme').auditLog({ limit: 100 });

    expect(await plane.lift({ tenant: 'acme', scope: 'agent:clerk', by: BOB })).toEqual({ wasStanding: false, removed: false });
    await expect(plane.lift({ tenant: 'globex', scope: 'tenant', by: BOB })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      details: { field: 'tenant', tenant: 'globex', act: 'lift' },
    });

    expect(await handle('acme').auditLog({ limit: 100 })).toEqual(auditBefore);
    expect(await handle('globex').auditLog({ limit: 100 })).toEqual([]);
    expect((await plane.halts('acme')).map((halt) => halt.reason)).toEqual(['incident 42']);
  });

  it('a halt re-thrown between a lift’s read and its delete stays standing (removed false)', async () => {
    fixture = await memoryPlane();
    const { store, clock } = fixture;
    const other = createPlane({ store, clock });
    // The re-throw lands after the lifting plane read the halt and journaled the lift.
    const observed = observedStore(store, {
      liftHaltIf: async () => {
        await other.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 42, widened', by: BOB, atMs: T0 + 1000 });
      },
    });
    const lifter = createPlane({ store: observed.store, clock });
    await other.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 42', by: ALICE, newTenant: true });

    expect(await lifter.lift({ tenant: 'acme', scope: 'tenant', by: ALICE })).toEqual({ wasStanding: true, removed: false });
    expect((await other.halts('acme')).map((halt) => [halt.reason, halt.by.actor])).toEqual([['incident 42, widened', 'ops-bob']]);
    const refused = await other.admit({ tenant: 'acme' });
    expect(refused.ok === false && refused.refusal.code).toBe('Halted');
  });

  it('D11 a subject halt is reported over tenant and agent halts covering the same run', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.halt({ tenant: 'acme', scope: 'subject:user:alice', reason: 'credential withdrawn: laptop lost', by: BOB, newTenant: true });
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 42', by: ALICE });
    await plane.halt({ tenant: 'acme', scope: 'agent:clerk', reason: 'agent 12 is looping', by: ALICE });

    const answer = await plane.admit({
      tenant: 'acme',
      agent: { name: 'clerk', digest: DIGEST },
      chain: ['user:alice', 'service:orders'],
    });

    expect(answer.ok).toBe(false);
    if (answer.ok) return;
    expect(answer.refusal).toEqual({
      code: 'Halted',
      tenant: 'acme',
      scope: 'subject:user:alice',
      reason: 'credential withdrawn: laptop lost',
      by: BOB,
      haltedAtMs: T0,
    });
    expect(answer.message).toBe(
      "everything acting for 'user:alice' is halted by an operator (tenant 'acme'): credential withdrawn: laptop lost",
    );
    // Without the subject on its chain the same run meets the agent halt, the narrowest left.
    const agentOnly = await plane.admit({ tenant: 'acme', agent: { name: 'clerk', digest: DIGEST }, chain: ['user:bob'] });
    expect(agentOnly.ok === false && agentOnly.refusal).toMatchObject({ code: 'Halted', scope: 'agent:clerk' });
  });

  it('halts are independent rows: lifting one scope leaves the others standing', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 42', by: ALICE, newTenant: true });
    await plane.halt({ tenant: 'acme', scope: 'agent:clerk', reason: 'looping', by: ALICE });
    await plane.lift({ tenant: 'acme', scope: 'agent:clerk', by: ALICE });
    expect((await plane.halts('acme')).map((halt) => halt.reason)).toEqual(['incident 42']);
  });
});
