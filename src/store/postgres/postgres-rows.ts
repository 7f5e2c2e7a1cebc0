import { QuotaError } from '../../core/errors.js';
import { parseStoredQuota, type TenantQuota } from '../../core/quota.js';
import type { Spend } from '../../core/spend.js';
import { decodeSpend } from '../rows.js';

/*
 * Decoders for what only PostgreSQL stores this way: JSONB quotas and nullable amount pairs. The
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

/** A hold from two nullable amount columns: `null` when the run holds none (both columns null). */
export function decodeOptionalSpend(tenant: string, what: string, tokens: unknown, minorUnits: unknown): Spend | null {
  if (tokens === null || tokens === undefined) return null;
  return decodeSpend(tenant, what, tokens, minorUnits);
}
