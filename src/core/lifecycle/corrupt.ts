import { QuotaError } from '../errors.js';

/** `STORE_CORRUPT` naming the tenant and what could not be read; nothing is acted on. */
export function corrupt(tenant: string, what: string, details: Record<string, unknown> = {}): QuotaError {
  return new QuotaError(
    'STORE_CORRUPT',
    `tenant '${tenant}' has ${what}; the store refuses rather than act on a row it cannot read`,
    { details: { tenant, ...details } },
  );
}
