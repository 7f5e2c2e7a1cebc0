import { QuotaError } from '../../core/errors.js';
import { parseStoredQuota, type TenantQuota } from '../../core/quota.js';

/*
 * Decoders for what only SQLite stores this way: the quota as JSON text. The row decoders both
 * adapters share (runs, audit rows, run ids, amounts) are in `../rows.ts`.
 */

/** A stored quota, validated with `parseStoredQuota` like any untrusted input. */
export function decodeQuota(tenant: string, quotaJson: string): TenantQuota {
  try {
    return parseStoredQuota(JSON.parse(quotaJson));
  } catch (error) {
    throw new QuotaError('STORE_CORRUPT', `tenant '${tenant}' has a stored quota that cannot be read; set it again`, {
      details: { tenant },
      cause: error,
    });
  }
}
