import { haltReachesRunning, haltScopeKey, type Halt } from '../core/halt-scope.js';
import { requireCustomerTenant, requireTenant } from '../core/identifiers.js';
import { parseOperator } from '../core/operator.js';
import type { HaltInput, HaltResult, LiftInput, LiftResult } from './plane.js';
import { haltReach, runningInScope } from './halt-reach.js';
import { requireBoolean } from '../store/store-arguments.js';
import { instantOf, type PlaneContext } from './plane-context.js';
import { parseScope, requireReason } from './plane-input.js';
import { requireObject } from '../store/store-arguments.js';
import { storeCall, tenantHandle } from './store-call.js';
import { parseNewTenant, requireExistingTenant } from './known-tenant.js';
import type { AuditAction } from '../core/audit-actions.js';

/**
 * `Plane.halt`: throws (or re-throws) a halt, on a tenant that exists or that `newTenant` says is
 * new (rules.md#l95: otherwise `NOT_FOUND`, nothing written). The audit row goes first, so a halt that stands has
 * always been recorded; if the append fails, the fault propagates and the halt row is untouched.
 * The halt it replaces, if any, is the one read just before; a re-throw racing this one may be the
 * true predecessor, and its own audit row records it.
 */
export async function halt(context: PlaneContext, input: HaltInput): Promise<HaltResult> {
  const request = requireObject('request', input);
  const tenant = requireCustomerTenant('tenant', request.tenant);
  const scope = parseScope(request.scope);
  const reason = requireReason(request.reason);
  const by = parseOperator(request.by, 'by');
  const atMs = instantOf(context, request.atMs);
  const newTenant = parseNewTenant(request.newTenant);
  // A subject halt reaches running work whatever it says (docs/design/rules.md#l47): only the
  // other scopes store the choice.
  const asked = request.reachesRunning === undefined ? false : requireBoolean('reachesRunning', request.reachesRunning);
  const reachesRunning = asked && scope.kind !== 'subject';
  const key = haltScopeKey(scope);

  await requireExistingTenant(context.store, tenant, 'halt', newTenant);
  const handle = tenantHandle(context.store, tenant);
  const standing = await storeCall('halts', () => handle.halts());
  const replaced = standing.find((row) => haltScopeKey(row.scope) === key) ?? null;
  await storeCall('appendAudit', () =>
    handle.appendAudit({
      atMs,
      by,
      action: 'halt' satisfies AuditAction,
      subject: key,
      detail: { reason, ...(reachesRunning ? { reachesRunning } : {}), replaced: replaced === null ? null : haltDetail(replaced) },
    }),
  );
  const thrown: Halt = reachesRunning ? { scope, reason, by, atMs, reachesRunning } : { scope, reason, by, atMs };
  await storeCall('setHalt', () => handle.setHalt(thrown));
  const running = await runningInScope(handle, scope);
  return { scope: key, reason, by, atMs, reach: haltReach(thrown), reachesRunning: haltReachesRunning(thrown), running };
}

/**
 * `Plane.lift`: journaled first, then compare-and-delete (docs/design/rules.md#c28, #c29;
 * docs/design/decisions.md "Lifting is journaled first, and everything an operator does is
 * audited"), on a tenant that exists (docs/design/rules.md#l95: otherwise `NOT_FOUND`, nothing
 * written). Deleting only the row as read means a halt re-thrown between the read and the delete
 * stays standing instead of vanishing under an audit row that names the older halt.
 */
export async function lift(context: PlaneContext, input: LiftInput): Promise<LiftResult> {
  const request = requireObject('request', input);
  const tenant = requireTenant('tenant', request.tenant);
  const scope = parseScope(request.scope);
  const by = parseOperator(request.by, 'by');
  const atMs = instantOf(context, request.atMs);
  const key = haltScopeKey(scope);

  await requireExistingTenant(context.store, tenant, 'lift', false);
  const handle = tenantHandle(context.store, tenant);
  const standing = (await storeCall('halts', () => handle.halts())).find((row) => haltScopeKey(row.scope) === key);
  if (standing === undefined) return { wasStanding: false, removed: false };
  await storeCall('appendAudit', () =>
    handle.appendAudit({ atMs, by, action: 'lift' satisfies AuditAction, subject: key, detail: haltDetail(standing) }),
  );
  const removed = await storeCall('liftHaltIf', () => handle.liftHaltIf(standing, { atMs, by }));
  return { wasStanding: true, removed };
}

/** `Plane.halts`: the tenant's standing halts in one read. */
export async function halts(context: PlaneContext, tenant: unknown): Promise<Halt[]> {
  const id = requireTenant('tenant', tenant);
  return storeCall('halts', () => tenantHandle(context.store, id).halts());
}

// The audit detail that names a halt: what a `halt list --lifted` shows as the halt a lift ended.
function haltDetail(row: Halt): Record<string, unknown> {
  return {
    reason: row.reason,
    thrownBy: row.by.actor,
    thrownBasis: row.by.basis,
    thrownAtMs: row.atMs,
    ...(row.reachesRunning === true ? { reachesRunning: true } : {}),
  };
}
