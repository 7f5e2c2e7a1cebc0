import { invalidArgument } from './errors.js';

/**
 * The largest amount quotaplane stores: `Number.MAX_SAFE_INTEGER` (2^53 − 1). No sum on the books
 * may pass it: {@link requireSumFits} refuses instead (docs/design/decisions.md "Amounts are safe
 * integers, and nothing saturates"; docs/design/rules.md#p7). The saturating helpers below are for
 * instants (lease expiry) and for display, never for the books.
 */
export const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;

/** `a + b` for non-negative safe integers, saturating at {@link MAX_AMOUNT}. */
export function saturatingAdd(a: number, b: number): number {
  const sum = a + b;
  return sum > MAX_AMOUNT ? MAX_AMOUNT : sum;
}

/**
 * The `INVALID_ARGUMENT` fault of an amount on the books that would pass {@link MAX_AMOUNT}: `field`
 * is the input that would carry it there (`spend.tokens`, `hold.minorUnits`, `budget.maxTokens`),
 * `what` names the figure (`the settled spend of period 2026-03`), `total` and `adding` are the
 * figure and what would be added to it (exact, as decimal strings or numbers). Case P7 in
 * docs/design/rules.md.
 */
export function sumOverflowError(field: string, what: string, total: number | string | bigint, adding: number | string | bigint) {
  const result = BigInt(total) + BigInt(adding);
  return invalidArgument(
    field,
    `would take ${what} to ${result}, beyond the largest amount ${MAX_AMOUNT} (2^53 − 1); nothing was written. ` +
      `Amounts on the books never saturate or wrap: split the work or use a coarser unit`,
  );
}

/**
 * Refuses (throws {@link sumOverflowError}) when `total + adding` would pass {@link MAX_AMOUNT}.
 * Both must be amounts: their float sum is exact up to 2^53 and at least 2^53 beyond it, so the
 * comparison is exact. Case P7 in docs/design/rules.md.
 */
export function requireSumFits(field: string, what: string, total: number, adding: number): void {
  if (total + adding > MAX_AMOUNT) throw sumOverflowError(field, what, total, adding);
}

/** `a − b` floored at 0. */
export function flooredSub(a: number, b: number): number {
  return a > b ? a - b : 0;
}

/** True for an integer in `0 … MAX_AMOUNT`. */
export function isAmount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Returns `value` when it is an amount (a non-negative safe integer), otherwise throws
 * `INVALID_ARGUMENT` naming `field`. Case P7 in docs/design/rules.md.
 */
export function requireAmount(field: string, value: unknown): number {
  if (!isAmount(value)) {
    throw invalidArgument(
      field,
      `must be a non-negative integer no larger than ${MAX_AMOUNT}, got ${describe(value)}`,
    );
  }
  return value;
}

/** Short, safe rendering of an untrusted value for error messages. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) {
    return String(value);
  }
  if (Array.isArray(value)) return `an array of ${value.length}`;
  return typeof value;
}
