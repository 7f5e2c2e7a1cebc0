import { isReservedTenant } from '../core/identifiers.js';
import { actCreatesTenant, unknownTenantError, type TenantAct } from '../core/known-tenant.js';
import { storeHasTenant } from '../store/known-tenants.js';
import type { QuotaStore } from '../store/store.js';
import { requireBoolean } from '../store/store-arguments.js';
import { storeCall } from './store-call.js';

/**
 * The `newTenant` option of an act that may create its tenant (`halt`, `setQuota`,
 * `updateQuota`, `keys.create`): `true` when the caller means a tenant that does not exist yet;
 * absent is `false`. Throws `INVALID_ARGUMENT` naming `newTenant` for anything but a boolean.
 */
export function parseNewTenant(value: unknown): boolean {
  return value === undefined ? false : requireBoolean('newTenant', value);
}

/**
 * Refuses `act` on `tenant` when the tenant does not exist (rules.md#l95): the store holds no
 * record of it (`hasTenant`), and the caller did not say it is new (`newTenant`, which only an act
 * that creates the tenant heeds: a lift or a release has nothing to end there). Throws the
 * `NOT_FOUND` of `unknownTenantError`, naming the tenant and the nearest known customer tenant;
 * it is thrown before the act writes anything, so a refused act leaves no trace. `tenant` is
 * already validated. A tenant created between this read and the act's own write is simply used.
 */
export async function requireExistingTenant(store: QuotaStore, tenant: string, act: TenantAct, newTenant: boolean): Promise<void> {
  if (newTenant && actCreatesTenant(act)) return;
  if (await storeCall('hasTenant', () => storeHasTenant(store, tenant))) return;
  const known = await storeCall('tenants', () => store.tenants());
  throw unknownTenantError(
    tenant,
    known.filter((name) => !isReservedTenant(name)),
    act,
  );
}
