import { parseOperator } from '../core/operator.js';
import { applyPlanePatch, parsePlaneCeiling, planeAgentLimit, type PlaneCeiling } from '../core/plane-ceiling.js';
import type { PlaneCeilingStore, QuotaStore } from '../store/store.js';
import type { PlaneStatus } from './plane.js';
import { instantOf, type PlaneContext } from './plane-context.js';
import { LIBRARY_OPERATOR } from './quota.js';
import { requireCapability, storeCall, tenantHandle } from './store-call.js';
import { getPlaneHalt } from './plane-halt.js';
import type { AuditAction } from '../core/audit-actions.js';
import { isReservedTenant, PLANE_AUDIT_TENANT } from '../core/identifiers.js';

type PlaneStore = Required<PlaneCeilingStore>;

// The store's plane-wide methods; a store without them cannot enforce a plane-wide ceiling.
function planeStore(store: QuotaStore): PlaneStore {
  return requireCapability(store, store.backend, ['getPlaneCeiling', 'setPlaneCeiling', 'planeUsage'], 'plane-wide ceiling', 'enforce one');
}

/** `Plane.getPlaneCeiling`: the stored plane-wide ceiling, or `null`. A store without one reads `null`. */
export async function getPlaneCeiling(context: PlaneContext): Promise<PlaneCeiling | null> {
  if (context.store.getPlaneCeiling === undefined) return null;
  return storeCall('getPlaneCeiling', () => planeStore(context.store).getPlaneCeiling());
}

async function storePlane(
  context: PlaneContext,
  next: PlaneCeiling,
  by: unknown,
  action: Extract<AuditAction, 'plane.set' | 'plane.update'>,
  extra: Record<string, unknown>,
): Promise<PlaneCeiling> {
  const operator = by === undefined ? LIBRARY_OPERATOR : parseOperator(by, 'by');
  const store = planeStore(context.store);
  const previous = await storeCall('getPlaneCeiling', () => store.getPlaneCeiling());
  const atMs = instantOf(context, undefined);
  await storeCall('setPlaneCeiling', () =>
    store.setPlaneCeiling(next, { atMs, by: operator, action, subject: 'plane', detail: { old: previous, new: next, ...extra } }, PLANE_AUDIT_TENANT),
  );
  if (JSON.stringify(previous?.alertThresholds ?? null) !== JSON.stringify(next.alertThresholds ?? null)) await alertInheritingTenants(context, atMs);
  return next;
}

/**
 * New plane-wide default thresholds fire at once for every tenant that inherits them
 * (docs/design/rules.md#e5): each tenant with a quota that sets none, in a transaction of its own
 * (one transaction over every tenant would hold every tenant's lock at once). A tenant whose turn a
 * crash cut off fires them when its quota is next set; one already fired is never fired again.
 */
async function alertInheritingTenants(context: PlaneContext, atMs: number): Promise<void> {
  for (const tenant of await storeCall('tenants', () => context.store.tenants())) {
    if (isReservedTenant(tenant)) continue;
    const handle = tenantHandle(context.store, tenant);
    if (handle.alertNow === undefined) return;
    // A tenant without a quota inherits the default too (its settles fire it: spend-alerts.ts).
    const quota = await storeCall('getQuota', () => handle.getQuota());
    if (quota !== null && quota.alertThresholds !== undefined) continue;
    await storeCall('alertNow', () => handle.alertNow!(atMs));
  }
}

/**
 * `Plane.setPlaneCeiling`: validates and replaces the plane-wide ceiling, audited as `plane.set`
 * with the old and new ceiling in the `quotaplane:plane` chain, in the store's one transaction.
 */
export async function setPlaneCeiling(context: PlaneContext, ceiling: unknown, by: unknown): Promise<PlaneCeiling> {
  return storePlane(context, parsePlaneCeiling(ceiling, 'ceiling'), by, 'plane.set', {});
}

/**
 * `Plane.updatePlaneCeiling`: a JSON Merge Patch of the stored ceiling (`applyPlanePatch`),
 * audited as `plane.update` with the old and new ceiling and the patch. The stored ceiling is read
 * just before, as `updateQuota` reads the quota.
 */
export async function updatePlaneCeiling(context: PlaneContext, patch: unknown, by: unknown): Promise<PlaneCeiling> {
  const store = planeStore(context.store);
  const previous = await storeCall('getPlaneCeiling', () => store.getPlaneCeiling());
  const next = applyPlanePatch(previous, patch, 'patch');
  return storePlane(context, next, by, 'plane.update', { patch: patch as Record<string, unknown> });
}

/**
 * `Plane.planeStatus`: the plane-wide ceiling with what it bounds now: every tenant's slots against
 * `maxConcurrentRuns`, and each agent with a plane-wide ceiling, its slots against its limit; and
 * the standing plane-wide halt (docs/design/rules.md#c51).
 */
export async function planeStatus(context: PlaneContext): Promise<PlaneStatus> {
  const ceiling = await getPlaneCeiling(context);
  const standing = await getPlaneHalt(context);
  const halt = standing === null ? null : { reason: standing.reason, by: standing.by, atMs: standing.atMs, reachesRunning: standing.reachesRunning === true };
  const agents = Object.keys(ceiling?.agents ?? {});
  if (context.store.planeUsage === undefined) return { ceiling, running: null, limit: ceiling?.maxConcurrentRuns ?? null, agents: [], halt };
  const usage = await storeCall('planeUsage', () => planeStore(context.store).planeUsage(agents));
  return {
    ceiling,
    running: usage.running,
    limit: ceiling?.maxConcurrentRuns ?? null,
    agents: agents.map((agent) => ({ agent, running: usage.agents[agent] ?? 0, limit: planeAgentLimit(ceiling, agent) ?? null })),
    halt,
  };
}
