import assert from 'node:assert/strict';

import type { QuotaStore } from '../../store/store.js';
import type { WaitOutcome } from '../../store/waiters.js';
import { assertRefused } from './assertions.js';
import { admission, auditEntry, JAN_MS, tokens } from './fixtures.js';
import type { ConformanceGroup } from './types.js';

// Waiting tenants take turns while the plane-wide ceiling binds (docs/concepts/waiting.md): freed
// slots go round robin, weighted per tenant by the plane ceiling's `weights`, so one busy tenant
// cannot starve the others. Cases W12–W13, and W4.1 (W4 under the plane-wide ceiling).

const TERMS = { untilMs: JAN_MS + 3_600_000, leaseMs: 3_600_000 };
const PLANE_CEILING = 6;

interface Round {
  readonly running: { tenant: string; run: string }[];
  readonly grants: Record<string, number>;
}

async function setPlane(store: QuotaStore, plane: Record<string, unknown>, atMs: number): Promise<void> {
  assert.ok(store.setPlaneCeiling !== undefined, 'the store keeps a plane-wide ceiling');
  await store.setPlaneCeiling(plane, auditEntry('plane.set', 'plane', atMs, { plane }), 'fairness-audit');
}

function assertWaiting(outcome: WaitOutcome, what: string): void {
  assert.ok(!outcome.ok && 'waiting' in outcome, `${what}: expected waiting, got ${JSON.stringify(outcome)}`);
}

/**
 * Fills the plane with `holders` (tenant → runs admitted), queues `demand` (tenant → waiters, all of
 * the first tenant's first: the order that would starve the others first come first served), then
 * frees one slot at a time, oldest first, `grants` times, and counts where each freed slot went.
 */
async function race(store: QuotaStore, prefix: string, holders: Record<string, number>, demand: Record<string, number>, grants: number, atMs: number): Promise<Round> {
  const running: { tenant: string; run: string }[] = [];
  let n = 0;
  for (const [tenant, count] of Object.entries(holders)) {
    for (let i = 0; i < count; i += 1) {
      const run = `${prefix}-hold-${(n += 1)}`;
      const pass = await store.tenant(tenant).admit(admission(run, { atMs }));
      assert.ok(pass.ok, `holder ${run} of ${tenant}: ${JSON.stringify(pass)}`);
      running.push({ tenant, run });
    }
  }
  for (const [tenant, count] of Object.entries(demand)) {
    for (let i = 0; i < count; i += 1) {
      assertWaiting(await store.tenant(tenant).admitOrWait(admission(`${prefix}-${tenant}-w${i}`, { atMs: atMs + 1 }), TERMS), `${tenant} waiter ${i}`);
    }
  }
  const grants_: Record<string, number> = Object.fromEntries(Object.keys(demand).map((tenant) => [tenant, 0]));
  const known = new Set(running.map((held) => held.run));
  for (let i = 0; i < grants; i += 1) {
    const oldest = running.shift();
    assert.ok(oldest !== undefined, 'a run to settle');
    await store.tenant(oldest.tenant).settlePass({ run: oldest.run, epoch: 1, spend: tokens(0), concludes: true, atMs: atMs + 10 + i });
    const fresh: { tenant: string; run: string }[] = [];
    for (const tenant of Object.keys(demand)) {
      for (const run of await store.tenant(tenant).runningRuns(1000)) if (!known.has(run)) fresh.push({ tenant, run });
    }
    assert.equal(fresh.length, 1, `settle ${i} granted exactly one waiter, got ${JSON.stringify(fresh)}`);
    const [granted] = fresh as [{ tenant: string; run: string }];
    known.add(granted.run);
    running.push(granted);
    grants_[granted.tenant] = (grants_[granted.tenant] ?? 0) + 1;
    let total = 0;
    for (const tenant of new Set([...Object.keys(holders), ...Object.keys(demand)])) total += await store.tenant(tenant).running();
    assert.equal(total, PLANE_CEILING, `after settle ${i} the plane holds exactly its ceiling`);
  }
  return { running, grants: grants_ };
}

