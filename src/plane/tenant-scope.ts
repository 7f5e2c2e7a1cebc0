import { requireTenant } from '../core/identifiers.js';
import type { PlaneContext } from './plane-context.js';
import { storeCall } from './store-call.js';

/**
 * The tenants an operator verb covers: the one named (validated), or every tenant the store has
 * rows of (`QuotaStore.tenants()`, byte order) when `tenant` is absent.
 */
export async function tenantsInScope(context: PlaneContext, tenant: unknown): Promise<string[]> {
  if (tenant !== undefined) return [requireTenant('tenant', tenant)];
  return storeCall('tenants', () => context.store.tenants());
}
