import assert from 'node:assert/strict';

import { isQuotaError, type QuotaError, type QuotaErrorCode } from '../../core/errors.js';
import type { TenantStore } from '../../store/store.js';
import { assertOk, assertRefused, assertRejectsWith } from './assertions.js';
import { ACME, admission, configure, dispatchKey, JAN_MS, LEASE_MS, OPS_ALICE, runId, tokens } from './fixtures.js';
import { countedDispatches } from './no-writes.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// Leases, fencing and subject halts reaching running work (store.ts `heartbeat`, `dispatch`,
// `resume`; docs/design/rules.md#l42–#l48).

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

/** Runs `action`, asserts it rejects with a `QuotaError` of `code`, and returns the error. */
export async function rejection(action: () => Promise<unknown>, code: QuotaErrorCode, what: string): Promise<QuotaError> {
  try {
    const value = await action();
    assert.fail(`${what}: expected QuotaError ${code}, but it resolved with ${JSON.stringify(value)}`);
  } catch (error) {
    if (isQuotaError(error, code)) return error;
    throw error;
  }
}

/** The registry summary of one run, through `runs` (the port has no single-run summary read). */
export async function summaryOf(handle: TenantStore, run: string) {
  const rows = await handle.runs({ limit: 1000 });
  const row = rows.find((summary) => summary.run === run);
  assert.ok(row !== undefined, `runs() lists ${run}`);
  return row;
}

const GRANT = 'tool://payments/refund';
const R = runId(600);
const W = runId(601);
const CHAIN = ['alice@example.com', 'svc-billing'];

