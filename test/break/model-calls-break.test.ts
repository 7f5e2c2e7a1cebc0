import { afterEach, describe, expect, it } from 'vitest';

import { parseCallCeilingOptions, reserveCeilingCall } from '../../src/adapters/call-ceiling.js';
import { MODEL_ID, PRICES } from '../adapters/ai-sdk-scenarios.js';
import { ceilings, tenantMeter } from '../adapters/call-ceiling-fixtures.js';
import { planeTarget } from '../adapters/run-fixtures.js';
import { failure, type MemoryPlane, memoryPlane, T0 } from '../plane/plane-fixtures.js';

// Defects found by trying to break the model-call ceilings (docs/design/rules.md#m1–#m13) on the
// library over SQLite. Each fix would change what a rule says, so each is left failing
// (`it.fails`) for the lead to decide: the comment above each says what a user meets and the fix
// proposed. When a defect is fixed, its `it.fails` becomes `it` and moves beside the rule's tests.

let fixture: MemoryPlane | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const MINUTE_MS = 60_000;
/** 2026-02-01T00:00:00Z: when the January period of T0 ends. */
const FEBRUARY = Date.UTC(2026, 1, 1);

describe('model-call ceilings: defects left failing', () => {
  // M3: the 'in-flight' retryAtMs looks only at the calls in flight. Here the month already counts
  // 60 of 100 and this call alone would bring it to 130: no room comes before February whatever
  // the calls in flight do, but the caller is told to retry at the open call's deadline (15
  // minutes), and is then refused again until February. Proposed: when the calls in flight leave
  // no room, retryAtMs is the later of the earliest deadline and the instant `counted + requested`
  // fits (when the window's usage leaves, or the period's end).
  it('M3: a period ceiling full without its calls in flight is not retried at their deadline', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setCallCeilings('acme', { tenant: [{ unit: 'tokens', limit: 100, period: 'monthly' }] }, { newTenant: true });
    await plane.reserveCall({ tenant: 'acme', model: 'm', callId: 'a', inputTokens: 10, maxOutputTokens: 50 });
    await plane.adjustCall({ tenant: 'acme', callId: 'a', usage: { inputTokens: 10, outputTokens: 50 } });
    expect((await plane.reserveCall({ tenant: 'acme', model: 'm', callId: 'b', inputTokens: 0, maxOutputTokens: 40 })).ok).toBe(true);
    const refused = await plane.reserveCall({ tenant: 'acme', model: 'm', callId: 'c', inputTokens: 0, maxOutputTokens: 70 });
    expect(refused.ok).toBe(false);
    if (refused.ok || refused.refusal.code !== 'CallLimited') return;
    expect(refused.refusal.retryAtMs).toBe(FEBRUARY);
  });

  // M3: the 'in-flight' retryAtMs is the earliest deadline of any open call of the tenant, even one
  // that holds nothing on the full ceiling. Model y's only request in flight runs 15 minutes, but a
  // call to model x with a 1 s lease makes the refusal say "retry at T0 + 1 s", when y is still full.
  // Proposed: the earliest deadline among the open calls counting on the refusing ceiling's subject
  // (a store read by subject: `dueReservations` has the same shape).
  it("M3: retryAtMs 'in-flight' is the deadline of a call holding the full ceiling, not of any call", async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setCallCeilings('acme', { models: { y: [{ unit: 'requests', limit: 1, windowSeconds: 60 }] } }, { newTenant: true });
    await plane.reserveCall({ tenant: 'acme', model: 'x', callId: 'x1', inputTokens: 1, maxOutputTokens: 1, leaseMs: 1000 });
    await plane.reserveCall({ tenant: 'acme', model: 'y', callId: 'y1', inputTokens: 1, maxOutputTokens: 1 });
    const refused = await plane.reserveCall({ tenant: 'acme', model: 'y', callId: 'y2', inputTokens: 1, maxOutputTokens: 1 });
    expect(refused.ok).toBe(false);
    if (refused.ok || refused.refusal.code !== 'CallLimited') return;
    expect(refused.refusal.retryAtMs).toBe(T0 + 15 * MINUTE_MS);
  });

  // M9 (and M1): a call counts on `group:<name>` only for the groups listing its model when it is
  // reserved, so a group added later counts from then on (M9 says so): judging a group on the sum
  // of its models' meters would make a decision's cost grow with the group.
  it('M9: a group added for a model counts that model\'s calls from then on, not before', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setCallCeilings('acme', {}, { newTenant: true });
    for (let i = 0; i < 5; i += 1) {
      await plane.reserveCall({ tenant: 'acme', model: 'g1', callId: `a${i}`, inputTokens: 1, maxOutputTokens: 1 });
      await plane.adjustCall({ tenant: 'acme', callId: `a${i}`, usage: { inputTokens: 1, outputTokens: 1 } });
    }
    await plane.setCallCeilings('acme', { groups: { frontier: { models: ['g1', 'g2'], ceilings: [{ unit: 'requests', limit: 5, windowSeconds: 60 }] } } });
    const sixth = await plane.reserveCall({ tenant: 'acme', model: 'g1', callId: 'z', inputTokens: 1, maxOutputTokens: 1 });
    expect(sixth.ok).toBe(true);
    const group = (await plane.callStandings({ tenant: 'acme' })).find((standing) => standing.subject === 'group:frontier');
    expect(group?.ceilings[0]).toMatchObject({ counted: 0, held: 1 });
  });

  // M2 with amounts near 2^53: running totals saturate at 2^53 − 1, so after one report that takes a
  // meter there (the plane accepts any safe integer as usage), every later booking adds nothing to
  // the total and every window of that meter counts 0 for good: the tenant's ceilings stop holding.
  // Proposed: refuse (INVALID_ARGUMENT naming the usage member) a report or a reservation that would
  // take any of the call's meters past 2^53 − 1, instead of saturating.
  it('M2: a usage report near 2^53 does not switch the tenant\'s windows off', async () => {
    fixture = await memoryPlane();
    const { plane, clock } = fixture;
    await plane.setCallCeilings('acme', { tenant: [{ unit: 'tokens', limit: 1000, windowSeconds: 60 }] }, { newTenant: true });
    await plane.reserveCall({ tenant: 'acme', model: 'm', callId: 'huge', inputTokens: 1, maxOutputTokens: 1 });
    await plane
      .adjustCall({ tenant: 'acme', callId: 'huge', usage: { inputTokens: Number.MAX_SAFE_INTEGER, outputTokens: 0 } })
      .catch(() => plane.releaseCall({ tenant: 'acme', callId: 'huge' }));
    clock.advance(MINUTE_MS + 1000);
    expect((await plane.reserveCall({ tenant: 'acme', model: 'm', callId: 'b0', inputTokens: 500, maxOutputTokens: 500 })).ok).toBe(true);
    await plane.adjustCall({ tenant: 'acme', callId: 'b0', usage: { inputTokens: 500, outputTokens: 500 } });
    clock.advance(1);
    // The window now holds b0's 1000 tokens: another 1000 must wait.
    expect((await plane.reserveCall({ tenant: 'acme', model: 'm', callId: 'b1', inputTokens: 500, maxOutputTokens: 500 })).ok).toBe(false);
  });

  // The docs (docs/concepts/model-calls.md "Ceilings") say a limit of 0 admits nothing, but a money
  // ceiling of 0 admits any call that declares `maxMinorUnits: 0`, and its adjust then books what
  // it really cost past the 0. Proposed: M4 refuses CallNeverFits under a limit of 0 whatever the
  // worst case (or the docs say a 0 money limit admits calls declared free).
  it('M4: a minor-unit ceiling of 0 admits no call, not even one declared free', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setCallCeilings('acme', { endUsers: { overrides: { mallory: [{ unit: 'minorUnits', limit: 0, period: 'monthly' }] } } }, { newTenant: true });
    const call = await plane.reserveCall({ tenant: 'acme', model: 'm', endUser: 'mallory', inputTokens: 10, maxOutputTokens: 10, maxMinorUnits: 0 });
    expect(call.ok).toBe(false);
  });

  // M6: a reservation retried under the same callId is answered with the first reservation
  // whatever it asks for. A caller that reuses an id for a different call (an id per conversation,
  // a constant) gets two model calls on one reservation: the second's tokens are never held nor
  // booked, and nothing says so. Proposed: a retry answers the same reservation only when it names
  // the same model, agent, end user, inputTokens, maxOutputTokens and maxMinorUnits; otherwise
  // CONFLICT naming callId, as an adjust retried with other usage already is.
  it('M6: a reservation under an open callId asking for something else is a conflict, not the first call again', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.reserveCall({ tenant: 'acme', model: 'small', callId: 'conversation-1', inputTokens: 10, maxOutputTokens: 10 });
    const other = plane.reserveCall({ tenant: 'acme', model: 'large', callId: 'conversation-1', inputTokens: 50_000, maxOutputTokens: 4096 });
    expect((await failure(other)).code).toBe('CONFLICT');
  });
});

