import { haltReachesRunning, PLANE_HALT_KEY, type Halt } from '../core/halt-scope.js';
import { isReservedTenant, PLANE_AUDIT_TENANT } from '../core/identifiers.js';
import { parseOperator } from '../core/operator.js';
import type { AuditAction } from '../core/audit-actions.js';
import { requireBoolean, requireObject } from '../store/store-arguments.js';
import type { PlaneHaltStore, QuotaStore } from '../store/store.js';
import { haltReach, runningInScope } from './halt-reach.js';
import type { LiftResult, PlaneHaltInput, PlaneHaltResult, PlaneLiftInput } from './plane.js';
import { instantOf, type PlaneContext } from './plane-context.js';
import { requireReason } from './plane-input.js';
import { requireCapability, storeCall, tenantHandle } from './store-call.js';

type PlaneHalts = Required<PlaneHaltStore>;

// The store's plane-wide halt; a store without it cannot enforce one.
function planeHalts(store: QuotaStore): PlaneHalts {
  return requireCapability(store, store.backend, ['getPlaneHalt', 'setPlaneHalt', 'liftPlaneHaltIf'], 'plane-wide halt', 'enforce one');
}

/** `Plane.planeHalt`: the standing plane-wide halt, or `null`. A store without one reads `null`. */
export async function getPlaneHalt(context: PlaneContext): Promise<Halt | null> {
  if (context.store.getPlaneHalt === undefined) return null;
  return storeCall('getPlaneHalt', () => planeHalts(context.store).getPlaneHalt());
}

/**
 * `Plane.haltPlane` (docs/design/rules.md#c49–#c51): throws (or re-throws, replacing) the halt over
 * every tenant of the store, audited as `plane.halt` on the `quotaplane:plane` chain in the store's
 * one transaction, then counts the running runs of every tenant (#c45).
 */
export async function haltPlane(context: PlaneContext, input: PlaneHaltInput): Promise<PlaneHaltResult> {
  const request = requireObject('request', input);
  const reason = requireReason(request.reason);
  const by = parseOperator(request.by, 'by');
  const atMs = instantOf(context, request.atMs);
  const reachesRunning = request.reachesRunning === undefined ? false : requireBoolean('reachesRunning', request.reachesRunning);
  const store = planeHalts(context.store);
  const replaced = await storeCall('getPlaneHalt', () => store.getPlaneHalt());
  const thrown: Halt = reachesRunning ? { scope: { kind: 'plane' }, reason, by, atMs, reachesRunning } : { scope: { kind: 'plane' }, reason, by, atMs };
  const audit = {
    atMs,
    by,
    action: 'plane.halt' satisfies AuditAction,
    subject: PLANE_HALT_KEY,
    detail: { reason, ...(reachesRunning ? { reachesRunning } : {}), replaced: replaced === null ? null : planeHaltDetail(replaced) },
  };
  await storeCall('setPlaneHalt', () => store.setPlaneHalt(thrown, audit, PLANE_AUDIT_TENANT));
  let running = 0;
  const tenants = await storeCall('tenants', () => context.store.tenants());
  for (const tenant of tenants) {
    if (isReservedTenant(tenant)) continue;
    running += await runningInScope(tenantHandle(context.store, tenant), thrown.scope);
  }
  return { scope: PLANE_HALT_KEY, reason, by, atMs, reach: haltReach(thrown), reachesRunning: haltReachesRunning(thrown), running };
}

/**
 * `Plane.liftPlaneHalt` (docs/design/rules.md#c50, #c51): reads the standing plane-wide halt; if
 * none, answers so and writes nothing; else appends the `plane.lift` audit row and removes the halt
 * only if it is still the one read, in one transaction.
 */
export async function liftPlaneHalt(context: PlaneContext, input: PlaneLiftInput): Promise<LiftResult> {
  const request = requireObject('request', input);
  const by = parseOperator(request.by, 'by');
  const atMs = instantOf(context, request.atMs);
  const store = planeHalts(context.store);
  const standing = await storeCall('getPlaneHalt', () => store.getPlaneHalt());
  if (standing === null) return { wasStanding: false, removed: false };
  const audit = { atMs, by, action: 'plane.lift' satisfies AuditAction, subject: PLANE_HALT_KEY, detail: planeHaltDetail(standing) };
  const removed = await storeCall('liftPlaneHaltIf', () => store.liftPlaneHaltIf(standing, audit, PLANE_AUDIT_TENANT));
  return { wasStanding: true, removed };
}

// The audit detail that names a plane-wide halt, as a tenant's lift names its halt (plane/halts.ts).
function planeHaltDetail(row: Halt): Record<string, unknown> {
  return {
    reason: row.reason,
    thrownBy: row.by.actor,
    thrownBasis: row.by.basis,
    thrownAtMs: row.atMs,
    ...(row.reachesRunning === true ? { reachesRunning: true } : {}),
  };
}
