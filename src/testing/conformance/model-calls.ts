import assert from 'node:assert/strict';

import { MAX_CALL_AMOUNT, type CallCeilings } from '../../core/call-ceilings.js';
import { isQuotaError } from '../../core/errors.js';
import type { ReserveCallOutcome, ReserveCallRequest } from '../../core/lifecycle/model-calls.js';
import type { CallMeterStore, QuotaStore } from '../../store/store.js';
import { JAN_MS } from './fixtures.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// Model-call ceilings: reserve, then adjust (docs/design/rules.md#m1–#m12). Instants are taken
// from JAN_MS, mid-month, so no window here reaches another month.

function meters(store: QuotaStore): CallMeterStore {
  if (store.callMeters === undefined) throw new Error('the store keeps no model-call books (callMeters)');
  return store.callMeters();
}

const T0 = JAN_MS;
const SECOND = 1000;

function request(callId: string, atMs: number, rest: Partial<ReserveCallRequest> = {}): ReserveCallRequest {
  return { callId, model: 'gpt-test', inputTokens: 100, maxOutputTokens: 100, atMs, ...rest };
}

function assertAdmitted(outcome: ReserveCallOutcome, what: string): void {
  assert.ok(outcome.ok, `${what}: expected an admission, got ${JSON.stringify(outcome)}`);
}

async function rejectsWith(promise: Promise<unknown>, code: string, what: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => isQuotaError(error) && error.code === code, what);
}

const WINDOW: CallCeilings = { tenant: [{ unit: 'tokens', limit: 1000, windowSeconds: 60 }] };

async function setUp(context: ConformanceContext, tenant: string, ceilings: CallCeilings): Promise<CallMeterStore> {
  const store = meters(context.store);
  await store.setCallCeilings(tenant, ceilings, T0);
  return store;
}