/** L42–L45: a heartbeat renews a pass's lease; fencing refuses stale, settled and unknown passes. */
export const leaseRenewal: ConformanceGroup = {
  title: 'heartbeats renew leases and fence stale passes',
  steps: [
    {
      id: 'L42',
      title: 'a heartbeat renews the lease to atMs + leaseMs and never shortens it',
      async run(context) {
        const handle = acme(context);
        assertOk(await handle.admit(admission(R)), 'admit R');
        const renewed = await handle.heartbeat({ run: R, epoch: 1, atMs: JAN_MS + 30_000, leaseMs: LEASE_MS });
        assert.deepEqual(renewed, { ok: true, run: R, epoch: 1, leaseExpiresAtMs: JAN_MS + 90_000 }, 'the renewed lease');
        const late = await handle.heartbeat({ run: R, epoch: 1, atMs: JAN_MS + 10_000, leaseMs: 1000 });
        assert.deepEqual(late, { ok: true, run: R, epoch: 1, leaseExpiresAtMs: JAN_MS + 90_000 }, 'a late, shorter heartbeat');
        const summary = await summaryOf(handle, R);
        assert.equal(summary.leaseExpiresAtMs, JAN_MS + 90_000, 'runs() shows the renewed lease');
        assert.equal(summary.status, 'running', 'status');
        assert.equal(summary.holdsSlot, true, 'holdsSlot');
      },
    },
    {
      id: 'L43',
      title: 'a lease that lapsed but was not swept is renewed, and the sweep then leaves the run alone',
      async run(context) {
        const handle = acme(context);
        const renewed = await handle.heartbeat({ run: R, epoch: 1, atMs: JAN_MS + 200_000, leaseMs: LEASE_MS });
        assert.deepEqual(renewed, { ok: true, run: R, epoch: 1, leaseExpiresAtMs: JAN_MS + 260_000 }, 'renewed after lapsing');
        assert.deepEqual(await handle.lapsedRuns({ atMs: JAN_MS + 200_001, limit: 10 }), [], 'lapsedRuns');
      },
    },
    {
      id: 'L44',
      title: 'unknown passes are NOT_FOUND; stale, settled and concluded passes are CONFLICT',
      async run(context) {
        const handle = acme(context);
        const at = JAN_MS + 210_000;
        await assertRejectsWith(() => handle.heartbeat({ run: runId(699), epoch: 1, atMs: at, leaseMs: 1 }), 'NOT_FOUND', 'unknown run');
        await assertRejectsWith(() => handle.heartbeat({ run: R, epoch: 9, atMs: at, leaseMs: 1 }), 'NOT_FOUND', 'unknown epoch');
        assertOk(await handle.resume({ run: R, atMs: at, leaseMs: LEASE_MS }), 'resume R (epoch 2)');
        const stale = await rejection(() => handle.heartbeat({ run: R, epoch: 1, atMs: at, leaseMs: 1 }), 'CONFLICT', 'stale epoch');
        assert.equal(stale.details.latestEpoch, 2, 'details.latestEpoch of a stale heartbeat');
        await handle.settlePass({ run: R, epoch: 2, spend: tokens(0), concludes: false, atMs: at + 1 });
        await assertRejectsWith(() => handle.heartbeat({ run: R, epoch: 2, atMs: at + 2, leaseMs: 1 }), 'CONFLICT', 'settled pass');
        assertOk(await handle.resume({ run: R, atMs: at + 3, leaseMs: LEASE_MS }), 'resume R (epoch 3)');
        await handle.settlePass({ run: R, epoch: 3, spend: tokens(0), concludes: true, atMs: at + 4 });
        await assertRejectsWith(() => handle.heartbeat({ run: R, epoch: 3, atMs: at + 5, leaseMs: 1 }), 'CONFLICT', 'concluded run');
      },
    },
    {
      id: 'L45',
      title: 'a dispatch naming its epoch renews the lease, and a stale one is a CONFLICT that counts nothing',
      async run(context) {
        const handle = acme(context);
        const run = runId(602);
        assertOk(await handle.admit(admission(run)), 'admit');
        const at = JAN_MS + 20_000;
        const base = { run, grant: GRANT, ceilings: [{ count: 10, windowSeconds: 3600 }], exempt: false };
        assertOk(await handle.dispatch({ ...base, dispatch: dispatchKey(1), atMs: at, epoch: 1, leaseMs: 120_000 }), 'dispatch with epoch');
        assert.equal((await summaryOf(handle, run)).leaseExpiresAtMs, at + 120_000, 'lease renewed by the dispatch');
        assertOk(await handle.dispatch({ ...base, dispatch: dispatchKey(2), atMs: at + 1 }), 'dispatch without epoch');
        assert.equal((await summaryOf(handle, run)).leaseExpiresAtMs, at + 120_000, 'a dispatch without epoch renews nothing');
        assertOk(await handle.resume({ run, atMs: at + 2, leaseMs: LEASE_MS }), 'resume (epoch 2)');
        await assertRejectsWith(
          () => handle.dispatch({ ...base, dispatch: dispatchKey(3), atMs: at + 3, epoch: 1, leaseMs: LEASE_MS }),
          'CONFLICT',
          'dispatch of a stale pass',
        );
        assert.equal(await countedDispatches(handle, GRANT, at + 3), 2, 'dispatches counted');
        await assertRejectsWith(
          () => handle.dispatch({ ...base, dispatch: dispatchKey(4), atMs: at + 3, leaseMs: LEASE_MS }),
          'INVALID_ARGUMENT',
          'leaseMs without epoch',
        );
      },
    },
  ],
};

/**
 * L46–L48: a subject halt reaches running work; workload halts do not
 * (docs/design/rules.md#l46–#l48).
 */
