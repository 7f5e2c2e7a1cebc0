import { QuotaError } from '../core/errors.js';
import type { QuotaStore, TenantStore } from '../store/store.js';

/**
 * Runs one store call and lets its fault through as a `QuotaError`. Adapters already translate
 * their driver errors; anything else that escapes a store (a third-party adapter, a driver error
 * nobody classified) becomes `STORE_UNAVAILABLE` with the original as `cause`, so the caller fails
 * closed instead of treating an unknown failure as an answer (docs/design/decisions.md "Fail
 * closed"). Nothing here catches a fault to carry on: every error is rethrown.
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

/**
 * `error` with the admission's run id added, when it is a fault whose outcome is unknown
 * (`STORE_UNAVAILABLE` with `details.outcome = 'unknown'`: the store sent the decision, and it may
 * stand). The retry that learns the outcome must name the same run, which a caller who let the
 * plane make the id does not know: `details.run` and the message name it. Any other error, or one
 * that names its run already, is answered as it is.
 */
export function namingUnknownRun(error: unknown, run: string): unknown {
  if (!(error instanceof QuotaError) || error.details.outcome !== 'unknown' || error.details.run !== undefined) return error;
  return new QuotaError(error.code, `${error.message}; this admission's run id is '${run}'`, {
    details: { ...error.details, run },
    cause: error.cause,
  });
}

/**
 * `holder` with `methods` present, or the `STORE_MISCONFIGURED` fault of a third-party store that
 * lacks an optional capability: `the <backend> store keeps no <what>, so it cannot <act>; use the
 * sqlite or postgres store`, with `details` `{ backend, ...details }`. Both built-in adapters have
 * every capability.
 */
export function requireCapability<T extends object, K extends keyof T & string>(
  holder: T,
  backend: string,
  methods: readonly K[],
  what: string,
  act: string,
  details: Readonly<Record<string, unknown>> = {},
): T & Required<Pick<T, K>> {
  if (methods.every((method) => holder[method] !== undefined)) return holder as T & Required<Pick<T, K>>;
  throw new QuotaError('STORE_MISCONFIGURED', `the ${backend} store keeps no ${what}, so it cannot ${act}; use the sqlite or postgres store`, {
    details: { backend, ...details },
  });
}