describe('model-call adapters: defects left failing', () => {
  // M5: the adapters reserved a priced call that declares no output cap at defaultMaxOutputTokens of
  // their own options (4096), never the tenant's: with the tenant's defaultMaxOutputTokens at 256
  // and a ceiling of 3 000 tokens a minute, every such call of a priced model was CallNeverFits
  // (4 113 tokens), while the same call unpriced fit. Fixed: the adapters send the model's dearest
  // rate (minorUnitsPerMillionTokens) and the plane prices the cap it chooses.
  it("M5: a priced call that declares no output cap is reserved at the tenant's defaultMaxOutputTokens", async () => {
    const target = await planeTarget();
    try {
      await ceilings(target.plane, {
        tenant: [
          { unit: 'tokens', limit: 3000, windowSeconds: 60 },
          { unit: 'minorUnits', limit: 10_000, windowSeconds: 60 },
        ],
        defaultMaxOutputTokens: 256,
      });
      const ceiling = parseCallCeilingOptions({ plane: target.plane, tenant: 'acme', prices: PRICES });
      const call = await reserveCeilingCall(ceiling, MODEL_ID, 17, undefined);
      expect(call.maxOutputTokens).toBe(256);
      // 273 tokens at the dearest rate (15 000 000 per million), rounded up.
      expect((await tenantMeter(target.plane)).held).toEqual({ tokens: 273, requests: 1, minorUnits: Math.ceil((273 * 15_000_000) / 1_000_000) });
    } finally {
      await target.close();
    }
  });
});