export const subjectHaltsReachRunningWork: ConformanceGroup = {
  title: 'a subject halt withholds running work',
  steps: [
    {
      id: 'L46',
      title: 'workload halts leave heartbeats, dispatches and resumes alone',
      async run(context) {
        const handle = acme(context);
        await configure(handle, { period: 'monthly', maxConcurrentRuns: 5 });
        assertOk(await handle.admit(admission(W, { chain: CHAIN, agent: { name: 'payments-clerk', digest: 'a'.repeat(64) } })), 'admit W');
        await handle.setHalt({ scope: { kind: 'tenant' }, reason: 'incident 42', by: OPS_ALICE, atMs: JAN_MS + 1 });
        await handle.setHalt({ scope: { kind: 'agent', name: 'payments-clerk' }, reason: 'agent 12 loops', by: OPS_ALICE, atMs: JAN_MS + 1 });
        await handle.setHalt({ scope: { kind: 'subject', principal: 'mallory' }, reason: 'not on this chain', by: OPS_ALICE, atMs: JAN_MS + 1 });
        assertOk(await handle.heartbeat({ run: W, epoch: 1, atMs: JAN_MS + 2, leaseMs: LEASE_MS }), 'heartbeat');
        assertOk(
          await handle.dispatch({ run: W, grant: GRANT, dispatch: dispatchKey(10), ceilings: [], exempt: false, atMs: JAN_MS + 3, epoch: 1, leaseMs: LEASE_MS }),
          'dispatch',
        );
        assert.equal((await handle.getRun(W))?.status, 'running', 'status');
      },
    },
    {
      id: 'L47',
      title: 'under a subject halt on the chain, heartbeat, dispatch and resume answer Withheld, count nothing and mark the run withheld',
      async run(context) {
        const handle = acme(context);
        const haltAtMs = JAN_MS + 10;
        await handle.setHalt({ scope: { kind: 'subject', principal: 'svc-billing' }, reason: 'credential leaked', by: OPS_ALICE, atMs: haltAtMs });
        const expected = { tenant: ACME, subject: 'svc-billing', reason: 'credential leaked' };
        const beat = await handle.heartbeat({ run: W, epoch: 1, atMs: JAN_MS + 20, leaseMs: 600_000 });
        assertRefused(beat, 'Withheld', expected, 'heartbeat');
        const summary = await summaryOf(handle, W);
        assert.equal(summary.status, 'withheld', 'status after the heartbeat');
        assert.equal(summary.statusSinceMs, JAN_MS + 20, 'withheld since the heartbeat');
        assert.equal(summary.leaseExpiresAtMs, JAN_MS + 3 + LEASE_MS, 'the Withheld heartbeat renewed nothing');
        const before = await countedDispatches(handle, GRANT, JAN_MS + 30);
        const dispatched = await handle.dispatch({
          run: W,
          grant: GRANT,
          dispatch: dispatchKey(11),
          ceilings: [],
          exempt: false,
          atMs: JAN_MS + 30,
          epoch: 1,
          leaseMs: LEASE_MS,
        });
        assertRefused(dispatched, 'Withheld', expected, 'dispatch');
        assert.equal(await countedDispatches(handle, GRANT, JAN_MS + 30), before, 'the withheld dispatch was counted');
        assert.equal((await summaryOf(handle, W)).statusSinceMs, JAN_MS + 20, 'still withheld since the first answer');
        // The caller pauses: it settles without concluding, and the run stays withheld.
        const settled = await handle.settlePass({ run: W, epoch: 1, spend: tokens(3), concludes: false, atMs: JAN_MS + 40 });
        assert.equal(settled.outcome, 'settled', 'the pausing settle');
        assert.equal((await handle.getRun(W))?.status, 'withheld', 'status after the pause');
        assertRefused(await handle.resume({ run: W, atMs: JAN_MS + 50, leaseMs: LEASE_MS }), 'Withheld', expected, 'resume');
        assert.equal((await handle.getRun(W))?.lastEpoch, 1, 'the withheld resume opened no pass');
      },
    },
    {
      id: 'L48',
      title: 'after the lift a resume continues the run, which heartbeats again',
      async run(context) {
        const handle = acme(context);
        assert.equal(await handle.liftHalt({ kind: 'subject', principal: 'svc-billing' }), true, 'lift');
        const pass = assertOk(await handle.resume({ run: W, atMs: JAN_MS + 60, leaseMs: LEASE_MS }), 'resume after the lift');
        assert.equal(pass.epoch, 2, 'epoch');
        const summary = await summaryOf(handle, W);
        assert.equal(summary.status, 'running', 'status');
        assert.equal(summary.statusSinceMs, JAN_MS + 60, 'running since the resume');
        assertOk(await handle.heartbeat({ run: W, epoch: 2, atMs: JAN_MS + 70, leaseMs: LEASE_MS }), 'heartbeat of pass 2');
      },
    },
  ],
};
