import { describe } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';
import { requireCustomerTenant } from '../core/identifiers.js';
import { unknownTenantOf } from '../core/known-tenant.js';
import { parseOperator } from '../core/operator.js';
import { requireObject } from '../store/store-arguments.js';
import { requireExistingTenant } from './known-tenant.js';
import type { DeleteTenantAnswer, DeleteTenantInput } from './operator-types.js';
import { instantOf, type PlaneContext } from './plane-context.js';
import { requireCapability, storeCall, tenantHandle } from './store-call.js';

/**
 * `Plane.deleteTenant` (docs/design/rules.md#l95-4–#l95-7): a tenant that does not exist is refused
 * `NOT_FOUND` first, naming the nearest known one; quotaplane's own chains (`quotaplane:…`) are no
 * tenant to delete (`INVALID_ARGUMENT`). The store then deletes in one transaction, refusing
 * `CONFLICT` while anything of the tenant still acts or holds spend, and `NOT_FOUND` when another
 * deletion went first since the check (answered here as the check would, with its suggestion). A
 * store without the capability is refused `STORE_MISCONFIGURED`.
 */
export async function deleteTenant(context: PlaneContext, input: DeleteTenantInput): Promise<DeleteTenantAnswer> {
  const request = requireObject('request', input);
  const tenant = requireCustomerTenant('tenant', request.tenant);
  const by = parseOperator(request.by, 'by');
  if (typeof request.reason !== 'string' || request.reason.trim().length === 0) {
    throw invalidArgument('reason', `is required: say why the tenant is deleted (it is kept in its audit chain), got ${describe(request.reason)}`);
  }
  const reason = request.reason;
  const atMs = instantOf(context, request.atMs);
  await requireExistingTenant(context.store, tenant, 'delete', false);
  const handle = requireCapability(tenantHandle(context.store, tenant), context.store.backend, ['deleteTenant'], 'tenant deletion', 'delete tenants', {
    capability: 'deleteTenant',
  });
  let outcome;
  try {
    outcome = await storeCall('deleteTenant', () => handle.deleteTenant({ atMs, by, reason }));
  } catch (error) {
    if (unknownTenantOf(error) !== null) await requireExistingTenant(context.store, tenant, 'delete', false);
    throw error;
  }
  return { tenant, audit: outcome.audit, keysDeleted: outcome.keys };
}
