import type { SpendUnit } from './budget.js';
import type { TenantQuota } from './quota.js';
import type { SpentOutRefusal } from './refusal.js';
import type { Spend } from './spend.js';

/** Input of {@link checkSpend}: the period's settled and reserved totals and what a new run asks to hold. */
export interface SpendCheck {
  readonly tenant: string;
  readonly period: string;
  readonly quota: TenantQuota;
  readonly settled: Spend;
  readonly reserved: Spend;
  readonly requested: Spend;
}

/**
 * The spend check (docs/design/rules.md#d1–#d3): tokens first, then minor units; for each unit with
 * a ceiling, refuse when `settled + reserved + requested` (never wrapping) is strictly greater than
 * the ceiling. An exact fill is admitted. Returns the `SpentOut` refusal for the first unit that
 * does not fit, or `null`. Called by every store inside the transaction that inserts the hold.
 */
export function checkSpend(input: SpendCheck): SpentOutRefusal | null {
  const units: [SpendUnit, keyof Spend, number | undefined][] = [
    ['tokens', 'tokens', input.quota.maxTokensPerPeriod],
    ['minor units', 'minorUnits', input.quota.maxMinorUnitsPerPeriod],
  ];
  for (const [unit, key, limit] of units) {
    if (limit === undefined) continue;
    // Every term is at most 2^53 − 1, so the float sum is exact up to 2^53 and rounds to at
    // least 2^53 beyond it: it is never at or below a valid limit when the true sum is above.
    // So a sum past the largest amount refuses rather than wraps (docs/design/rules.md#d3).
    const total = input.settled[key] + input.reserved[key] + input.requested[key];
    if (total > limit) {
      return {
        code: 'SpentOut',
        tenant: input.tenant,
        period: input.period,
        unit,
        settled: input.settled[key],
        reserved: input.reserved[key],
        requested: input.requested[key],
        limit,
        bound: 'tenant',
      };
    }
  }
  return null;
}
