import assert from 'node:assert/strict';

import { isQuotaError } from '../../core/errors.js';
import type { TenantStore } from '../../store/store.js';
import { assertRejectsWith } from './assertions.js';
import { ACME, admission, auditEntry, configure, dispatchKey, GLOBEX, JAN_MS, LEASE_MS, OPS_ALICE, runId, slotQuota, T_MS, tokens } from './fixtures.js';
import type { ConformanceGroup } from './types.js';

type Calls = { [K in Exclude<keyof TenantStore, 'tenant'>]: () => Promise<unknown> };

// Every method of the port, with plausible arguments: after close() each must fail the same way, so
// callers fail closed (docs/design/rules.md#l41). Spelled out as a typed record so a method added
// to the port must be added here.
function everyCall(handle: TenantStore): Calls {
  const run = runId(500);
  const halt = { scope: { kind: 'tenant' }, reason: 'incident 42', by: OPS_ALICE, atMs: JAN_MS } as const;
  return {
    reserve: () => handle.reserve({ run, quota: slotQuota(1), atMs: T_MS }),
    release: () => handle.release(run),
    carry: () => handle.carry(run, '2026-02'),
    reservations: () => handle.reservations(10),
    reserved: () => handle.reserved('2026-01'),
    setHalt: () => handle.setHalt(halt),
    liftHalt: () => handle.liftHalt(halt.scope),
    liftHaltIf: () => handle.liftHaltIf(halt),
    halts: () => handle.halts(),
    settle: () => handle.settle({ run, epoch: 1, period: null, spend: tokens(0), releaseSlot: true, concludes: true }),
    spent: () => handle.spent('2026-01'),
    running: () => handle.running(),
    runningRuns: () => handle.runningRuns(10),
    reserveRate: () =>
      handle.reserveRate({ grant: 'tool://x/y', run, dispatch: dispatchKey(0), ceilings: [], atMs: T_MS, exempt: false }),
    rateRoom: () => handle.rateRoom('tool://x/y', [], T_MS),
    getQuota: () => handle.getQuota(),
    setQuota: () => handle.setQuota({ period: 'monthly' }, auditEntry('quota.set', 'quota', JAN_MS)),
    agentUsage: async () => handle.agentUsage?.(['refund-bot'], '2026-01'),
    admit: () => handle.admit(admission(run)),
    resume: () => handle.resume({ run, atMs: JAN_MS, leaseMs: LEASE_MS }),
    settlePass: () => handle.settlePass({ run, epoch: 1, spend: tokens(0), concludes: true, atMs: JAN_MS }),
    dispatch: () =>
      handle.dispatch({ run, grant: 'tool://x/y', dispatch: dispatchKey(0), ceilings: [], exempt: false, atMs: JAN_MS }),
    heartbeat: () => handle.heartbeat({ run, epoch: 1, atMs: JAN_MS, leaseMs: LEASE_MS }),
    getRun: () => handle.getRun(run),
    runs: () => handle.runs({ limit: 10 }),
    lapsedRuns: () => handle.lapsedRuns({ atMs: JAN_MS, limit: 10 }),
    sweepRun: () => handle.sweepRun({ run, atMs: JAN_MS }),
    unsettledPasses: () => handle.unsettledPasses({ atMs: JAN_MS, limit: 10 }),
    idleHolds: () => handle.idleHolds({ idleSinceMs: JAN_MS, limit: 10 }),
    overranPasses: () => handle.overranPasses({ limit: 10 }),
    releaseRun: () => handle.releaseRun({ run, atMs: JAN_MS, by: OPS_ALICE }),
    appendAudit: () => handle.appendAudit(auditEntry('note', 'tenant', JAN_MS)),
    auditLog: () => handle.auditLog({ limit: 10 }),
    auditChain: () => handle.auditChain({ afterSeq: 0, limit: 10 }),
    admitOrWait: () => handle.admitOrWait(admission(run), { untilMs: JAN_MS + 1000, leaseMs: 1000 }),
    collectWaiter: () => handle.collectWaiter(admission(run), { untilMs: JAN_MS + 1000, leaseMs: 1000 }),
    cancelWaiter: () => handle.cancelWaiter({ run, atMs: JAN_MS }),
    sweepWaiters: () => handle.sweepWaiters({ atMs: JAN_MS }),
    waitQueue: () => handle.waitQueue({ atMs: JAN_MS }),
    prunableRuns: () => handle.prunableRuns({ status: 'concluded', closedAtOrBeforeMs: JAN_MS, scanLimit: 10 }),
    pruneRuns: () => handle.pruneRuns({ runs: [run], closedAtOrBeforeMs: JAN_MS, atMs: JAN_MS, by: OPS_ALICE }),
    pruneRate: () => handle.pruneRate({ atOrBeforeMs: JAN_MS, limit: 10, atMs: JAN_MS, by: OPS_ALICE }),
    countPrunableRate: () => handle.countPrunableRate({ atOrBeforeMs: JAN_MS }),
    deleteTenant: async () => handle.deleteTenant?.({ atMs: JAN_MS, by: OPS_ALICE, reason: 'left' }),
    alertNow: async () => handle.alertNow?.(JAN_MS),
  };
}

/** L41: a closed store answers nothing, and says so with `STORE_UNAVAILABLE` (store.ts `close`). */
export const closedStore: ConformanceGroup = {
  title: 'a closed store fails closed',
  steps: [
    {
      id: 'L41',
      title: 'every call after close() fails with STORE_UNAVAILABLE',
      async run(context) {
        const { store } = context;
        const handle = store.tenant(ACME);
        await configure(handle, slotQuota(1));
        assert.equal((await handle.admit(admission(runId(501)))).ok, true, 'admit before close');
        await store.close();
        for (const [method, call] of Object.entries(everyCall(handle))) {
          await assertRejectsWith(call, 'STORE_UNAVAILABLE', `${method} after close()`);
        }
        await assertRejectsWith(() => store.tenants(), 'STORE_UNAVAILABLE', 'tenants() after close()');
        // A handle asked for after close() may refuse at once or on its first call; either fails closed.
        let late: TenantStore;
        try {
          late = store.tenant(GLOBEX);
        } catch (error) {
          assert.ok(isQuotaError(error, 'STORE_UNAVAILABLE'), `tenant() after close() threw ${String(error)}`);
          return;
        }
        await assertRejectsWith(() => late.running(), 'STORE_UNAVAILABLE', 'running() on a handle taken after close()');
      },
    },
  ],
};
