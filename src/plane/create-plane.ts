import { monotonicFactory } from 'ulid';

import { describe } from '../core/amounts.js';
import type { Clock } from '../core/clock.js';
import { invalidArgument } from '../core/errors.js';
import { admit } from './admit.js';
import { attention } from './attention.js';
import { dispatch } from './dispatch.js';
import { halt, halts, lift } from './halts.js';
import { heartbeat } from './heartbeat.js';
import { auditLog, liftedHalts, reservations, runs, slotHolders, tenants } from './operator-listings.js';
import type { Plane, PlaneOptions } from './plane.js';
import type { PlaneContext } from './plane-context.js';
import { pooledRandom } from './pooled-random.js';
import { prune } from './prune.js';
import { requireLeaseMs, requireObject } from '../store/store-arguments.js';
import { requireInstantMs } from '../core/instant.js';
import { DEFAULT_MAX_DECISION_WAIT_MS, requireMaxDecisionWaitMs } from '../store/applied-instant.js';
import { unvalidated } from '../store/validated-store.js';
import { getQuota, setQuota, updateQuota } from './quota.js';
import { rateWindows } from './rate-windows.js';
import { release } from './release.js';
import { deleteTenant } from './delete-tenant.js';
import { resume } from './resume.js';
import { settle } from './settle.js';
import { spendHistory } from './spend-history.js';
import { sweep } from './sweep.js';
import { systemClock } from './system-clock.js';
import { usage } from './usage.js';
import { getPlaneCeiling, planeStatus, setPlaneCeiling, updatePlaneCeiling } from './plane-ceiling.js';
import { getPlaneHalt, haltPlane, liftPlaneHalt } from './plane-halt.js';
import { alerts, events } from './events.js';
import { adjustCall, callStandings, getCallCeilings, modelCall, openCalls, releaseCall, reserveCall, setCallCeilings } from './model-calls.js';
import { verifyAudit } from './verify-audit.js';

/**
 * The lease of a pass when neither the plane nor the call names one: 60 000 ms
 * (docs/design/decisions.md "Passes and leases").
 */
export const DEFAULT_LEASE_MS = 60_000;

/**
 * Builds a {@link Plane} over `store`. `clock` defaults to the wall clock, `leaseMs` to
 * {@link DEFAULT_LEASE_MS} and `maxDecisionWaitMs` to `DEFAULT_MAX_DECISION_WAIT_MS` (2 000).
 * Throws `INVALID_ARGUMENT` naming `store`, `clock`, `leaseMs` or `maxDecisionWaitMs` when one is
 * malformed. Planes are cheap and hold no state but the run-id generator: any number of
 * them, in any number of processes, may share one store.
 *
 * @example
 * const store = await openStore('sqlite:quota.db');
 * const plane = createPlane({ store });
 * const pass = await plane.admit({ tenant: 'acme', budget: { maxTokens: 10_000, maxCallTokens: 500 } });
 * if (!pass.ok) console.log(pass.message);
 */
export function createPlane(options: PlaneOptions): Plane {
  const record = requireObject('options', options);
  const store = record.store as PlaneOptions['store'];
  if (typeof store !== 'object' || store === null || typeof store.tenant !== 'function') {
    throw invalidArgument('store', `must be a QuotaStore (from openStore), got ${describe(store)}`);
  }
  const clock = (record.clock ?? systemClock) as Clock;
  if (typeof clock !== 'object' || clock === null || typeof clock.nowMs !== 'function') {
    throw invalidArgument('clock', `must be an object with nowMs(), got ${describe(clock)}`);
  }
  const leaseMs = record.leaseMs === undefined ? DEFAULT_LEASE_MS : requireLeaseMs('leaseMs', record.leaseMs);
  const maxDecisionWaitMs =
    record.maxDecisionWaitMs === undefined ? DEFAULT_MAX_DECISION_WAIT_MS : requireMaxDecisionWaitMs('maxDecisionWaitMs', record.maxDecisionWaitMs);

  // One monotonic generator per plane: ids made in the same millisecond still sort in the order
  // they were made. Its seed is the admission instant, never the wall clock, so a manual clock
  // drives ids too; 0 is lifted to 1 because the library reads `Date.now()` for a falsy seed.
  const nextUlid = monotonicFactory(pooledRandom());
  const context: PlaneContext = {
    // Validation, once (docs/design/architecture.md): every verb checks its caller's input with the
    // port's own rules and hands the store only what it checked, so a store `validated()` wrapped
    // (what `openStore` answers) would check it all a second time, by the same rules, on every
    // decision. The plane calls the adapter underneath instead. A store given unwrapped (a
    // third-party adapter, a test double, a wrapper of the caller's own) is called as it is.
    store: unvalidated(store),
    clock,
    leaseMs,
    // Read by the store inside the transaction, once its lock is held (docs/design/rules.md#l93).
    applied: { nowMs: () => requireInstantMs('clock.nowMs()', clock.nowMs()), maxWaitMs: maxDecisionWaitMs },
    newRunId: (atMs) => `run_${nextUlid(Math.max(atMs, 1))}`,
  };

  return Object.freeze({
    admit: (input) => admit(context, input),
    settle: (input) => settle(context, input),
    resume: (input) => resume(context, input),
    heartbeat: (input) => heartbeat(context, input),
    dispatch: (input) => dispatch(context, input),
    setQuota: (tenant, quota, by) => setQuota(context, tenant, quota, by),
    getQuota: (tenant) => getQuota(context, tenant),
    updateQuota: (tenant, patch, by) => updateQuota(context, tenant, patch, by),
    usage: (input) => usage(context, input),
    getPlaneCeiling: () => getPlaneCeiling(context),
    setPlaneCeiling: (ceiling, by) => setPlaneCeiling(context, ceiling, by),
    updatePlaneCeiling: (patch, by) => updatePlaneCeiling(context, patch, by),
    planeStatus: () => planeStatus(context),
    halt: (input) => halt(context, input),
    lift: (input) => lift(context, input),
    halts: (tenant) => halts(context, tenant),
    haltPlane: (input) => haltPlane(context, input),
    liftPlaneHalt: (input) => liftPlaneHalt(context, input),
    planeHalt: () => getPlaneHalt(context),
    sweep: (input) => sweep(context, input),
    attention: (input) => attention(context, input),
    release: (input) => release(context, input),
    deleteTenant: (input) => deleteTenant(context, input),
    verifyAudit: (input) => verifyAudit(context, input),
    runs: (input) => runs(context, input),
    slotHolders: (input) => slotHolders(context, input),
    reservations: (input) => reservations(context, input),
    liftedHalts: (input) => liftedHalts(context, input),
    auditLog: (input) => auditLog(context, input),
    events: (input) => events(context, input),
    alerts: (input) => alerts(context, input),
    tenants: () => tenants(context),
    spendHistory: (input) => spendHistory(context, input),
    rateWindows: (input) => rateWindows(context, input),
    prune: (input) => prune(context, input),
    reserveCall: (input) => reserveCall(context, input),
    adjustCall: (input) => adjustCall(context, input),
    releaseCall: (input) => releaseCall(context, input),
    modelCall: (input) => modelCall(context, input),
    openCalls: (input) => openCalls(context, input),
    getCallCeilings: (tenant) => getCallCeilings(context, tenant),
    setCallCeilings: (tenant, ceilings, options) => setCallCeilings(context, tenant, ceilings, options),
    callStandings: (input) => callStandings(context, input),
  } satisfies Plane);
}
