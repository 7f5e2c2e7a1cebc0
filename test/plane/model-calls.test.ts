import { afterEach, describe, expect, it } from 'vitest';

import { ALICE, failure, type MemoryPlane, memoryPlane, T0 } from './plane-fixtures.js';

// The plane's model-call verbs on SQLite in this process: what they refuse before the store is
// asked (each naming its field), the ids they make, and the audit row of a change of ceilings
// (docs/design/rules.md#m1–#m13 are the battery's; these are the plane's own).

let fixture: MemoryPlane;
afterEach(async () => {
  await fixture.close();
});

const CEILINGS = { tenant: [{ unit: 'tokens', limit: 1000, windowSeconds: 60 }] } as const;

describe('plane model calls', () => {
  it('refuses bad input naming the field, before the store is asked', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    const base = { tenant: 'acme', model: 'm', inputTokens: 10 };
    const fieldOf = async (promise: Promise<unknown>) => (await failure(promise)).details.field;
    expect(await fieldOf(plane.reserveCall({ ...base, inputTokens: -1 }))).toBe('inputTokens');
    expect(await fieldOf(plane.reserveCall({ ...base, model: '' }))).toBe('model');
    expect(await fieldOf(plane.reserveCall({ ...base, maxOutputTokens: 0 }))).toBe('maxOutputTokens');
    expect(await fieldOf(plane.reserveCall({ ...base, leaseMs: 999 }))).toBe('leaseMs');
    expect(await fieldOf(plane.reserveCall({ ...base, maxMinorUnits: 1.5 }))).toBe('maxMinorUnits');
    expect(await fieldOf(plane.reserveCall({ ...base, minorUnitsPerMillionTokens: -1 }))).toBe('minorUnitsPerMillionTokens');
    expect(await fieldOf(plane.reserveCall({ ...base, minorUnitsPerMillionTokens: Number.MAX_SAFE_INTEGER + 1 }))).toBe('minorUnitsPerMillionTokens');
    expect(await fieldOf(plane.reserveCall({ ...base, minorUnitsPerMillionTokens: 3, maxMinorUnits: 3 }))).toBe('minorUnitsPerMillionTokens');
    expect(await fieldOf(plane.reserveCall({ ...base, endUser: 'a\u202eb' }))).toBe('endUser');
    expect(await fieldOf(plane.reserveCall({ ...base, maxOutput: 5 } as never))).toBe('maxOutput');
    expect(await fieldOf(plane.adjustCall({ tenant: 'acme', callId: 'c', usage: { inputTokens: 1, output: 2 } as never }))).toBe('output');
    expect(await fieldOf(plane.adjustCall({ tenant: 'acme', callId: 'c', usage: { inputTokens: 1, outputTokens: -2 } }))).toBe('usage.outputTokens');
    expect(await fieldOf(plane.setCallCeilings('acme', { tenant: [{ unit: 'tokens', limit: 1 }] } as never, { newTenant: true }))).toBe('ceilings.tenant[0]');
  });

  it('makes a call_<ULID> id when none is given, and answers a retry of the same id with the same reservation', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    const first = await plane.reserveCall({ tenant: 'acme', model: 'm', inputTokens: 10, maxOutputTokens: 20 });
    expect(first.ok && first.call.callId).toMatch(/^call_[0-9A-HJKMNP-TV-Z]{26}$/);
    if (!first.ok) return;
    expect(first.call).toMatchObject({ atMs: T0, reserved: { tokens: 30, requests: 1, minorUnits: 0 }, maxOutputTokens: 20, deadlineMs: T0 + 15 * 60_000 });
    const again = await plane.reserveCall({ tenant: 'acme', model: 'm', callId: first.call.callId, inputTokens: 10, maxOutputTokens: 20 });
    expect(again).toEqual({ ok: true, call: first.call, retried: true });
    expect(await plane.modelCall({ tenant: 'acme', callId: first.call.callId })).toEqual(first.call);
    expect((await plane.openCalls({ tenant: 'acme' })).map((call) => call.callId)).toEqual([first.call.callId]);
  });

  it('M9: a change of ceilings is refused for an unknown tenant, and audited as calls.set with the old and the new', async () => {
    fixture = await memoryPlane();
    const { plane, handle, clock } = fixture;
    expect((await failure(plane.setCallCeilings('acme', CEILINGS))).code).toBe('NOT_FOUND');
    expect(await plane.setCallCeilings('acme', CEILINGS, { by: ALICE, newTenant: true })).toEqual(CEILINGS);
    clock.advance(1000);
    expect(await plane.setCallCeilings('acme', null, { by: ALICE })).toBeNull();
    expect(await plane.getCallCeilings('acme')).toBeNull();
    const rows = await handle('acme').auditLog({ limit: 2 });
    expect(rows.map((row) => [row.action, row.atMs, row.detail])).toEqual([
      ['calls.set', T0 + 1000, { old: CEILINGS, new: null }],
      ['calls.set', T0, { old: null, new: CEILINGS }],
    ]);
  });

  it('an operator\'s release of a stuck call is audited as call.release; a caller\'s own release and a retried one are not', async () => {
    fixture = await memoryPlane();
    const { plane, handle } = fixture;
    await plane.setCallCeilings('acme', CEILINGS, { newTenant: true });
    const own = await plane.reserveCall({ tenant: 'acme', model: 'm', callId: 'own', inputTokens: 1, maxOutputTokens: 1 });
    const stuck = await plane.reserveCall({ tenant: 'acme', model: 'm', callId: 'stuck', inputTokens: 10, maxOutputTokens: 20 });
    expect(own.ok && stuck.ok).toBe(true);
    await plane.releaseCall({ tenant: 'acme', callId: 'own' });
    await plane.releaseCall({ tenant: 'acme', callId: 'stuck', by: ALICE });
    expect((await plane.releaseCall({ tenant: 'acme', callId: 'stuck', by: ALICE })).retried).toBe(true);
    const rows = await handle('acme').auditLog({ limit: 10 });
    expect(rows.map((row) => [row.action, row.subject, row.by, row.detail])).toEqual([
      ['call.release', 'call:stuck', ALICE, { reserved: { tokens: 30, requests: 1, minorUnits: 0 }, model: 'm' }],
      ['calls.set', 'call-ceilings', { actor: 'library', basis: 'asserted' }, { old: null, new: CEILINGS }],
    ]);
  });

  it('M7: a call that never reported is booked at its deadline, so an idle tenant is not refused for an old lost call', async () => {
    fixture = await memoryPlane();
    const { plane, clock } = fixture;
    await plane.setCallCeilings('acme', { tenant: [{ unit: 'tokens', limit: 1000, windowSeconds: 60 }], leaseMs: 60_000 }, { newTenant: true });
    expect((await plane.reserveCall({ tenant: 'acme', model: 'm', callId: 'lost', inputTokens: 100, maxOutputTokens: 800 })).ok).toBe(true);
    // The caller crashed. An hour later the lost call's 900 tokens left the window long ago.
    clock.advance(3_600_000);
    const next = await plane.reserveCall({ tenant: 'acme', model: 'm', callId: 'next', inputTokens: 100, maxOutputTokens: 100 });
    expect(next.ok).toBe(true);
    expect(await plane.modelCall({ tenant: 'acme', callId: 'lost' })).toMatchObject({ status: 'booked', estimated: true, closedAtMs: T0 + 60_000 });
    const [tenant] = await plane.callStandings({ tenant: 'acme' });
    expect(tenant?.ceilings[0]).toMatchObject({ counted: 0, held: 200 });
  });

  it('M7: a call lost at the end of a month counts in that month, not in the month of the next call', async () => {
    fixture = await memoryPlane();
    const { plane, clock } = fixture;
    const lastOfJanuary = Date.UTC(2026, 0, 31, 23, 50);
    clock.advance(lastOfJanuary - T0);
    await plane.setCallCeilings('acme', { tenant: [{ unit: 'minorUnits', limit: 1000, period: 'monthly' }], leaseMs: 300_000 }, { newTenant: true });
    expect((await plane.reserveCall({ tenant: 'acme', model: 'm', callId: 'lost', inputTokens: 1, maxOutputTokens: 1, maxMinorUnits: 900 })).ok).toBe(true);
    clock.advance(2 * 86_400_000);
    expect((await plane.reserveCall({ tenant: 'acme', model: 'm', callId: 'next', inputTokens: 1, maxOutputTokens: 1, maxMinorUnits: 500 })).ok).toBe(true);
  });

  it('M1, M10: an agent\'s ceilings cover its own calls, a group only the models it lists; the standings list the tenant, then subjects in byte order', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setCallCeilings(
      'acme',
      {
        agents: { writer: [{ unit: 'requests', limit: 1, windowSeconds: 60 }] },
        groups: { big: { models: ['m-big'], ceilings: [{ unit: 'requests', limit: 5, windowSeconds: 60 }] } },
        endUsers: { default: [{ unit: 'requests', limit: 5, windowSeconds: 60 }] },
      },
      { newTenant: true },
    );
    const reserve = (callId: string, extra: { agent?: string; model?: string; endUser?: string }) =>
      plane.reserveCall({ tenant: 'acme', callId, model: 'm-small', inputTokens: 1, maxOutputTokens: 1, ...extra });
    expect((await reserve('a1', { agent: 'writer', endUser: 'zoe' })).ok).toBe(true);
    const second = await reserve('a2', { agent: 'writer' });
    expect(second.ok ? null : [second.refusal.code, second.refusal.subject]).toEqual(['CallLimited', 'agent:writer']);
    expect((await reserve('a3', { agent: 'reader', endUser: 'amy' })).ok).toBe(true);
    expect((await reserve('a4', { model: 'm-big' })).ok).toBe(true);
    const standings = await plane.callStandings({ tenant: 'acme' });
    expect(standings.map((standing) => [standing.subject, standing.held.requests])).toEqual([
      ['tenant', 3],
      ['agent:reader', 1],
      ['agent:writer', 1],
      ['group:big', 1],
      ['model:m-big', 1],
      ['model:m-small', 2],
      ['user:amy', 1],
      ['user:zoe', 1],
    ]);
  });

  it('M8: a booking at the first instant of a period counts in that period, one a millisecond before it does not', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    const dayMs = Date.UTC(2026, 0, 20);
    await plane.setCallCeilings('acme', { tenant: [{ unit: 'tokens', limit: 10, period: 'daily' }] }, { newTenant: true });
    for (const [callId, atMs] of [
      ['before', dayMs - 1],
      ['first', dayMs],
    ] as const) {
      expect((await plane.reserveCall({ tenant: 'acme', callId, model: 'm', inputTokens: 1, maxOutputTokens: 1, atMs })).ok).toBe(true);
      await plane.adjustCall({ tenant: 'acme', callId, usage: { inputTokens: 1, outputTokens: 2 }, atMs });
    }
    const [tenant] = await plane.callStandings({ tenant: 'acme', atMs: dayMs + 1000 });
    expect(tenant?.ceilings[0]).toMatchObject({ counted: 3, held: 0, remaining: 7 });
  });

  it('M7: the standings and the open calls book a call past its deadline first, so a lost call does not stay in flight', async () => {
    fixture = await memoryPlane();
    const { plane, clock } = fixture;
    await plane.setCallCeilings('acme', { tenant: [{ unit: 'tokens', limit: 1000, windowSeconds: 3600 }], leaseMs: 60_000 }, { newTenant: true });
    expect((await plane.reserveCall({ tenant: 'acme', model: 'm', callId: 'lost', inputTokens: 100, maxOutputTokens: 100 })).ok).toBe(true);
    clock.advance(60_000);
    expect(await plane.openCalls({ tenant: 'acme' })).toEqual([]);
    const [tenant] = await plane.callStandings({ tenant: 'acme' });
    expect(tenant?.ceilings[0]).toMatchObject({ counted: 200, held: 0 });
    expect(await plane.modelCall({ tenant: 'acme', callId: 'lost' })).toMatchObject({ status: 'booked', estimated: true, closedAtMs: T0 + 60_000 });
  });
});
