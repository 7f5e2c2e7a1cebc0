import type { QuotaStore, TenantStore } from '../store/store.js';
import type { RateOutcome } from '../store/types.js';

const ADMITTED: RateOutcome = Object.freeze({ ok: true });

/**
 * A deliberately broken store for the battery's self-test (docs/design/rules.md#c43): every call
 * goes to `inner` except `reserveRate` and `rateRoom`, which answer ok without asking it, as a rate
 * counter that "yields under load" would. The conformance groups "a full window refuses", "a window
 * boundary does not double the ceiling" and "two runs making the same call each count" must fail
 * against it; if one passes, that group cannot tell a real counter from none. Closing the wrapper
 * closes `inner`.
 */
export function alwaysAdmitRateStore(inner: QuotaStore): QuotaStore {
  return {
    backend: `${inner.backend} (rate always admits)`,
    tenant: (tenant) => alwaysAdmitRateTenant(inner.tenant(tenant)),
    tenants: () => inner.tenants(),
    close: () => inner.close(),
  };
}

// Spelled out method by method rather than through a Proxy, so a method added to the port fails
// to compile here instead of silently reaching the inner store unwrapped.
function alwaysAdmitRateTenant(inner: TenantStore): TenantStore {
  return {
    tenant: inner.tenant,
    reserve: (request) => inner.reserve(request),
    release: (run) => inner.release(run),
    carry: (run, period) => inner.carry(run, period),
    reservations: (limit) => inner.reservations(limit),
    reserved: (period) => inner.reserved(period),
    setHalt: (halt) => inner.setHalt(halt),
    liftHalt: (scope) => inner.liftHalt(scope),
    liftHaltIf: (standing) => inner.liftHaltIf(standing),
    halts: () => inner.halts(),
    settle: (settlement) => inner.settle(settlement),
    spent: (period) => inner.spent(period),
    running: () => inner.running(),
    runningRuns: (limit) => inner.runningRuns(limit),
    reserveRate: async () => ADMITTED,
    rateRoom: async () => ADMITTED,
    getQuota: () => inner.getQuota(),
    setQuota: (quota, audit) => inner.setQuota(quota, audit),
    admit: (request) => inner.admit(request),
    resume: (request) => inner.resume(request),
    settlePass: (request) => inner.settlePass(request),
    dispatch: (request) => inner.dispatch(request),
    heartbeat: (request) => inner.heartbeat(request),
    getRun: (run) => inner.getRun(run),
    runs: (request) => inner.runs(request),
    lapsedRuns: (request) => inner.lapsedRuns(request),
    sweepRun: (request) => inner.sweepRun(request),
    unsettledPasses: (request) => inner.unsettledPasses(request),
    idleHolds: (request) => inner.idleHolds(request),
    overranPasses: (request) => inner.overranPasses(request),
    releaseRun: (request) => inner.releaseRun(request),
    appendAudit: (entry) => inner.appendAudit(entry),
    auditLog: (options) => inner.auditLog(options),
    auditChain: (request) => inner.auditChain(request),
    admitOrWait: (request, wait) => inner.admitOrWait(request, wait),
    collectWaiter: (request, wait) => inner.collectWaiter(request, wait),
    cancelWaiter: (request) => inner.cancelWaiter(request),
    sweepWaiters: (request) => inner.sweepWaiters(request),
    waitQueue: (request) => inner.waitQueue(request),
    prunableRuns: (request) => inner.prunableRuns(request),
    pruneRuns: (request) => inner.pruneRuns(request),
    pruneRate: (request) => inner.pruneRate(request),
    countPrunableRate: (request) => inner.countPrunableRate(request),
  };
}