/** W12–W13: each waiting tenant's share of the freed slots, measured. */
export const fairWaiting: ConformanceGroup = {
  title: 'waiting tenants take turns while the plane-wide ceiling binds',
  steps: [
    {
      id: 'W12',
      title: 'three tenants of very different demand under a plane ceiling of 6 each get a third of the freed slots (±1)',
      async run(context) {
        const { store } = context;
        await setPlane(store, { maxConcurrentRuns: PLANE_CEILING }, JAN_MS);
        const round = await race(store, 'eq', { 'fair-a': 4, 'fair-b': 2 }, { 'fair-a': 40, 'fair-b': 12, 'fair-c': 8 }, 24, JAN_MS);
        for (const [tenant, count] of Object.entries(round.grants)) {
          assert.ok(Math.abs(count - 8) <= 1, `${tenant} got ${count} of 24 freed slots, its share is 8 (${JSON.stringify(round.grants)})`);
        }
        // Drain: the waiters still waiting give their places back, then the grants and runs end.
        const held = new Set(round.running.map((entry) => entry.run));
        for (const tenant of ['fair-a', 'fair-b', 'fair-c']) {
          for (let i = 0; i < 40; i += 1) {
            const run = `eq-${tenant}-w${i}`;
            if (!held.has(run)) await store.tenant(tenant).cancelWaiter({ run, atMs: JAN_MS + 100 });
          }
        }
        for (const entry of round.running) {
          const withdrawn = await store.tenant(entry.tenant).cancelWaiter({ run: entry.run, atMs: JAN_MS + 101 });
          if (withdrawn === 'absent') {
            await store.tenant(entry.tenant).settlePass({ run: entry.run, epoch: 1, spend: tokens(0), concludes: true, atMs: JAN_MS + 101 });
          }
        }
        assert.equal((await store.tenant('fair-a').waitQueue({ atMs: JAN_MS + 101 })).depth, 0, 'drained');
      },
    },
    {
      id: 'W13',
      title: 'with weights 2 : 1 : 1 the freed slots go half, a quarter and a quarter (±1)',
      async run(context) {
        const { store } = context;
        const atMs = JAN_MS + 1_000;
        await setPlane(store, { maxConcurrentRuns: PLANE_CEILING, weights: { 'heavy-a': 2 } }, atMs);
        const round = await race(store, 'wt', { 'heavy-a': 6 }, { 'heavy-a': 30, 'light-b': 30, 'light-c': 30 }, 24, atMs);
        const expected: Record<string, number> = { 'heavy-a': 12, 'light-b': 6, 'light-c': 6 };
        for (const [tenant, count] of Object.entries(round.grants)) {
          assert.ok(Math.abs(count - (expected[tenant] ?? 0)) <= 1, `${tenant} got ${count} of 24, its share is ${expected[tenant]} (${JSON.stringify(round.grants)})`);
        }
      },
    },
    {
      id: 'W4.1',
      title: "under a full plane-wide ceiling (or a full one for the run's agent) a hold that would not fit is refused SpentOut at once, never queued",
      async run(context) {
        const { store } = context;
        const atMs = JAN_MS + 2_000;
        // A plane ceiling of 0: every new run is refused TooManyRuns by the plane, whatever the tenant holds.
        await setPlane(store, { maxConcurrentRuns: 0 }, atMs);
        const handle = store.tenant('spend-probe');
        const quota = { period: 'monthly' as const, maxTokensPerPeriod: 100 };
        await handle.setQuota(quota, auditEntry('quota.set', 'quota', atMs, { quota }));
        // A hold over the limit of 100 is refused at once; a hold that fits waits for the plane, so
        // only spend decided the refusal. The waiter is then cancelled, leaving the queue empty.
        const probe = async (prefix: string, at: number, what: string, agent?: { name: string; digest: string }): Promise<void> => {
          const asked = (run: string, maxTokens: number, atOffset: number) =>
            admission(run, { ...(agent === undefined ? {} : { agent }), atMs: at + atOffset, budget: { maxTokens, maxCallTokens: 0 } });
          const tooBig = await handle.admitOrWait(asked(`${prefix}-too-big`, 1_000, 0), TERMS);
          assert.ok(!('waiting' in tooBig), `${what}: a hold of 1 000 under a limit of 100 must not wait, got ${JSON.stringify(tooBig)}`);
          assertRefused(tooBig, 'SpentOut', { tenant: 'spend-probe', limit: 100, requested: 1_000 }, `${what}: a hold beyond the period`);
          assertWaiting(await handle.admitOrWait(asked(`${prefix}-fits`, 50, 1), TERMS), `${what}: a hold of 50 under a limit of 100`);
          assert.equal((await handle.waitQueue({ atMs: at + 1 })).depth, 1, `${what}: only the hold that fits waits`);
          assert.equal(await handle.cancelWaiter({ run: `${prefix}-fits`, atMs: at + 2 }), 'cancelled');
        };
        await probe('sp', atMs + 1, 'a full plane');
        // The same under a full plane-wide ceiling for the run's agent alone.
        await setPlane(store, { agents: { bot: { maxConcurrentRuns: 0 } } }, atMs + 4);
        await probe('sp-bot', atMs + 5, "a full plane ceiling of the run's agent", { name: 'bot', digest: 'a1'.repeat(32) });
      },
    },
  ],
};
