import { requireAmount, saturatingAdd } from './amounts.js';

/**
 * Spend in both units quotaplane bounds: `tokens` and `minorUnits` (money in the deployment's minor
 * unit, for example micro-USD). Both are non-negative safe integers (docs/concepts/glossary.md,
 * "spend").
 */
export interface Spend {
  readonly tokens: number;
  readonly minorUnits: number;
}

/** The spend of nothing. */
export const ZERO_SPEND: Spend = Object.freeze({ tokens: 0, minorUnits: 0 });

/**
 * Unit-wise `a + b`, each unit saturating at `MAX_AMOUNT` (2^53 − 1). For totals shown to a person
 * (replay reports); spend that goes onto the books is checked with `requireSumFits` instead and
 * never saturates (docs/design/rules.md#p7).
 */
export function addSpend(a: Spend, b: Spend): Spend {
  return { tokens: saturatingAdd(a.tokens, b.tokens), minorUnits: saturatingAdd(a.minorUnits, b.minorUnits) };
}

/** True when both units are equal. */
export function spendEquals(a: Spend, b: Spend): boolean {
  return a.tokens === b.tokens && a.minorUnits === b.minorUnits;
}

/**
 * Validates an untrusted spend. Throws `INVALID_ARGUMENT` naming `field.tokens` or
 * `field.minorUnits` when a unit is not a non-negative safe integer.
 */
export function requireSpend(field: string, value: unknown): Spend {
  const record = (value ?? {}) as Record<string, unknown>;
  return {
    tokens: requireAmount(`${field}.tokens`, record.tokens),
    minorUnits: requireAmount(`${field}.minorUnits`, record.minorUnits),
  };
}
