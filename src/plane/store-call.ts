import { QuotaError } from '../core/errors.js';
import type { QuotaStore, TenantStore } from '../store/store.js';

/**
 * Runs one store call and lets its fault through as a `QuotaError`. Adapters already translate
 * their driver errors; anything else that escapes a store (a third-party adapter, a driver error
 * nobody classified) becomes `STORE_UNAVAILABLE` with the original as `cause`, so the caller fails
 * closed instead of treating an unknown failure as an answer (DESIGN.md decision 12). Nothing here
 * catches a fault to carry on: every error is rethrown.
 */
export async function storeCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw asStoreFault(what, error);
  }
}

/** `store.tenant(tenant)` under the same rule as {@link storeCall}; `tenant` is already validated. */
export function tenantHandle(store: QuotaStore, tenant: string): TenantStore {
  try {
    return store.tenant(tenant);
  } catch (error) {
    throw asStoreFault('tenant', error);
  }
}

function asStoreFault(what: string, error: unknown): QuotaError {
  if (error instanceof QuotaError) return error;
  const text = error instanceof Error ? error.message : String(error);
  return new QuotaError(
    'STORE_UNAVAILABLE',
    `the quota store could not answer ${what} (${text}); nothing was decided on a guess, retry later`,
    { details: { operation: what }, cause: error },
  );
}