/** M2–M6: a sliding window of tokens, reservations in flight, adjust, release and retries. */
export const modelCallWindows: ConformanceGroup = {
  title: 'model calls reserve their worst case in a sliding window, then book what they reported',
  steps: [
    {
      id: 'M3',
      title: 'calls in flight count against each other: the sixth 200-token reservation under 1000 a minute is refused and writes nothing',
      async run(context) {
        const store = await setUp(context, 'acme', WINDOW);
        for (let i = 1; i <= 5; i += 1) assertAdmitted(await store.reserveCall('acme', request(`c${i}`, T0 + i)), `c${i}`);
        const refused = await store.reserveCall('acme', request('c6', T0 + 6));
        assert.equal(refused.ok, false);
        if (refused.ok) return;
        assert.equal(refused.refusal.code, 'CallLimited');
        assert.deepEqual(
          { subject: refused.refusal.subject, counted: 'counted' in refused.refusal ? refused.refusal.counted : -1, held: 'held' in refused.refusal ? refused.refusal.held : -1 },
          { subject: 'tenant', counted: 0, held: 1000 },
        );
        assert.equal(refused.refusal.code === 'CallLimited' && refused.refusal.retryAfter, 'in-flight');
        assert.equal(refused.refusal.code === 'CallLimited' && refused.refusal.retryAtMs, T0 + 1 + 15 * 60_000, 'the earliest deadline of a call in flight');
        assert.equal(await store.call('acme', 'c6'), null, 'a refusal writes nothing');
        const [tenant] = await store.callStandings('acme', T0 + 7, 10);
        assert.deepEqual(tenant?.held, { tokens: 1000, requests: 5, minorUnits: 0 });
      },
    },
    {
      id: 'M5',
      title: 'adjust books the reported usage at its end and gives the rest back; release books nothing',
      async run(context) {
        const store = meters(context.store);
        const ended = await store.adjustCall('acme', { callId: 'c1', usage: { inputTokens: 100, outputTokens: 20 }, atMs: 10 * SECOND + T0 });
        assert.equal(ended.retried, false);
        assert.deepEqual(ended.call.booked, { tokens: 120, requests: 1, minorUnits: 0 });
        assert.equal(ended.call.status, 'booked');
        assert.equal(ended.call.estimated, false);
        const released = await store.releaseCall('acme', { callId: 'c2', atMs: T0 + 10 * SECOND });
        assert.equal(released.call.status, 'released');
        assert.equal(released.call.booked, null);
        const [tenant] = await store.callStandings('acme', T0 + 10 * SECOND, 10);
        assert.deepEqual(tenant?.booked, { tokens: 120, requests: 1, minorUnits: 0 });
        assert.deepEqual(tenant?.held, { tokens: 600, requests: 3, minorUnits: 0 });
        assert.deepEqual(tenant?.ceilings[0], { ceiling: WINDOW.tenant![0], counted: 120, held: 600, remaining: 280 });
      },
    },
    {
      id: 'M6',
      title: 'retries answer the same call; another call under an open call\'s id, or one that ended otherwise, is a conflict; an unknown call is not found',
      async run(context) {
        const store = meters(context.store);
        const again = await store.reserveCall('acme', request('c3', T0 + 11 * SECOND));
        assert.ok(again.ok && again.retried && again.call.atMs === T0 + 3, 'an open call retried the same way answers its first reservation');
        await rejectsWith(store.reserveCall('acme', request('c3', T0 + 11 * SECOND, { inputTokens: 999 })), 'CONFLICT', 'another call under an open call\'s id');
        await rejectsWith(store.reserveCall('acme', request('c3', T0 + 11 * SECOND, { model: 'other' })), 'CONFLICT', 'another model under an open call\'s id');
        const adjustAgain = await store.adjustCall('acme', { callId: 'c1', usage: { inputTokens: 100, outputTokens: 20 }, atMs: T0 + 11 * SECOND });
        assert.equal(adjustAgain.retried, true);
        await rejectsWith(store.adjustCall('acme', { callId: 'c1', usage: { inputTokens: 1, outputTokens: 1 }, atMs: T0 + 11 * SECOND }), 'CONFLICT', 'other usage');
        await rejectsWith(store.releaseCall('acme', { callId: 'c1', atMs: T0 + 11 * SECOND }), 'CONFLICT', 'release of a booked call');
        await rejectsWith(store.adjustCall('acme', { callId: 'c2', atMs: T0 + 11 * SECOND }), 'CONFLICT', 'adjust of a released call');
        assert.equal((await store.releaseCall('acme', { callId: 'c2', atMs: T0 + 11 * SECOND })).retried, true);
        await rejectsWith(store.reserveCall('acme', request('c1', T0 + 11 * SECOND)), 'CONFLICT', 'an ended call id reused');
        await rejectsWith(store.adjustCall('acme', { callId: 'nobody', atMs: T0 + 11 * SECOND }), 'NOT_FOUND', 'unknown call');
      },
    },
    {
      id: 'M2',
      title: 'a window counts usage recorded strictly after its start; retryAtMs is when enough of it leaves',
      async run(context) {
        const store = meters(context.store);
        // Book the three open calls: c3 500 tokens at T0+20 s, c4 200 at T0+30 s, c5 with no usage (its 200 as an estimate) at T0+40 s.
        await store.adjustCall('acme', { callId: 'c3', usage: { inputTokens: 400, outputTokens: 100 }, atMs: T0 + 20 * SECOND });
        await store.adjustCall('acme', { callId: 'c4', usage: { inputTokens: 150, outputTokens: 50 }, atMs: T0 + 30 * SECOND });
        const estimate = await store.adjustCall('acme', { callId: 'c5', atMs: T0 + 40 * SECOND });
        assert.equal(estimate.call.estimated, true);
        assert.deepEqual(estimate.call.booked, { tokens: 200, requests: 1, minorUnits: 0 });
        // Booked in the window ending T0+45 s: 120 (T0+10 s) + 500 + 200 + 200 = 1020, over the limit already.
        const refused = await store.reserveCall('acme', request('c7', T0 + 45 * SECOND));
        assert.ok(!refused.ok && refused.refusal.code === 'CallLimited');
        if (refused.ok || refused.refusal.code !== 'CallLimited') return;
        assert.equal(refused.refusal.counted, 1020);
        assert.equal(refused.refusal.held, 0);
        assert.equal(refused.refusal.retryAfter, 'window');
        // 1020 + 200 − 1000 = 220 must leave: the 120 at T0+10 s and the 500 at T0+20 s, so at T0+80 s.
        assert.equal(refused.refusal.retryAtMs, T0 + 80 * SECOND);
        const early = await store.reserveCall('acme', request('c7', T0 + 80 * SECOND - 1));
        assert.equal(early.ok, false, 'a millisecond before retryAtMs the usage at T0+20 s still counts');
        assertAdmitted(await store.reserveCall('acme', request('c7', T0 + 80 * SECOND)), 'at retryAtMs');
        const [tenant] = await store.callStandings('acme', T0 + 80 * SECOND, 10);
        assert.deepEqual(tenant?.ceilings[0], { ceiling: WINDOW.tenant![0], counted: 400, held: 200, remaining: 400 });
      },
    },
    {
      id: 'M12',
      title: 'a booking at an instant before the meter\'s newest is recorded at the newest, never earlier',
      async run(context) {
        const store = meters(context.store);
        // The meter's newest row is at T0+40 s (c5); a report stamped T0+35 s is recorded there too.
        await store.adjustCall('acme', { callId: 'c7', usage: { inputTokens: 10, outputTokens: 10 }, atMs: T0 + 35 * SECOND });
        // So c7's 20 tokens count until T0+100 s with c5's 200, not until T0+95 s.
        const [at97] = await store.callStandings('acme', T0 + 97 * SECOND, 10);
        assert.equal(at97?.ceilings[0]?.counted, 220);
        const [at100] = await store.callStandings('acme', T0 + 100 * SECOND, 10);
        assert.equal(at100?.ceilings[0]?.counted, 0);
      },
    },
  ],
};

