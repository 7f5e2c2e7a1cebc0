import { QuotaError } from '../../core/errors.js';
import { parseStoredQuota, type TenantQuota } from '../../core/quota.js';

/*
 * Decoders for what only PostgreSQL stores this way: JSONB quotas. The
 * row decoders both adapters share (runs, audit rows, run ids, amounts) are in `../rows.ts`.
 */

/** A stored quota (JSONB, already parsed by `pg`), validated with `parseStoredQuota` like any untrusted input. */
export function decodeQuota(tenant: string, quotaJson: unknown): TenantQuota {
  try {
    return parseStoredQuota(quotaJson);
  } catch (error) {
    throw new QuotaError('STORE_CORRUPT', `tenant '${tenant}' has a stored quota that cannot be read; set it again`, {
      details: { tenant },
      cause: error,
    });
  }
}
