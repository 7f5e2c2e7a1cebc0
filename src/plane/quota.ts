import { requireCustomerTenant, requireTenant } from '../core/identifiers.js';
import { parseOperator, type Operator } from '../core/operator.js';
import { parseQuota, type TenantQuota } from '../core/quota.js';
import { applyQuotaPatch } from '../core/quota-patch.js';
import { type PlaneContext, instantOf } from './plane-context.js';
import { storeCall, tenantHandle } from './store-call.js';
import type { AuditAction } from '../core/audit-actions.js';

/** Who a quota change is attributed to when the library caller names nobody. */
export const LIBRARY_OPERATOR: Operator = Object.freeze({ actor: 'library', basis: 'asserted' });

/**
 * `Plane.setQuota`: validates the quota, then replaces it and appends the `quota.set` audit row in
 * the store's one transaction. The old quota in the audit detail is read just before, in its own
 * read: two changes racing each other can both name the same predecessor, but neither is lost,
 * because each row carries its full new quota.
 */
export async function setQuota(
  context: PlaneContext,
  tenant: unknown,
  quota: unknown,
  by: unknown,
): Promise<TenantQuota> {
  const id = requireCustomerTenant('tenant', tenant);
  const next = parseQuota(quota, 'quota');
  const operator = by === undefined ? LIBRARY_OPERATOR : parseOperator(by, 'by');
  const atMs = instantOf(context, undefined);

  const handle = tenantHandle(context.store, id);
  const previous = await storeCall('getQuota', () => handle.getQuota());
  await storeCall('setQuota', () =>
    handle.setQuota(next, {
      atMs,
      by: operator,
      action: 'quota.set' satisfies AuditAction,
      subject: 'quota',
      detail: { old: previous, new: next },
    }),
  );
  return next;
}

/** `Plane.getQuota`: the stored quota or `null`. */
export async function getQuota(context: PlaneContext, tenant: unknown): Promise<TenantQuota | null> {
  const id = requireTenant('tenant', tenant);
  return storeCall('getQuota', () => tenantHandle(context.store, id).getQuota());
}

/**
 * `Plane.updateQuota`: applies a JSON Merge Patch (`core/quota-patch.ts`) to
 * the stored quota and stores the result, audited as `quota.update` with `{ old, new, patch }`.
 * The stored quota is read just before the write, in its own read, as `setQuota` does: a patch
 * racing another change of the same tenant's quota is applied to what it read (the audit log shows
 * both, each with its full before and after).
 */
export async function updateQuota(
  context: PlaneContext,
  tenant: unknown,
  patch: unknown,
  by: unknown,
): Promise<TenantQuota> {
  const id = requireCustomerTenant('tenant', tenant);
  const operator = by === undefined ? LIBRARY_OPERATOR : parseOperator(by, 'by');
  const handle = tenantHandle(context.store, id);
  const previous = await storeCall('getQuota', () => handle.getQuota());
  const next = applyQuotaPatch(previous, patch, 'patch');
  const atMs = instantOf(context, undefined);
  await storeCall('setQuota', () =>
    handle.setQuota(next, {
      atMs,
      by: operator,
      action: 'quota.update' satisfies AuditAction,
      subject: 'quota',
      detail: { old: previous, new: next, patch: patch as Record<string, unknown> },
    }),
  );
  return next;
}
