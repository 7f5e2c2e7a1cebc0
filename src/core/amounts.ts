import { invalidArgument } from './errors.js';

/**
 * The largest amount quotaplane stores: `Number.MAX_SAFE_INTEGER` (2^53 − 1). Sums and products
 * saturate here instead of losing precision (DESIGN.md decision 2).
 */
export const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;

/** `a + b` for non-negative safe integers, saturating at {@link MAX_AMOUNT}. */
export function saturatingAdd(a: number, b: number): number {
  const sum = a + b;
  return sum > MAX_AMOUNT ? MAX_AMOUNT : sum;
}

/** `a × b` for non-negative safe integers, saturating at {@link MAX_AMOUNT}. */
export function saturatingMul(a: number, b: number): number {
  if (a === 0 || b === 0) return 0;
  return a > MAX_AMOUNT / b ? MAX_AMOUNT : a * b;
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
 * `INVALID_ARGUMENT` naming `field`. DESIGN.md decision 2.
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
  return typeof value;
}
