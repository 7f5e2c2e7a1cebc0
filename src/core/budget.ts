import { describe, MAX_AMOUNT, requireAmount, sumOverflowError } from './amounts.js';
import { invalidArgument } from './errors.js';
import { boundsSpend, type TenantQuota } from './quota.js';
import type { Spend } from './spend.js';

/**
 * One run's own ceilings (docs/concepts/glossary.md, "budget"), each optional:
 * - `maxTokens`, `maxMinorUnits`: what the whole run may cost;
 * - `maxCallTokens`, `maxCallMinorUnits`: what one model or tool call may cost.
 * A run under a quota that bounds a unit must declare both fields of that unit
 * (docs/design/rules.md#d5).
 */
export interface Budget {
  readonly maxTokens?: number;
  readonly maxMinorUnits?: number;
  readonly maxCallTokens?: number;
  readonly maxCallMinorUnits?: number;
}

/** A spend unit as refusal messages name it. */
export type SpendUnit = 'tokens' | 'minor units';

/** The budget field a run must declare before a bounded unit can be reserved. */
export type BudgetField = 'maxTokens' | 'maxCallTokens' | 'maxMinorUnits' | 'maxCallMinorUnits';

/**
 * The outcome of the hold formula (docs/design/rules.md#d4, #d5):
 * - `{ ok: true, hold: null }`: the quota bounds no spend, so no hold is taken;
 * - `{ ok: true, hold }`: reserve `ceiling + width × per-call bound` per bounded unit, 0 for an unbounded one;
 * - `{ ok: false, unit, field }`: the quota bounds `unit` but the budget leaves `field` open.
 */
export type HoldOutcome =
  | { readonly ok: true; readonly hold: Spend | null }
  | { readonly ok: false; readonly unit: SpendUnit; readonly field: BudgetField };

// `ceiling + width × perCall` exactly, or INVALID_ARGUMENT naming `budget.<ceiling>` when it would
// pass the largest amount (never saturated; docs/design/rules.md#p7-2).
function holdOf(ceilingField: BudgetField, ceiling: number, perCallField: BudgetField, perCall: number, width: number): number {
  const product = BigInt(width) * BigInt(perCall);
  const exact = BigInt(ceiling) + product;
  if (exact > BigInt(MAX_AMOUNT)) {
    throw sumOverflowError(`budget.${ceilingField}`, `the hold ${ceilingField} + width × ${perCallField}`, ceiling, product);
  }
  return Number(exact);
}

/**
 * The hold formula (docs/design/rules.md#d4, #l6): for each unit the quota bounds,
 * `ceiling + width × perCall`, computed exactly; a hold beyond `MAX_AMOUNT` throws
 * `INVALID_ARGUMENT` naming `budget.maxTokens` or `budget.maxMinorUnits` (never saturated;
 * docs/design/rules.md#p7-2). Tokens are evaluated before minor units, so the first missing field
 * reported is a token field. `width` is how many steps the run may have in flight; width 0 holds
 * just the ceiling.
 */
export function holdFor(quota: TenantQuota, budget: Budget, width: number): HoldOutcome {
  if (!boundsSpend(quota)) return { ok: true, hold: null };
  let tokens = 0;
  if (quota.maxTokensPerPeriod !== undefined) {
    if (budget.maxTokens === undefined) return { ok: false, unit: 'tokens', field: 'maxTokens' };
    if (budget.maxCallTokens === undefined) return { ok: false, unit: 'tokens', field: 'maxCallTokens' };
    tokens = holdOf('maxTokens', budget.maxTokens, 'maxCallTokens', budget.maxCallTokens, width);
  }
  let minorUnits = 0;
  if (quota.maxMinorUnitsPerPeriod !== undefined) {
    if (budget.maxMinorUnits === undefined) return { ok: false, unit: 'minor units', field: 'maxMinorUnits' };
    if (budget.maxCallMinorUnits === undefined) {
      return { ok: false, unit: 'minor units', field: 'maxCallMinorUnits' };
    }
    minorUnits = holdOf('maxMinorUnits', budget.maxMinorUnits, 'maxCallMinorUnits', budget.maxCallMinorUnits, width);
  }
  return { ok: true, hold: { tokens, minorUnits } };
}

const BUDGET_FIELDS: readonly BudgetField[] = ['maxTokens', 'maxCallTokens', 'maxMinorUnits', 'maxCallMinorUnits'];

/**
 * Validates an untrusted budget. Throws `INVALID_ARGUMENT` naming the field for unknown fields or
 * a value that is not a non-negative safe integer. `null` and absent both mean "not declared".
 */
export function parseBudget(value: unknown, field = 'budget'): Budget {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidArgument(field, `must be an object, got ${describe(value)}`);
  }
  const record = value as Record<string, unknown>;
  const budget: { -readonly [K in BudgetField]?: number } = {};
  for (const key of Object.keys(record)) {
    if (!BUDGET_FIELDS.includes(key as BudgetField)) {
      throw invalidArgument(`${field}.${key}`, `is not a budget field; use ${BUDGET_FIELDS.join(', ')}`);
    }
    const raw = record[key];
    if (raw !== undefined && raw !== null) budget[key as BudgetField] = requireAmount(`${field}.${key}`, raw);
  }
  return budget;
}
