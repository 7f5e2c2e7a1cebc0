import type { TenantQuota } from './quota.js';
import type { TooManyRunsRefusal } from './refusal.js';

/**
 * What a reserving transaction has read about the run and the tenant before deciding, in the
 * deciding transaction.
 */
export interface SlotSnapshot {
  /** The run already holds a slot (a retried reserve). */
  readonly slotHeld: boolean;
  /** The tenant's slot count, the figure the decision is made from. */
  readonly running: number;
}

/**
 * The concurrency half of `reserve` (docs/design/rules.md#c1, #c2, #c4): a run without a slot is
 * refused `TooManyRuns` when the ceiling is set and `running ≥ ceiling`. A run that already holds a
 * slot is never counted against the ceiling. Compared once, after counting, so a ceiling of 0
 * refuses every new run. Returns `null` when the run may take (or keep) its slot.
 */
export function concurrencyRefusal(tenant: string, quota: TenantQuota, snapshot: SlotSnapshot): TooManyRunsRefusal | null {
  const limit = quota.maxConcurrentRuns;
  if (snapshot.slotHeld || limit === undefined || snapshot.running < limit) return null;
  return { code: 'TooManyRuns', tenant, running: snapshot.running, limit, bound: 'tenant' };
}
