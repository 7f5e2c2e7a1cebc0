import { normaliseRunId, requireIdentifier, requireTenant } from '../core/identifiers.js';
import { requireAmount } from '../core/amounts.js';
import { requireInstantMs } from '../core/instant.js';
import { parsePlaneCeiling } from '../core/plane-ceiling.js';
import { parseQuota, parseRateCeilings } from '../core/quota.js';
import {
  requireAdmitRequest,
  requireAuditEntry,
  requireDispatchRequest,
  requireHeartbeatRequest,
  requireResumeRequest,
  requireSettlePassRequest,
} from './lifecycle-arguments.js';
import {
  requireAuditChainRequest,
  requireAuditLogOptions,
  requireCancelWaiterRequest,
  requireCountPrunableRateRequest,
  requireIdleHoldsRequest,
  requireLapsedRunsRequest,
  requireOverranPassesRequest,
  requireDeleteTenantRequest,
  requireReleaseRunRequest,
  requireRunListRequest,
  requireSweepRunRequest,
  requireSweepWaitersRequest,
  requireUnsettledPassesRequest,
  requireWaitQueueRequest,
} from './operator-arguments.js';
import { requirePrunableRunsRequest, requirePruneRateRequest, requirePruneRunsRequest } from './retention.js';
import type { DeleteTenantRequest, QuotaStore, TenantStore } from './store.js';
import {
  requireAgentNames,
  requireHalt,
  requirePlaneHalt,
  requireHaltScope,
  requireHaltLift,
  requireLimit,
  requirePeriodKey,
  requireRateReservation,
  requireReserveRequest,
  requireSettlement,
} from './store-arguments.js';
import { requireWaitTerms } from './waiters.js';

/*
 * Where input is checked, once (docs/design/architecture.md "Validation, once"): the adapters
 * check nothing; `validated()` applies the port's input rules (store-arguments.ts,
 * lifecycle-arguments.ts, operator-arguments.ts, retention.ts, waiters.ts) to every method; the
 * plane applies the same functions to its callers' input and so calls the adapter underneath a
 * validated store directly (`unvalidated`), never paying for a second identical pass.
 */

// Each validated store, to the store it wraps.
const RAW = new WeakMap<object, QuotaStore>();

/**
 * `store` with the port's input rules applied to every method of the store and of every tenant
 * handle it answers: each argument is checked and normalised (a bare ULID run id gains `run_`, an
 * agent digest is lowercased, a quota's defaults filled in) before the call reaches `store`, and a
 * bad one throws `QuotaError('INVALID_ARGUMENT')` whose `details.field` names it (`atMs`,
 * `agent.digest`, `halt.scope.kind`) and whose message says what is expected; `store` is then not
 * called at all. The rules are those the plane applies to its own callers, so a third-party store
 * and a direct user of the port get them for free: an adapter need not (and the built-in ones do
 * not) check its arguments. `openStore` answers a validated store. Optional methods stay optional:
 * the wrapper has exactly those `store` has. `apiKeys()`, `webhooks()`, `callMeters()` and
 * `waiterWakes()` are handed through as they are (the API key store checks its own arguments; the
 * plane checks the webhooks' and the model calls'). Idempotent: a store that is already
 * validated is answered as it is. Results and faults pass through unchanged.
 * @example const store = validated(await openMyStore()); await store.tenant('acme').spent('2026-01');
 */
