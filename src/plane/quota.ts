import { requireCustomerTenant, requireTenant } from '../core/identifiers.js';
import { parseOperator, type Operator } from '../core/operator.js';
import { parseQuota, type TenantQuota } from '../core/quota.js';
import { applyQuotaPatch } from '../core/quota-patch.js';
import { type PlaneContext, instantOf } from './plane-context.js';
import { storeCall, tenantHandle } from './store-call.js';
import type { AuditAction } from '../core/audit-actions.js';
import { parseNewTenant, requireExistingTenant } from './known-tenant.js';
import { requireRequest } from './plane-input.js';

/** Who a quota change is attributed to when the library caller names nobody. */
export const LIBRARY_OPERATOR: Operator = Object.freeze({ actor: 'library', basis: 'asserted' });

const CHANGE_OPTIONS: ReadonlySet<string> = new Set(['by', 'newTenant']);

/**
 * The operator and `newTenant` of a quota change from its third argument (`Plane.setQuota`): absent
 * (the library operator), an operator (`{ actor, basis }`), or `QuotaChangeOptions` (`{ by,
 * newTenant }`, told apart by having neither `actor` nor `basis`). Throws `INVALID_ARGUMENT` naming
 * `by`, `newTenant` or a member that is no option.
 */
function changeOptionsOf(value: unknown): { by: Operator; newTenant: boolean } {
  if (value === undefined) return { by: LIBRARY_OPERATOR, newTenant: false };
  if (typeof value !== 'object' || value === null || 'actor' in value || 'basis' in value) return { by: parseOperator(value, 'by'), newTenant: false };
  const options = requireRequest(value, CHANGE_OPTIONS);
  return { by: options.by === undefined ? LIBRARY_OPERATOR : parseOperator(options.by, 'by'), newTenant: parseNewTenant(options.newTenant) };
}

/**
 * `Plane.setQuota`: validates the quota, refuses a tenant that does not exist unless
 * `newTenant` (rules.md#l95), then replaces the quota and appends the `quota.set` audit
 * row in the store's one transaction. The old quota in the audit detail is read just before, in its
 * own read: two changes racing each other can both name the same predecessor, but neither is lost,
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
  const { by: operator, newTenant } = changeOptionsOf(by);
  const atMs = instantOf(context, undefined);

  await requireExistingTenant(context.store, id, 'quota', newTenant);
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
 * the stored quota and stores the result, audited as `quota.update` with `{ old, new, patch }`; a
 * tenant that does not exist is refused unless `newTenant` (docs/design/rules.md#l95). The stored
 * quota is read just before the write, in its own read, as `setQuota` does: a patch racing another
 * change of the same tenant's quota is applied to what it read (the audit log shows both, each
 * with its full before and after).
 */
export async function updateQuota(
  context: PlaneContext,
  tenant: unknown,
  patch: unknown,
  by: unknown,
): Promise<TenantQuota> {
  const id = requireCustomerTenant('tenant', tenant);
  const { by: operator, newTenant } = changeOptionsOf(by);
  await requireExistingTenant(context.store, id, 'quota', newTenant);
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