/** M1, M4, M9, M11, M11.1: what covers a call, what can never fit, editing ceilings, money ceilings. */
export const modelCallCoverage: ConformanceGroup = {
  title: 'every ceiling covering a model call counts it: tenant, agent, model, group, end user',
  steps: [
    {
      id: 'M1',
      title: 'a call counts on its tenant, agent, model, each group listing the model and its end user; an override replaces the default per-user ceilings',
      async run(context) {
        const store = await setUp(context, 'acme', {
          models: { 'gpt-big': [{ unit: 'requests', limit: 3, windowSeconds: 60 }] },
          groups: { frontier: { models: ['gpt-big', 'claude-big'], ceilings: [{ unit: 'tokens', limit: 10_000, windowSeconds: 60 }] } },
          endUsers: { default: [{ unit: 'requests', limit: 1, windowSeconds: 60 }], overrides: { vip: [{ unit: 'requests', limit: 2, windowSeconds: 60 }] } },
        });
        const first = await store.reserveCall('acme', request('u1', T0, { model: 'gpt-big', agent: 'writer', endUser: 'alice' }));
        assert.ok(first.ok);
        if (!first.ok) return;
        assert.deepEqual(first.call.subjects, ['tenant', 'agent:writer', 'model:gpt-big', 'group:frontier', 'user:alice']);
        const alice = await store.reserveCall('acme', request('u2', T0 + 1, { model: 'small', endUser: 'alice' }));
        assert.ok(!alice.ok && alice.refusal.subject === 'user:alice', 'the default per-user ceiling: one request a minute each');
        assertAdmitted(await store.reserveCall('acme', request('u3', T0 + 2, { model: 'small', endUser: 'bob' })), 'another user has a meter of their own');
        assertAdmitted(await store.reserveCall('acme', request('u4', T0 + 3, { model: 'gpt-big', endUser: 'vip' })), 'vip 1');
        const model = await store.reserveCall('acme', request('u5', T0 + 4, { model: 'gpt-big', endUser: 'vip' }));
        assertAdmitted(model, 'vip 2 (the override allows two)');
        const third = await store.reserveCall('acme', request('u6', T0 + 5, { model: 'gpt-big' }));
        assert.ok(!third.ok && third.refusal.subject === 'model:gpt-big', 'three gpt-big calls in flight fill its ceiling');
        const vip = await store.reserveCall('acme', request('u7', T0 + 6, { model: 'small', endUser: 'vip' }));
        assert.ok(!vip.ok && vip.refusal.subject === 'user:vip');
      },
    },
    {
      id: 'M4',
      title: 'a worst case above a covering limit is refused at once as never fitting, naming the ceiling, and writes nothing',
      async run(context) {
        const store = meters(context.store);
        await store.setCallCeilings('beta', { tenant: [{ unit: 'tokens', limit: 1000, windowSeconds: 60 }], defaultMaxOutputTokens: 4096 }, T0);
        const refused = await store.reserveCall('beta', { callId: 'n1', model: 'm', inputTokens: 10, atMs: T0 });
        assert.ok(!refused.ok && refused.refusal.code === 'CallNeverFits');
        if (refused.ok) return;
        assert.equal(refused.refusal.requested, 4106, 'the default output cap, since the call declared none');
        assert.equal(refused.refusal.subject, 'tenant');
        assert.equal(await store.call('beta', 'n1'), null);
        assertAdmitted(await store.reserveCall('beta', { callId: 'n2', model: 'm', inputTokens: 10, maxOutputTokens: 990, atMs: T0 }), 'a declared cap that fits');
      },
    },
    {
      id: 'M9',
      title: 'editing a ceiling keeps what its window counted; a ceiling added later finds the usage already booked',
      async run(context) {
        const store = meters(context.store);
        await store.adjustCall('beta', { callId: 'n2', usage: { inputTokens: 10, outputTokens: 690 }, atMs: T0 + SECOND });
        await store.setCallCeilings('beta', { tenant: [{ unit: 'tokens', limit: 800, windowSeconds: 120 }], models: { m: [{ unit: 'tokens', limit: 750, windowSeconds: 30 }] } }, T0 + 2 * SECOND);
        const [tenant, model] = await store.callStandings('beta', T0 + 2 * SECOND, 10);
        assert.equal(tenant?.ceilings[0]?.counted, 700, 'the wider window counts the same usage');
        assert.equal(model?.subject, 'model:m');
        assert.equal(model?.ceilings[0]?.counted, 700, 'the new model ceiling counts the usage booked before it was set');
        const refused = await store.reserveCall('beta', { callId: 'n3', model: 'm', inputTokens: 10, maxOutputTokens: 100, atMs: T0 + 3 * SECOND });
        assert.ok(!refused.ok && refused.refusal.subject === 'tenant' && refused.refusal.code === 'CallLimited');
      },
    },
    {
      id: 'M11',
      title: 'a call covered by a minor-unit ceiling must declare its worst-case cost; money is held and booked like tokens',
      async run(context) {
        const store = await setUp(context, 'gamma', { tenant: [{ unit: 'minorUnits', limit: 500, windowSeconds: 3600 }] });
        await rejectsWith(store.reserveCall('gamma', request('p1', T0)), 'INVALID_ARGUMENT', 'no maxMinorUnits');
        assertAdmitted(await store.reserveCall('gamma', request('p1', T0, { maxMinorUnits: 300 })), 'p1');
        const refused = await store.reserveCall('gamma', request('p2', T0 + 1, { maxMinorUnits: 300 }));
        assert.ok(!refused.ok && refused.refusal.code === 'CallLimited' && refused.refusal.held === 300);
        const ended = await store.adjustCall('gamma', { callId: 'p1', usage: { inputTokens: 10, outputTokens: 10, minorUnits: 40 }, atMs: T0 + 2 });
        assert.deepEqual(ended.call.booked, { tokens: 20, requests: 1, minorUnits: 40 });
        assertAdmitted(await store.reserveCall('gamma', request('p2', T0 + 3, { maxMinorUnits: 300 })), 'p2 once p1 booked 40');
        const noCost = await store.adjustCall('gamma', { callId: 'p2', usage: { inputTokens: 1, outputTokens: 1 }, atMs: T0 + 4 });
        assert.equal(noCost.call.estimated, true, 'usage with no cost books the worst-case cost, marked as an estimate');
        assert.equal(noCost.call.booked?.minorUnits, 300);
      },
    },
    {
      id: 'M11.1',
      title: 'a call priced by its rate reserves the output cap the plane chose at that rate, rounded up; both a cost and a rate is refused',
      async run(context) {
        const store = await setUp(context, 'priced', {
          tenant: [
            { unit: 'tokens', limit: 3000, windowSeconds: 60 },
            { unit: 'minorUnits', limit: 10_000, windowSeconds: 3600 },
          ],
          defaultMaxOutputTokens: 256,
        });
        const rated = { callId: 'r1', model: 'm', inputTokens: 17, minorUnitsPerMillionTokens: 15_000_000, atMs: T0 };
        await assert.rejects(
          store.reserveCall('priced', { ...rated, maxMinorUnits: 10 }),
          (error: unknown) => isQuotaError(error, 'INVALID_ARGUMENT') && error.details.field === 'minorUnitsPerMillionTokens',
          'both maxMinorUnits and minorUnitsPerMillionTokens',
        );
        const first = await store.reserveCall('priced', rated);
        assertAdmitted(first, 'r1');
        if (!first.ok) return;
        assert.equal(first.call.maxOutputTokens, 256, "the tenant's defaultMaxOutputTokens, since the call declared no cap");
        assert.deepEqual(first.call.reserved, { tokens: 273, requests: 1, minorUnits: 4095 }, '273 tokens at 15 000 000 per million');
        const again = await store.reserveCall('priced', { ...rated, atMs: T0 + 1 });
        assert.ok(again.ok && again.retried, 'a retry with the same rate is the same call (M6)');
        const tiny = await store.reserveCall('priced', { callId: 'r2', model: 'm', inputTokens: 0, maxOutputTokens: 1000, minorUnitsPerMillionTokens: 3, atMs: T0 + 2 });
        assert.ok(tiny.ok && tiny.call.reserved.minorUnits === 1, 'a fraction of a minor unit is reserved as one');
        const free = await store.reserveCall('priced', { callId: 'r3', model: 'm', inputTokens: 0, maxOutputTokens: 10, minorUnitsPerMillionTokens: 0, atMs: T0 + 3 });
        assert.ok(free.ok && free.call.reserved.minorUnits === 0, 'a rate of 0 declares a cost of 0');
        const dear = await store.reserveCall('priced', { ...rated, callId: 'r4', minorUnitsPerMillionTokens: 40_000_000, atMs: T0 + 4 });
        assert.ok(!dear.ok && dear.refusal.code === 'CallNeverFits' && dear.refusal.requested === 10_920, 'the chosen cap priced past the money limit');
        const capped = await store.reserveCall('priced', { ...rated, callId: 'r5', minorUnitsPerMillionTokens: Number.MAX_SAFE_INTEGER, atMs: T0 + 5 });
        assert.ok(!capped.ok && capped.refusal.code === 'CallNeverFits' && capped.refusal.requested === MAX_CALL_AMOUNT, 'the cost is capped at MAX_CALL_AMOUNT');
        const ended = await store.adjustCall('priced', { callId: 'r1', usage: { inputTokens: 17, outputTokens: 100 }, atMs: T0 + 6 });
        assert.ok(ended.call.estimated && ended.call.booked?.minorUnits === 4095, 'usage with no cost books the priced worst case, as an estimate');
      },
    },
  ],
};