export function validated(store: QuotaStore): QuotaStore {
  if (RAW.has(store)) return store;
  const wrapper: QuotaStore = {
    get backend() {
      return store.backend;
    },
    tenant: (tenant) => validatedTenant(store.tenant(requireTenant('tenant', tenant))),
    tenants: () => store.tenants(),
    ...(store.auditChains === undefined ? {} : { auditChains: () => store.auditChains!() }),
    close: () => store.close(),
    ...(store.hasTenant === undefined ? {} : { hasTenant: async (tenant: string) => store.hasTenant!(requireTenant('tenant', tenant)) }),
    ...(store.apiKeys === undefined ? {} : { apiKeys: () => store.apiKeys!() }),
    ...(store.webhooks === undefined ? {} : { webhooks: () => store.webhooks!() }),
    ...(store.callMeters === undefined ? {} : { callMeters: () => store.callMeters!() }),
    ...(store.waiterWakes === undefined ? {} : { waiterWakes: () => store.waiterWakes!() }),
    ...(store.getPlaneCeiling === undefined ? {} : { getPlaneCeiling: () => store.getPlaneCeiling!() }),
    ...(store.setPlaneCeiling === undefined
      ? {}
      : {
          setPlaneCeiling: async (...[plane, audit, auditTenant]: Parameters<NonNullable<QuotaStore['setPlaneCeiling']>>) =>
            store.setPlaneCeiling!(parsePlaneCeiling(plane, 'plane'), requireAuditEntry('audit', audit), requireTenant('auditTenant', auditTenant)),
        }),
    ...(store.getPlaneHalt === undefined ? {} : { getPlaneHalt: () => store.getPlaneHalt!() }),
    ...(store.eventsAfter === undefined
      ? {}
      : {
          eventsAfter: async (afterSeq: number, limit: number, tenant?: string) =>
            store.eventsAfter!(requireAmount('afterSeq', afterSeq), requireLimit('limit', limit), tenant === undefined ? undefined : requireTenant('tenant', tenant)),
        }),
    ...(store.newestEvents === undefined
      ? {}
      : {
          newestEvents: async (limit: number, tenant?: string) =>
            store.newestEvents!(requireLimit('limit', limit), tenant === undefined ? undefined : requireTenant('tenant', tenant)),
        }),
    ...(store.setPlaneHalt === undefined
      ? {}
      : {
          setPlaneHalt: async (...[halt, audit, auditTenant]: Parameters<NonNullable<QuotaStore['setPlaneHalt']>>) =>
            store.setPlaneHalt!(requirePlaneHalt('halt', halt), requireAuditEntry('audit', audit), requireTenant('auditTenant', auditTenant)),
        }),
    ...(store.liftPlaneHaltIf === undefined
      ? {}
      : {
          liftPlaneHaltIf: async (...[standing, audit, auditTenant]: Parameters<NonNullable<QuotaStore['liftPlaneHaltIf']>>) =>
            store.liftPlaneHaltIf!(requirePlaneHalt('standing', standing), requireAuditEntry('audit', audit), requireTenant('auditTenant', auditTenant)),
        }),
    ...(store.planeUsage === undefined ? {} : { planeUsage: async (agents: readonly string[]) => store.planeUsage!(requireAgentNames('agents', agents)) }),
  };
  RAW.set(wrapper, store);
  return wrapper;
}

/**
 * The store a {@link validated} store wraps, or `store` itself when it is not one. For callers that
 * have already applied the same rules to everything they pass (the plane), and for reading an
 * adapter's own members (`SqliteQuotaStore.migration`).
 */
export function unvalidated(store: QuotaStore): QuotaStore {
  return RAW.get(store) ?? store;
}