/** M7, M8: calls that never report, and ceilings per billing period. */
export const modelCallPeriods: ConformanceGroup = {
  title: 'a call that never reports books its worst case; period ceilings reset with the period',
  steps: [
    {
      id: 'M7',
      title: 'an open call past its deadline is booked at its worst case as an estimate by the next decision of its tenant',
      async run(context) {
        const store = await setUp(context, 'acme', { tenant: [{ unit: 'tokens', limit: 1000, windowSeconds: 3600 }], leaseMs: 60_000 });
        assertAdmitted(await store.reserveCall('acme', request('lost', T0)), 'lost');
        assert.deepEqual((await store.openCalls('acme', 10)).map((call) => call.callId), ['lost']);
        assertAdmitted(await store.reserveCall('acme', request('next', T0 + 60_000)), 'next');
        const lost = await store.call('acme', 'lost');
        assert.equal(lost?.status, 'booked');
        assert.equal(lost?.estimated, true);
        assert.deepEqual(lost?.booked, { tokens: 200, requests: 1, minorUnits: 0 });
        await rejectsWith(store.adjustCall('acme', { callId: 'lost', usage: { inputTokens: 1, outputTokens: 1 }, atMs: T0 + 61_000 }), 'CONFLICT', 'a late report');
        assert.equal(await store.expireCalls('acme', T0 + 120_000, 10), 1, 'expireCalls books the other');
        const [tenant] = await store.callStandings('acme', T0 + 120_000, 10);
        assert.equal(tenant?.ceilings[0]?.counted, 400);
        assert.equal(tenant?.ceilings[0]?.held, 0);
      },
    },
    {
      id: 'M8',
      title: 'a period ceiling counts since its UTC period began, is full until the next, and resets then',
      async run(context) {
        const store = await setUp(context, 'daily', { tenant: [{ unit: 'requests', limit: 2, period: 'daily' }] });
        const day = Date.UTC(2026, 0, 20);
        for (const [id, atMs] of [
          ['d1', day + 1000],
          ['d2', day + 2000],
        ] as const) {
          assertAdmitted(await store.reserveCall('daily', request(id, atMs)), id);
          await store.adjustCall('daily', { callId: id, usage: { inputTokens: 1, outputTokens: 1 }, atMs: atMs + 1 });
        }
        const refused = await store.reserveCall('daily', request('d3', day + 3000));
        assert.ok(!refused.ok && refused.refusal.code === 'CallLimited');
        if (refused.ok || refused.refusal.code !== 'CallLimited') return;
        assert.equal(refused.refusal.retryAfter, 'period');
        assert.equal(refused.refusal.retryAtMs, day + 86_400_000);
        assertAdmitted(await store.reserveCall('daily', request('d3', day + 86_400_000)), 'the next day');
      },
    },
    {
      id: 'M13',
      title: 'usage no window or period can reach is pruned and its running total kept, so counts stay exact across months',
      async run(context) {
        const store = await setUp(context, 'monthly', { tenant: [{ unit: 'tokens', limit: 1000, period: 'monthly' }, { unit: 'tokens', limit: 1000, windowSeconds: 86_400 }] });
        const jan = Date.UTC(2026, 0, 31, 12);
        assertAdmitted(await store.reserveCall('monthly', request('j1', jan)), 'j1');
        await store.adjustCall('monthly', { callId: 'j1', usage: { inputTokens: 300, outputTokens: 0 }, atMs: jan });
        // In February the January row is below the prune floor once a booking comes.
        const feb = Date.UTC(2026, 1, 3, 12);
        for (const [id, atMs] of [
          ['f1', feb],
          ['f2', feb + 1000],
        ] as const) {
          assertAdmitted(await store.reserveCall('monthly', request(id, atMs)), id);
          await store.adjustCall('monthly', { callId: id, usage: { inputTokens: 100, outputTokens: 0 }, atMs });
        }
        const [tenant] = await store.callStandings('monthly', feb + 2000, 10);
        assert.deepEqual(tenant?.ceilings.map((entry) => entry.counted), [200, 200], 'February counts its own 200 in the month and in the day');
        assert.equal(tenant?.booked.tokens, 500, 'the running total keeps January');
        assert.equal(await store.call('monthly', 'j1'), null, 'a call ended before the floor is pruned with its rows');
      },
    },
  ],
};