// A tenant handle with every argument checked (the async arrows turn a throw into a rejection,
// as the adapters' async methods did).
function validatedTenant(handle: TenantStore): TenantStore {
  return {
    get tenant() {
      return handle.tenant;
    },
    reserve: async (request) => handle.reserve(requireReserveRequest(request)),
    release: async (run) => handle.release(normaliseRunId('run', run)),
    carry: async (run, period) => handle.carry(normaliseRunId('run', run), requirePeriodKey('period', period)),
    reservations: async (limit) => handle.reservations(requireLimit('limit', limit)),
    reserved: async (period) => handle.reserved(requirePeriodKey('period', period)),
    setHalt: async (halt) => handle.setHalt(requireHalt('halt', halt)),
    liftHalt: async (scope, lift) => handle.liftHalt(requireHaltScope('scope', scope), lift === undefined ? undefined : requireHaltLift('lift', lift)),
    liftHaltIf: async (standing, lift) => handle.liftHaltIf(requireHalt('standing', standing), lift === undefined ? undefined : requireHaltLift('lift', lift)),
    halts: () => handle.halts(),
    settle: async (settlement) => handle.settle(requireSettlement('settlement', settlement)),
    spent: async (period) => handle.spent(requirePeriodKey('period', period)),
    running: () => handle.running(),
    runningRuns: async (limit) => handle.runningRuns(requireLimit('limit', limit)),
    reserveRate: async (reservation) => handle.reserveRate(requireRateReservation('reservation', reservation)),
    rateRoom: async (grant, ceilings, atMs) =>
      handle.rateRoom(requireIdentifier('grant', grant), parseRateCeilings(ceilings, 'ceilings'), requireInstantMs('atMs', atMs)),
    getQuota: () => handle.getQuota(),
    setQuota: async (quota, audit) => handle.setQuota(parseQuota(quota, 'quota'), requireAuditEntry('audit', audit)),
    ...(handle.agentUsage === undefined
      ? {}
      : { agentUsage: async (agents: readonly string[], period: string) => handle.agentUsage!(requireAgentNames('agents', agents), requirePeriodKey('period', period)) }),
    admit: async (request) => handle.admit(requireAdmitRequest(request)),
    resume: async (request) => handle.resume(requireResumeRequest(request)),
    settlePass: async (request) => handle.settlePass(requireSettlePassRequest(request)),
    dispatch: async (request) => handle.dispatch(requireDispatchRequest(request)),
    heartbeat: async (request) => handle.heartbeat(requireHeartbeatRequest(request)),
    getRun: async (run) => handle.getRun(normaliseRunId('run', run)),
    runs: async (request) => handle.runs(requireRunListRequest(request)),
    lapsedRuns: async (request) => handle.lapsedRuns(requireLapsedRunsRequest(request)),
    sweepRun: async (request) => handle.sweepRun(requireSweepRunRequest(request)),
    unsettledPasses: async (request) => handle.unsettledPasses(requireUnsettledPassesRequest(request)),
    idleHolds: async (request) => handle.idleHolds(requireIdleHoldsRequest(request)),
    overranPasses: async (request) => handle.overranPasses(requireOverranPassesRequest(request)),
    releaseRun: async (request) => handle.releaseRun(requireReleaseRunRequest(request)),
    admitOrWait: async (request, wait) => handle.admitOrWait(requireAdmitRequest(request), requireWaitTerms(wait)),
    collectWaiter: async (request, wait) => handle.collectWaiter(requireAdmitRequest(request), requireWaitTerms(wait)),
    cancelWaiter: async (request) => handle.cancelWaiter(requireCancelWaiterRequest(request)),
    sweepWaiters: async (request) => handle.sweepWaiters(requireSweepWaitersRequest(request)),
    waitQueue: async (request) => handle.waitQueue(requireWaitQueueRequest(request)),
    prunableRuns: async (request) => handle.prunableRuns(requirePrunableRunsRequest(request)),
    pruneRuns: async (request) => handle.pruneRuns(requirePruneRunsRequest(request)),
    pruneRate: async (request) => handle.pruneRate(requirePruneRateRequest(request)),
    countPrunableRate: async (request) => handle.countPrunableRate(requireCountPrunableRateRequest(request)),
    appendAudit: async (entry) => handle.appendAudit(requireAuditEntry('entry', entry)),
    auditLog: async (options) => handle.auditLog(requireAuditLogOptions(options)),
    auditChain: async (request) => handle.auditChain(requireAuditChainRequest(request)),
    ...(handle.alertNow === undefined ? {} : { alertNow: async (atMs: number) => handle.alertNow!(requireInstantMs('atMs', atMs)) }),
    ...(handle.deleteTenant === undefined
      ? {}
      : { deleteTenant: async (request: DeleteTenantRequest) => handle.deleteTenant!(requireDeleteTenantRequest(request)) }),
  };
}
